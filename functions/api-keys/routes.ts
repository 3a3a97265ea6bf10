/** The API key routes (spec: /v1/api-keys, session only; revocation per the contract). */
import { z } from 'zod';
import { resource, route, SESSION_ONLY } from '../route-declaration.js';
import { PARTITION_PREFIXES } from '../table.js';
import { type CreateApiKeyBody, createApiKeySchema } from './request.js';

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds, e.g. 2026-11-21T10:00:00.000Z');

/** A key as listings show it: never the key itself. */
export const apiKeySchema = z.object({
  id: z.string().describe('key_ followed by a ULID'),
  prefix: z.string().describe("the key's first 16 characters (pdf_live_ and 7 more)"),
  name: z.string(),
  created_at: timestamp,
  last_used_at: timestamp.nullable().describe('null until first use; updated at most once a minute'),
  revoked_at: timestamp.nullable().describe('null while the key is active'),
});

export const createdApiKeySchema = apiKeySchema.extend({
  key: z
    .string()
    .describe('the full key, pdf_live_ and 40 characters: shown in this answer only, never again'),
});

const apiKey = { name: 'ApiKey', schema: apiKeySchema };

export const apiKeysResource = resource({
  name: 'api-keys',
  description: 'The api-keys API: create, list and revoke API keys (session only)',
  needs: {
    issuesApiKeys: true,
    // Key items (APIKEY#<digest>), the account's references to them and its key slots (ACCOUNT#).
    table: {
      actions: [
        'dynamodb:GetItem',
        'dynamodb:BatchGetItem',
        'dynamodb:Query',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:DeleteItem',
      ],
      partitions: [PARTITION_PREFIXES.account, PARTITION_PREFIXES.apiKey],
    },
  },
  routes: {
    createApiKey: route<CreateApiKeyBody>({
      method: 'POST',
      path: '/v1/api-keys',
      credentials: SESSION_ONLY,
      body: { schema: () => createApiKeySchema },
      summary: 'Create an API key; the answer is the only time the key is shown',
      success: {
        status: 201,
        description: 'the new key, with `key`',
        body: { name: 'CreatedApiKey', schema: createdApiKeySchema },
      },
      errors: ['VALIDATION_ERROR', 'API_KEY_LIMIT_REACHED'],
    }),
    listApiKeys: route({
      method: 'GET',
      path: '/v1/api-keys',
      credentials: SESSION_ONLY,
      summary: "The caller's API keys, newest first, revoked ones included (prefix only)",
      success: { status: 200, description: 'keys', body: { ...apiKey, array: true } },
      errors: [],
    }),
    revokeApiKey: route({
      method: 'DELETE',
      path: '/v1/api-keys/{key_id}',
      credentials: SESSION_ONLY,
      summary: 'Revoke an API key: refused from the next request on; revoking again changes nothing',
      success: { status: 200, description: 'the key, with revoked_at', body: apiKey },
      errors: ['API_KEY_NOT_FOUND'],
    }),
  },
});
