/**
 * API key records, found by the keyed digest of the key (never by the key itself, which is not
 * stored). Revoked keys are refused on the very next request: records are not cached.
 * `last_used_at` moves at most once a minute per key.
 */
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isoNow } from './clock.js';
import { apiKeyItemKey, ENTITY, ITEM_EXISTS } from './keys.js';
import type { Clock } from './ports.js';

const LAST_USED_RESOLUTION_MS = 60_000;

export interface ActiveApiKey {
  readonly id: string;
  readonly accountId: string;
}

export const createApiKeyStore = (
  db: DynamoDBDocumentClient,
  tableName: string,
  clock: Clock,
  onFault: (message: string, error: unknown) => void,
) => ({
  /** The key with this digest, when it exists and is not revoked; marks it used. */
  async useByDigest(digest: string): Promise<ActiveApiKey | undefined> {
    const key = apiKeyItemKey(digest);
    const out = await db.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
    const item = out.Item;
    if (item?.type !== ENTITY.apiKey || item.revoked_at) return undefined;
    const now = clock.now().getTime();
    const lastUsed = typeof item.last_used_at === 'string' ? Date.parse(item.last_used_at) : 0;
    if (now - lastUsed >= LAST_USED_RESOLUTION_MS) {
      await db
        .send(
          new UpdateCommand({
            TableName: tableName,
            Key: key,
            UpdateExpression: 'SET last_used_at = :now',
            ConditionExpression: `${ITEM_EXISTS} AND (attribute_not_exists(last_used_at) OR attribute_type(last_used_at, :null) OR last_used_at < :cutoff)`,
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
          if ((e as Error).name !== 'ConditionalCheckFailedException') onFault('last_used_at not updated', e);
        });
    }
    return { id: String(item.id), accountId: String(item.account_id) };
  },
});

export type ApiKeyStore = ReturnType<typeof createApiKeyStore>;
