/**
 * API key authentication: a well-formed key is looked up by its keyed digest (HMAC-SHA256 with the
 * deployment's secret), never by the key itself. Revoked keys are refused on the very next request
 * (no caching of key records). `last_used_at` moves at most once a minute per key.
 */
import { createHmac } from 'node:crypto';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isoNow } from '../domain/clock.js';
import { apiKeyItemKey } from '../domain/keys.js';
import type { Principal } from '../domain/principal.js';
import type { ApiKeyResolver } from './auth.js';
import type { ApiKeySecretSource, AwsConfig } from './config.js';
import { logger } from './logger.js';

const LAST_USED_RESOLUTION_MS = 60_000;

/** The secret, fetched once per cold start (and again only if that fetch failed). */
const secretLoader = (source: ApiKeySecretSource, aws: AwsConfig): (() => Promise<string>) => {
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

export const createApiKeyResolver = (
  db: DynamoDBDocumentClient,
  tableName: string,
  source: ApiKeySecretSource,
  aws: AwsConfig,
): ApiKeyResolver => {
  const secret = secretLoader(source, aws);
  const digest = async (key: string) => apiKeyDigest(await secret(), key);

  return {
    async resolve(key: string): Promise<Principal | undefined> {
      const itemKey = apiKeyItemKey(await digest(key));
      const out = await db.send(new GetCommand({ TableName: tableName, Key: itemKey, ConsistentRead: true }));
      const item = out.Item;
      if (item?.type !== 'api_key' || item.revoked_at) return undefined;
      const now = Date.now();
      const lastUsed = typeof item.last_used_at === 'string' ? Date.parse(item.last_used_at) : 0;
      if (now - lastUsed >= LAST_USED_RESOLUTION_MS) {
        await db
          .send(
            new UpdateCommand({
              TableName: tableName,
              Key: itemKey,
              UpdateExpression: 'SET last_used_at = :now',
              ConditionExpression:
                'attribute_exists(PK) AND (attribute_not_exists(last_used_at) OR attribute_type(last_used_at, :null) OR last_used_at < :cutoff)',
              ExpressionAttributeValues: {
                ':null': 'NULL',
                ':now': isoNow(new Date(now)),
                ':cutoff': isoNow(new Date(now - LAST_USED_RESOLUTION_MS)),
              },
            }),
          )
          // Another request of the same minute got there first, or the write failed: the key
          // still authenticates; last_used_at is bookkeeping.
          .catch((e: unknown) => {
            if ((e as Error).name !== 'ConditionalCheckFailedException')
              logger.warn('last_used_at not updated', { error: e as Error });
          });
      }
      return {
        accountId: String(item.account_id),
        email: undefined,
        credential: 'apiKey',
        apiKeyId: String(item.id),
      };
    },
  };
};
