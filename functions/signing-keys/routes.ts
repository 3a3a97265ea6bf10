/**
 * The signing-key routes (issue 34; session only, like API keys and webhooks): a key a render's
 * `signature` signs with, uploaded (PEM or PKCS#12, kept sealed) or held by AWS KMS. No answer
 * ever holds a private key or a passphrase.
 */
import { z } from 'zod';
import { resource, route, SESSION_ONLY } from '../route-declaration.js';
import { PARTITION_PREFIXES } from '../table.js';
import { type CreateSigningKeyBody, createSigningKeySchema } from './request.js';

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds, e.g. 2026-11-21T10:00:00.000Z');

export const signingKeySchema = z.object({
  id: z.string().describe('sk_ followed by a ULID: what a render names in signature.key_id'),
  name: z.string(),
  kind: z
    .enum(['uploaded', 'kms'])
    .describe('uploaded: a key kept sealed by the service; kms: an AWS KMS key'),
  algorithm: z.enum(['RSA', 'ECDSA']).describe('with SHA-256'),
  certificate_pem: z.string().describe("the signer's certificate, then its issuers (PEM)"),
  certificate_subject: z.string(),
  certificate_expires_at: timestamp,
  kms_key_arn: z.string().nullable(),
  created_at: timestamp,
});

const signingKey = { name: 'SigningKey', schema: signingKeySchema };

export const signingKeysResource = resource({
  name: 'signing-keys',
  description: 'The signing-keys API: keys that sign PDFs (PAdES B-B), uploaded or in AWS KMS (session only)',
  needs: {
    // Key items and their slots (SIGNKEY#, SIGNKEY_SLOTS), in the account's partition.
    table: {
      actions: [
        'dynamodb:GetItem',
        'dynamodb:Query',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:DeleteItem',
      ],
      partitions: [PARTITION_PREFIXES.account],
    },
    kmsSigningKeys: true,
  },
  routes: {
    createSigningKey: route<CreateSigningKeyBody>({
      method: 'POST',
      path: '/v1/signing-keys',
      credentials: SESSION_ONLY,
      body: { schema: () => createSigningKeySchema },
      summary: 'Register a signing key: its private key (uploaded) is kept sealed and never shown again',
      success: { status: 201, description: 'the key, without its private part', body: signingKey },
      errors: [
        'VALIDATION_ERROR',
        'INVALID_SIGNING_KEY',
        'SIGNING_KEY_PASSPHRASE_INCORRECT',
        'SIGNING_CERTIFICATE_EXPIRED',
        'SIGNING_KEY_LIMIT_REACHED',
      ],
    }),
    listSigningKeys: route({
      method: 'GET',
      path: '/v1/signing-keys',
      credentials: SESSION_ONLY,
      summary: "The caller's signing keys, newest first",
      success: { status: 200, description: 'keys', body: { ...signingKey, array: true } },
      errors: [],
    }),
    getSigningKey: route({
      method: 'GET',
      path: '/v1/signing-keys/{key_id}',
      credentials: SESSION_ONLY,
      summary: 'A signing key',
      success: { status: 200, description: 'the key', body: signingKey },
      errors: ['SIGNING_KEY_NOT_FOUND'],
    }),
    deleteSigningKey: route({
      method: 'DELETE',
      path: '/v1/signing-keys/{key_id}',
      credentials: SESSION_ONLY,
      summary: 'Delete a signing key: renders naming it are refused from now on',
      success: { status: 200, description: 'the key as it was', body: signingKey },
      errors: ['SIGNING_KEY_NOT_FOUND'],
    }),
  },
});
