/**
 * The api-keys resource's Lambda: its routes (routes.ts) bound to one call each into the API key
 * use cases. It issues keys, so it holds the digest secret (`needs.issuesApiKeys`).
 */
import type { Environment } from '../core/config.js';
import { readResourceConfig } from '../core/config.js';
import { createResourceHandler, type LambdaHandler } from '../core/http.js';
import { wiringOf } from '../route-declaration.js';
import * as build from '../services.js';
import { apiKeysResource } from './routes.js';

export const createHandler = (env: Environment): LambdaHandler => {
  const services = build.createServices(readResourceConfig(wiringOf(apiKeysResource), env));
  const management = services.get(build.apiKeyManagement);

  return createResourceHandler(apiKeysResource, services.get(build.http)(), {
    createApiKey: ({ principal, body }) => management.create(principal, body),
    listApiKeys: ({ principal }) => management.list(principal),
    revokeApiKey: ({ principal, pathParameters }) =>
      management.revoke(principal, pathParameters.key_id ?? ''),
  });
};
