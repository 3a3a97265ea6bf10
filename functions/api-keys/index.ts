/**
 * The api-keys resource's Lambda: its routes (routes.ts) bound to one call each into the API key
 * use cases. It issues keys, so it holds the digest secret (`needs.issuesApiKeys`).
 */
import type { Environment } from '../core/config.js';
import { readResourceConfig } from '../core/config.js';
import { createResourceHandler, type LambdaHandler } from '../core/http.js';
import { createApiRuntime } from '../core/runtime.js';
import { createApiKeyManagement } from '../domain/api-key-management.js';
import { wiringOf } from '../route-declaration.js';
import { apiKeysResource } from './routes.js';

export const createHandler = (env: Environment): LambdaHandler => {
  const { apiKeys, digestApiKey, http } = createApiRuntime(
    readResourceConfig(wiringOf(apiKeysResource), env),
  );
  if (!digestApiKey) throw new Error('the api-keys resource needs the API key secret');
  const management = createApiKeyManagement({ store: apiKeys, digest: digestApiKey });

  return createResourceHandler(apiKeysResource, http(), {
    createApiKey: ({ principal, body }) => management.create(principal, body),
    listApiKeys: ({ principal }) => management.list(principal),
    revokeApiKey: ({ principal, pathParameters }) =>
      management.revoke(principal, pathParameters.key_id ?? ''),
  });
};
