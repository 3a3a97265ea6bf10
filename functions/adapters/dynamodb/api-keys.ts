/**
 * API key records. A key's record lives under its keyed digest (never the key itself, which is
 * not stored), so authenticating is one strongly consistent read; records are never cached, so
 * a revoked key is refused on the very next request. `last_used_at` moves at most once a minute.
 *
 * Three items per account, written without transactions (dynalite has none) in an order where
 * a failure part-way leaves nothing that works or counts:
 *
 *   slots   ACCOUNT#<a> / APIKEY_SLOTS  the ids of the active keys, a string set: a key is created
 *                                       only by adding its id while the set has fewer than the
 *                                       limit (one conditional write, exact under concurrency),
 *                                       and revoking removes it (idempotent)
 *   ref     ACCOUNT#<a> / APIKEY#<id>   id → digest: listing (newest first) and revoking by id
 *   record  APIKEY#<digest> / APIKEY    the key as the API shows it; written last, it is what
 *                                       makes the key exist
 *
 * Creating takes a slot, writes the ref, then the record; a failure gives the slot back. Should
 * giving it back fail too, the slot of an id with no record, or of a revoked key, is reclaimed
 * the next time the account reaches the limit (`reclaim`).
 */
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  type PutCommandInput,
  type QueryCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { decodeTime } from 'ulid';
import {
  type ActiveApiKey,
  type ApiKeyRecord,
  type ApiKeyStore,
  type CreateOutcome,
  type NewApiKey,
  newApiKeyRecord,
} from '../../domain/accounts/api-keys.js';
import { isoNow } from '../../domain/common/clock.js';
import type { Clock } from '../../domain/common/ports.js';
import { withinLimit } from './conditional.js';
import {
  API_KEY_REF_SK_PREFIX,
  apiKeyItemKey,
  apiKeyRefKey,
  apiKeyRefsPartition,
  apiKeySlotsKey,
  ENTITY,
  ITEM_ABSENT,
  ITEM_EXISTS,
  PK,
  SK,
} from './keys.js';
import { queryAll } from './pagination.js';

const LAST_USED_RESOLUTION_MS = 60_000;
/**
 * A slot whose key has no record yet may belong to a creation still in flight; one older than
 * this (far beyond any request's 30 s) was left by a creation that failed.
 */
const ABANDONED_SLOT_MS = 5 * 60_000;

const toRecord = (item: Record<string, unknown>): ApiKeyRecord => ({
  id: String(item.id),
  prefix: String(item.prefix),
  name: String(item.name),
  created_at: String(item.created_at),
  last_used_at: typeof item.last_used_at === 'string' ? item.last_used_at : null,
  revoked_at: typeof item.revoked_at === 'string' ? item.revoked_at : null,
});

const isConditionFailure = (e: unknown) => (e as Error).name === 'ConditionalCheckFailedException';

const idTime = (keyId: string): number | undefined => {
  try {
    return decodeTime(keyId.replace(/^key_/, ''));
  } catch {
    return undefined;
  }
};

/** Takes a slot for `keyId` while the account holds fewer than `limit`. */
export const takeApiKeySlotParams = (
  tableName: string,
  accountId: string,
  keyId: string,
  limit: number,
): UpdateCommandInput => {
  const slots = withinLimit('size(key_ids)', ':most', { adding: 1, limit, attribute: 'key_ids' });
  return {
    TableName: tableName,
    Key: apiKeySlotsKey(accountId),
    UpdateExpression: 'ADD key_ids :id SET #type = :type',
    ConditionExpression: slots.condition,
    ExpressionAttributeNames: { '#type': 'type' },
    ExpressionAttributeValues: { ':id': new Set([keyId]), ':most': slots.most, ':type': ENTITY.apiKeySlots },
  };
};

export const releaseApiKeySlotsParams = (
  tableName: string,
  accountId: string,
  keyIds: readonly string[],
): UpdateCommandInput => ({
  TableName: tableName,
  Key: apiKeySlotsKey(accountId),
  UpdateExpression: 'DELETE key_ids :ids',
  ExpressionAttributeValues: { ':ids': new Set(keyIds) },
});

/** The account's refs (id → digest), newest first, read consistently. */
export const listApiKeyRefsParams = (tableName: string, accountId: string): QueryCommandInput => ({
  TableName: tableName,
  KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
  ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
  ExpressionAttributeValues: { ':pk': apiKeyRefsPartition(accountId), ':prefix': API_KEY_REF_SK_PREFIX },
  ScanIndexForward: false,
  ConsistentRead: true,
});

