/**
 * API key authentication: a well-formed key is looked up by its keyed digest (HMAC-SHA256 with
 * the deployment's secret). The secret is read once per cold start: in the cloud from Secrets
 * Manager, locally from the configuration.
 */
import { createHmac } from 'node:crypto';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { ApiKeySecretSource, AwsConfig } from '../../core/config.js';
import type { ActiveApiKey, ApiKeyStore } from '../../domain/accounts/api-keys.js';

/** The secret, fetched once per cold start (and again only if that fetch failed). */
export const secretLoader = (source: ApiKeySecretSource, aws: AwsConfig): (() => Promise<string>) => {
  if (source.kind === 'value') return async () => source.value;
  let pending: Promise<string> | undefined;
  return () => {
    pending ??= new SecretsManagerClient({ region: aws.region })
      .send(new GetSecretValueCommand({ SecretId: source.secretId }))
      .then((out) => {
        if (!out.SecretString) throw new Error('the API key secret has no string value');
        return out.SecretString;
      })
      .catch((e: unknown) => {
        pending = undefined;
        throw e;
      });
    return pending;
  };
};

export const apiKeyDigest = (secret: string, key: string): string =>
  createHmac('sha256', secret).update(key).digest('hex');

/** Finds the active key behind a well-formed API key, or undefined when it is unknown or revoked. */
export type ApiKeyResolver = (key: string) => Promise<ActiveApiKey | undefined>;

/** When a well-formed API key was revoked, or undefined: asked only about a key that did not resolve. */
export type ApiKeyRevocation = (key: string) => Promise<string | undefined>;

/** The digest a key is stored and found under, with the deployment's secret (loaded once). */
export type ApiKeyDigester = (key: string) => Promise<string>;

export const createApiKeyDigester = (source: ApiKeySecretSource, aws: AwsConfig): ApiKeyDigester => {
  const secret = secretLoader(source, aws);
  return async (key) => apiKeyDigest(await secret(), key);
};

export const createApiKeyResolver =
  (store: ApiKeyStore, digest: ApiKeyDigester): ApiKeyResolver =>
  async (key) =>
    store.useByDigest(await digest(key));

export const createApiKeyRevocation =
  (store: ApiKeyStore, digest: ApiKeyDigester): ApiKeyRevocation =>
  async (key) =>
    store.revokedAt(await digest(key));
