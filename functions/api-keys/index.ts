/**
 * The api-keys resource's Lambda: its routes (routes.ts) bound to one call each into the API key
 * use cases. It issues keys, so it holds the digest secret (`needs.issuesApiKeys`).
 */
import type { Environment } from '../core/config.js';
import { readResourceConfig } from '../core/config.js';
import { createResourceHandler, type LambdaHandler } from '../core/http.js';
import { wiringOf } from '../route-declaration.js';
import { createServices } from '../services.js';
import { apiKeysResource } from './routes.js';

export const createHandler = (env: Environment): LambdaHandler => {
  const services = createServices(readResourceConfig(wiringOf(apiKeysResource), env));
  const management = services.apiKeyManagement();

  return createResourceHandler(apiKeysResource, services.http(), {
    createApiKey: ({ principal, body }) => management.create(principal, body),
    listApiKeys: ({ principal }) => management.list(principal),
    revokeApiKey: ({ principal, pathParameters }) =>
      management.revoke(principal, pathParameters.key_id ?? ''),
  });
};