/** Moves last_used_at to `now`, unless a request of the last minute already did. */
export const markApiKeyUsedParams = (tableName: string, digest: string, now: Date): UpdateCommandInput => ({
  TableName: tableName,
  Key: apiKeyItemKey(digest),
  UpdateExpression: 'SET last_used_at = :now',
  ConditionExpression: `${ITEM_EXISTS} AND (attribute_not_exists(last_used_at) OR attribute_type(last_used_at, :null) OR last_used_at < :cutoff)`,
  ExpressionAttributeValues: {
    ':null': 'NULL',
    ':now': isoNow(now),
    ':cutoff': isoNow(new Date(now.getTime() - LAST_USED_RESOLUTION_MS)),
  },
});

export const createApiKeyRefParams = (
  tableName: string,
  accountId: string,
  key: Pick<NewApiKey, 'id' | 'digest'>,
): PutCommandInput => ({
  TableName: tableName,
  Item: { ...apiKeyRefKey(accountId, key.id), type: ENTITY.apiKeyRef, id: key.id, digest: key.digest },
  ConditionExpression: ITEM_ABSENT,
});

/** The record, under the key's digest: written last, it is what makes the key exist. */
export const createApiKeyRecordParams = (
  tableName: string,
  accountId: string,
  digest: string,
  record: ApiKeyRecord,
): PutCommandInput => ({
  TableName: tableName,
  Item: { ...apiKeyItemKey(digest), type: ENTITY.apiKey, ...record, account_id: accountId },
  ConditionExpression: ITEM_ABSENT,
});

/** Revokes the account's own key, once; answers the record as it became. */
export const revokeApiKeyParams = (
  tableName: string,
  accountId: string,
  digest: string,
  now: Date,
): UpdateCommandInput => ({
  TableName: tableName,
  Key: apiKeyItemKey(digest),
  UpdateExpression: 'SET revoked_at = :now',
  ConditionExpression: `${ITEM_EXISTS} AND account_id = :account AND (attribute_not_exists(revoked_at) OR attribute_type(revoked_at, :null))`,
  ExpressionAttributeValues: { ':now': isoNow(now), ':account': accountId, ':null': 'NULL' },
  ReturnValues: 'ALL_NEW',
});

