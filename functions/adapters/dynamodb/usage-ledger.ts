/** The usage ledger on the single table (functions/domain/accounts/usage-ledger.ts is its port). */
import {
  type DynamoDBDocumentClient,
  PutCommand,
  type PutCommandInput,
  type QueryCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { UsageEntry, UsageLedger } from '../../domain/accounts/usage-ledger.js';
import { epochSeconds } from '../../domain/common/clock.js';
import { isConditionFailure } from './conditional.js';
import {
  accountPartition,
  ENTITY,
  GSI1,
  GSI2,
  ITEM_ABSENT,
  PK,
  SK,
  TTL,
  USAGE_ENTRY_SK_PREFIX,
  USAGE_SHARDS,
  usageEntryKey,
  usageMonthIndexKey,
  usageMonthPartition,
  usageOutboxIndexKey,
  usageOutboxPartition,
  withoutKeys,
} from './keys.js';
import { queryAll, queryShards } from './pagination.js';

const ENTRY_FIELDS = [
  'account_id',
  'job_id',
  'month',
  'kind',
  'units',
  'pages',
  'bytes',
  'render_ms',
  'batch_id',
  'completed_at',
] as const satisfies readonly (keyof UsageEntry)[];

const toEntry = (item: Record<string, unknown>): UsageEntry => {
  const rest = withoutKeys(item);
  return Object.fromEntries(ENTRY_FIELDS.map((f) => [f, rest[f] ?? null])) as unknown as UsageEntry;
};

/** The entry, unpublished, unless its job has one: kept `retentionSeconds` after its completion. */
export const recordUsageEntryParams = (
  tableName: string,
  entry: UsageEntry,
  retentionSeconds: number,
): PutCommandInput => ({
  TableName: tableName,
  Item: {
    ...usageEntryKey(entry.account_id, entry.month, entry.job_id),
    type: ENTITY.usageEntry,
    ...entry,
    ...usageMonthIndexKey(entry.month, entry.account_id, entry.job_id),
    ...usageOutboxIndexKey(entry),
    [TTL]: epochSeconds(new Date(entry.completed_at)) + retentionSeconds,
  },
  ConditionExpression: ITEM_ABSENT,
});

/** One shard of a month's entries of every account (GSI2): eight such queries read the month. */
export const usageMonthShardParams = (
  tableName: string,
  month: string,
  shard: number,
): QueryCommandInput => ({
  TableName: tableName,
  IndexName: GSI2.indexName,
  KeyConditionExpression: '#pk = :pk',
  ExpressionAttributeNames: { '#pk': GSI2.partitionKey },
  ExpressionAttributeValues: { ':pk': usageMonthPartition(month, shard) },
});

export const accountMonthEntriesParams = (
  tableName: string,
  accountId: string,
  month: string,
): QueryCommandInput => ({
  TableName: tableName,
  KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
  ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
  ExpressionAttributeValues: {
    ':pk': accountPartition(accountId),
    ':prefix': `${USAGE_ENTRY_SK_PREFIX}${month}#`,
  },
  ConsistentRead: true,
});

export const usageOutboxShardParams = (tableName: string, shard: number): QueryCommandInput => ({
  TableName: tableName,
  IndexName: GSI1.indexName,
  KeyConditionExpression: '#pk = :pk',
  ExpressionAttributeNames: { '#pk': GSI1.partitionKey },
  ExpressionAttributeValues: { ':pk': usageOutboxPartition(shard) },
});

/** The entry leaves the outbox (its event was published); nothing if the entry is gone. */
export const markPublishedParams = (
  tableName: string,
  entry: Pick<UsageEntry, 'account_id' | 'job_id' | 'month'>,
): UpdateCommandInput => ({
  TableName: tableName,
  Key: usageEntryKey(entry.account_id, entry.month, entry.job_id),
  UpdateExpression: 'REMOVE #gpk, #gsk',
  ConditionExpression: `attribute_exists(${PK})`,
  ExpressionAttributeNames: { '#gpk': GSI1.partitionKey, '#gsk': GSI1.sortKey },
});

const byJob = (a: UsageEntry, b: UsageEntry) =>
  a.account_id === b.account_id ? (a.job_id < b.job_id ? -1 : 1) : a.account_id < b.account_id ? -1 : 1;

export const createUsageLedger = (
  db: DynamoDBDocumentClient,
  tableName: string,
  { retentionSeconds }: { readonly retentionSeconds: number },
): UsageLedger => ({
  async record(entry) {
    try {
      await db.send(new PutCommand(recordUsageEntryParams(tableName, entry, retentionSeconds)));
      return true;
    } catch (e) {
      // Recorded already: by an attempt the SDK retried, a sweep, or the job's other completion.
      if (isConditionFailure(e)) return false;
      throw e;
    }
  },

  async ofAccountMonth(accountId, month) {
    const items = await queryAll(db, accountMonthEntriesParams(tableName, accountId, month));
    return items.map(toEntry).sort(byJob);
  },

  async ofMonth(month) {
    const entries: UsageEntry[] = [];
    for (let shard = 0; shard < USAGE_SHARDS; shard++) {
      entries.push(...(await queryAll(db, usageMonthShardParams(tableName, month, shard))).map(toEntry));
    }
    return entries.sort(byJob);
  },

  async unpublished(limit) {
    const entries = await queryShards(
      db,
      USAGE_SHARDS,
      (shard) => usageOutboxShardParams(tableName, shard),
      limit,
      (item) => toEntry(item),
    );
    return entries.sort((a, b) => (a.completed_at < b.completed_at ? -1 : 1));
  },

  async markPublished(entry) {
    try {
      await db.send(new UpdateCommand(markPublishedParams(tableName, entry)));
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
  },
});
