/**
 * What every API resource's Lambda builds once per cold start from its configuration: the
 * DynamoDB client, the clock, the stores, the authenticator and the HTTP stack's dependencies.
 * Whatever else a resource needs (S3, the renderer) it builds itself, in its own index.ts.
 */

import { createAccountStore } from '../adapters/dynamodb/accounts.js';
import { createApiKeyStore } from '../adapters/dynamodb/api-keys.js';
import { createDocumentClient } from '../adapters/dynamodb/client.js';
import { createApiKeyDigester, createApiKeyResolver } from '../adapters/secrets-manager/api-key-digest.js';
import type { Clock } from '../domain/ports.js';
import { createAuthenticator } from './auth.js';
import type { ResourceConfig } from './config.js';
import type { HttpDeps, RateLimitCounter } from './http.js';
import { logger } from './logger.js';

export const systemClock: Clock = { now: () => new Date() };

/** Logs a fault that is answered as something else (a failed job, a skipped bookkeeping write). */
export const logFault = (message: string, error: unknown): void =>
  logger.error(message, { error: error as Error });

const need = <T>(value: T | undefined, what: string): T => {
  if (value === undefined) throw new Error(`this resource is not wired with ${what}`);
  return value;
};

export const createApiRuntime = (config: ResourceConfig) => {
  const tableName = need(config.tableName, 'the table');
  const db = createDocumentClient(config.aws);
  const clock = systemClock;
  const accounts = createAccountStore(db, tableName, clock);
  const apiKeys = createApiKeyStore(db, tableName, clock, logFault);
  const digestApiKey = config.apiKeySecret
    ? createApiKeyDigester(config.apiKeySecret, config.aws)
    : undefined;
  const resolveApiKey = digestApiKey ? createApiKeyResolver(apiKeys, digestApiKey) : async () => undefined;
  const authenticate = createAuthenticator(need(config.auth, 'the user pool'), resolveApiKey, accounts);
  /** `rateLimit` takes the command of the resource's rate-limited route (one per resource). */
  const http = <C>(rateLimit?: RateLimitCounter<C>): HttpDeps => ({
    authenticate,
    settings: config.settings,
    ...(rateLimit ? { rateLimit: rateLimit as RateLimitCounter } : {}),
  });
  return { config, db, tableName, clock, accounts, apiKeys, digestApiKey, http };
};

export type ApiRuntime = ReturnType<typeof createApiRuntime>;