export const createApiKeyStore = (
  db: DynamoDBDocumentClient,
  tableName: string,
  clock: Clock,
  onFault: (message: string, error: unknown) => void,
): ApiKeyStore => {
  const getItem = async (key: Record<string, string>) =>
    (await db.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item;

  /** Takes a slot for `keyId`: false when the account has `limit` active keys. */
  const takeSlot = async (accountId: string, keyId: string, limit: number): Promise<boolean> => {
    try {
      await db.send(new UpdateCommand(takeApiKeySlotParams(tableName, accountId, keyId, limit)));
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  };

  /** Removing ids from the set is idempotent: a slot given back twice is given back once. */
  const releaseSlots = async (accountId: string, keyIds: readonly string[]): Promise<void> => {
    if (keyIds.length === 0) return;
    await db.send(new UpdateCommand(releaseApiKeySlotsParams(tableName, accountId, keyIds)));
  };

  /** The account's refs (id → digest), newest first. */
  const refs = async (accountId: string): Promise<{ id: string; digest: string }[]> => {
    const items = await queryAll(db, listApiKeyRefsParams(tableName, accountId));
    return items
      .filter((item) => item.type === ENTITY.apiKeyRef)
      .map((item) => ({ id: String(item.id), digest: String(item.digest) }));
  };

  /** The records behind `digests` that belong to `accountId`, by key id. */
  const records = async (
    accountId: string,
    digests: readonly string[],
  ): Promise<Map<string, Record<string, unknown>>> => {
    const byId = new Map<string, Record<string, unknown>>();
    for (let i = 0; i < digests.length; i += 100) {
      let keys: Record<string, unknown>[] | undefined = digests.slice(i, i + 100).map(apiKeyItemKey);
      while (keys && keys.length > 0) {
        const out: BatchGetCommandOutput = await db.send(
          new BatchGetCommand({ RequestItems: { [tableName]: { Keys: keys, ConsistentRead: true } } }),
        );
        for (const item of out.Responses?.[tableName] ?? []) {
          if (item.type !== ENTITY.apiKey || item.account_id !== accountId) continue;
          byId.set(String(item.id), item);
        }
        keys = out.UnprocessedKeys?.[tableName]?.Keys;
      }
    }
    return byId;
  };

  /**
   * Gives back the slots no active key holds: those of revoked keys (a revocation whose release
   * failed) and those of ids with no record that are old enough not to be a creation in flight.
   * Returns whether any came back.
   */
  const reclaim = async (accountId: string): Promise<boolean> => {
    const slots = await getItem(apiKeySlotsKey(accountId));
    const held = [...((slots?.key_ids as Set<string> | undefined) ?? [])];
    if (held.length === 0) return false;
    const known = await refs(accountId);
    const byId = new Map(known.map((r) => [r.id, r.digest]));
    const found = await records(
      accountId,
      held.flatMap((id) => (byId.has(id) ? [byId.get(id) as string] : [])),
    );
    const now = clock.now().getTime();
    const stale = held.filter((id) => {
      const record = found.get(id);
      if (record) return typeof record.revoked_at === 'string';
      const created = idTime(id);
      return created === undefined || now - created > ABANDONED_SLOT_MS;
    });
    await releaseSlots(accountId, stale);
    return stale.length > 0;
  };

  return {
    /** The key with this digest, when it exists and is not revoked; marks it used. */
    async useByDigest(digest: string): Promise<ActiveApiKey | undefined> {
      const key = apiKeyItemKey(digest);
      const item = await getItem(key);
      if (item?.type !== ENTITY.apiKey || item.revoked_at) return undefined;
      const now = clock.now().getTime();
      const lastUsed = typeof item.last_used_at === 'string' ? Date.parse(item.last_used_at) : 0;
      if (now - lastUsed >= LAST_USED_RESOLUTION_MS) {
        await db
          .send(new UpdateCommand(markApiKeyUsedParams(tableName, digest, new Date(now))))
          // Another request of the same minute got there first, or the write failed: the key
          // still authenticates; last_used_at is bookkeeping.
          .catch((e: unknown) => {
            if (!isConditionFailure(e)) onFault('last_used_at not updated', e);
          });
      }
      return { id: String(item.id), accountId: String(item.account_id) };
    },

    async revokedAt(digest: string): Promise<string | undefined> {
      const item = await getItem(apiKeyItemKey(digest));
      return item?.type === ENTITY.apiKey && typeof item.revoked_at === 'string'
        ? item.revoked_at
        : undefined;
    },

    /** Creates a key unless the account has `limit` active keys. */
    async create(accountId: string, key: NewApiKey, limit: number): Promise<CreateOutcome> {
      if (!(await takeSlot(accountId, key.id, limit))) {
        if (!(await reclaim(accountId)) || !(await takeSlot(accountId, key.id, limit))) {
          return { kind: 'limitReached' };
        }
      }
      const record = newApiKeyRecord(key, isoNow(clock.now()));
      let refWritten = false;
      try {
        await db.send(new PutCommand(createApiKeyRefParams(tableName, accountId, key)));
        refWritten = true;
        await db.send(new PutCommand(createApiKeyRecordParams(tableName, accountId, key.digest, record)));
      } catch (e) {
        // The key was never handed out: take back what was written, then the slot.
        if (refWritten) {
          await db
            .send(new DeleteCommand({ TableName: tableName, Key: apiKeyRefKey(accountId, key.id) }))
            .catch((f: unknown) => onFault('API key ref not removed after a failed creation', f));
        }
        await releaseSlots(accountId, [key.id]).catch((f: unknown) =>
          onFault('API key slot not given back after a failed creation (reclaimed at the limit)', f),
        );
        throw e;
      }
      return { kind: 'created', record };
    },

    /** The account's keys, newest first, revoked ones included. */
    async list(accountId: string): Promise<ApiKeyRecord[]> {
      const known = await refs(accountId);
      const found = await records(
        accountId,
        known.map((r) => r.digest),
      );
      // A ref without a record is a creation in flight or one that failed: no key.
      return known.flatMap((r) => {
        const item = found.get(r.id);
        return item ? [toRecord(item)] : [];
      });
    },

    /**
     * Revokes the account's key `keyId`: the record first (from then on the key is refused),
     * then its slot. Revoking again returns the record unchanged (and gives back a slot that a
     * failed first attempt kept). Undefined when the account has no such key.
     */
    async revoke(accountId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
      const ref = await getItem(apiKeyRefKey(accountId, keyId));
      if (ref?.type !== ENTITY.apiKeyRef) return undefined;
      const key = apiKeyItemKey(String(ref.digest));
      let record: ApiKeyRecord;
      try {
        const out = await db.send(
          new UpdateCommand(revokeApiKeyParams(tableName, accountId, String(ref.digest), clock.now())),
        );
        record = toRecord(out.Attributes ?? {});
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        const item = await getItem(key);
        if (item?.type !== ENTITY.apiKey || item.account_id !== accountId) return undefined;
        record = toRecord(item);
      }
      await releaseSlots(accountId, [keyId]).catch((f: unknown) =>
        onFault('API key slot not given back after revocation (reclaimed at the limit)', f),
      );
      return record;
    },
  };
};
