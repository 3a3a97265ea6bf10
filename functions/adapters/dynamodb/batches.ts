/**
 * The batch store on the single table (functions/domain/batches/batches.ts is its port). Requests are
 * built by the pure `*Params()` functions below (tested without AWS); the store only sends them.
 *
 * A batch counts each of its jobs that ended once: the job's id joins a string set in the same
 * conditional write that adds one to `completed` or `failed`, so a count sent twice (an event
 * delivered again, a read that repairs the counters, an SDK retry) changes nothing.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  type GetCommandInput,
  PutCommand,
  type PutCommandInput,
  type QueryCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import {
  type Batch,
  type BatchJobStatus,
  type BatchOutputs,
  type BatchStore,
  type EndedHow,
  endedAtCreation,
  type NewBatch,
  newBatchRecord,
} from '../../domain/batches/batch-counter.js';
import { epochSeconds, isoNow } from '../../domain/common/clock.js';
import type { Clock } from '../../domain/common/ports.js';
import type { Job } from '../../domain/jobs/jobs.js';
import { isConditionFailure } from './conditional.js';
import { toJob } from './jobs.js';
import {
  BATCH_SK_PREFIX,
  batchesPartition,
  batchJobsPartition,
  batchKey,
  ENTITY,
  GSI2,
  ITEM_ABSENT,
  ITEM_EXISTS,
  PK,
  SK,
  TTL,
  withoutKeys,
} from './keys.js';
import { queryAll, queryPage } from './pagination.js';

/** The ids of the batch's jobs counted as ended (a string set). */
const ENDED = 'ended_jobs';

/** A batch's own fields: what a read returns, without the set of counted jobs. */
const BATCH_FIELDS = [
  'id',
  'account_id',
  'status',
  'total',
  'completed',
  'failed',
  'cancelled',
  'template_id',
  'template_version',
  'webhook_id',
  'created_at',
  'updated_at',
  'completed_at',
  'replayed',
  'output',
  'outputs',
  TTL,
] as const;

/** A new batch's item, written only if no item has its key; it expires with its jobs' records. */
export const createBatchParams = (tableName: string, batch: Batch, expiresAt: number): PutCommandInput => ({
  TableName: tableName,
  Item: { ...batchKey(batch.account_id, batch.id), type: ENTITY.batch, ...batch, [TTL]: expiresAt },
  ConditionExpression: ITEM_ABSENT,
});

export const getBatchParams = (tableName: string, accountId: string, batchId: string): GetCommandInput => ({
  TableName: tableName,
  Key: batchKey(accountId, batchId),
  ConsistentRead: true,
});

/** Job `jobId` ended (`how`): counted once, refused if it was counted already or there is no batch. */
export const countEndedParams = (
  tableName: string,
  end: { accountId: string; batchId: string; jobId: string; how: EndedHow; at: string },
): UpdateCommandInput => ({
  TableName: tableName,
  Key: batchKey(end.accountId, end.batchId),
  UpdateExpression: 'ADD #count :one, #ended :job SET updated_at = :at',
  ConditionExpression: `${ITEM_EXISTS} AND NOT contains(#ended, :jobId)`,
  ExpressionAttributeNames: { '#count': end.how, '#ended': ENDED },
  ExpressionAttributeValues: { ':one': 1, ':job': new Set([end.jobId]), ':jobId': end.jobId, ':at': end.at },
});

/** The batch's own fields, without its set of counted jobs (up to 1,000 ids, ~30 KB). */
const batchProjection = () => ({
  ProjectionExpression: BATCH_FIELDS.map((_, i) => `#f${i}`).join(', '),
  ExpressionAttributeNames: Object.fromEntries(BATCH_FIELDS.map((f, i) => [`#f${i}`, f])),
});

/** The batch without its set of counted jobs, read consistently. */
export const getBatchCountsParams = (
  tableName: string,
  accountId: string,
  batchId: string,
): GetCommandInput => ({
  ...getBatchParams(tableName, accountId, batchId),
  ...batchProjection(),
});

/** What stands in a batch's place when its acceptance died (the sweeper's marker): never shown. */
const CANCELLED = 'cancelled';

/**
 * The sweeper's marker for a batch whose acceptance died: written only where no batch is, so that
 * the acceptance's own write (createBatchParams, conditional on no item) is refused from then on.
 */
export const cancelBatchParams = (
  tableName: string,
  accountId: string,
  batchId: string,
  at: string,
  expiresAt: number,
): PutCommandInput => ({
  TableName: tableName,
  Item: {
    ...batchKey(accountId, batchId),
    type: ENTITY.batch,
    id: batchId,
    account_id: accountId,
    status: CANCELLED,
    created_at: at,
    updated_at: at,
    [TTL]: expiresAt,
  },
  ConditionExpression: ITEM_ABSENT,
});

/** processing → completed (the caller saw every job counted: a condition cannot add two counters). */
export const completeBatchParams = (
  tableName: string,
  batch: Pick<Batch, 'account_id' | 'id'>,
  at: string,
): UpdateCommandInput => ({
  TableName: tableName,
  Key: batchKey(batch.account_id, batch.id),
  UpdateExpression: 'SET #status = :completed, completed_at = :at, updated_at = :at',
  ConditionExpression: '#status = :processing',
  ExpressionAttributeNames: { '#status': 'status' },
  ExpressionAttributeValues: { ':completed': 'completed', ':processing': 'processing', ':at': at },
});

/** A completed batch's outputs, once: refused when they were recorded ready already. */
export const recordOutputsParams = (
  tableName: string,
  batch: Pick<Batch, 'account_id' | 'id'>,
  outputs: BatchOutputs,
  at: string,
): UpdateCommandInput => ({
  TableName: tableName,
  Key: batchKey(batch.account_id, batch.id),
  UpdateExpression: 'SET #outputs = :outputs, updated_at = :at',
  ConditionExpression: `${ITEM_EXISTS} AND (attribute_not_exists(#outputs) OR #outputs.#status <> :ready)`,
  ExpressionAttributeNames: { '#outputs': 'outputs', '#status': 'status' },
  ExpressionAttributeValues: { ':outputs': outputs, ':ready': 'ready', ':at': at },
});

/** The account's batches, newest first (ULID ids), without those whose record expired at `now`. */
export const listBatchesParams = (tableName: string, accountId: string, now: Date): QueryCommandInput => ({
  TableName: tableName,
  KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
  FilterExpression: '(attribute_not_exists(#ttl) OR #ttl > :now) AND #status <> :cancelled',
  ExpressionAttributeNames: { '#pk': PK, '#sk': SK, '#ttl': TTL, '#status': 'status' },
  ExpressionAttributeValues: {
    ':pk': batchesPartition(accountId),
    ':prefix': BATCH_SK_PREFIX,
    ':now': epochSeconds(now),
    ':cancelled': CANCELLED,
  },
  ScanIndexForward: false,
});

/** The batch's jobs in item order (the index, GSI2). */
export const batchJobsParams = (
  tableName: string,
  accountId: string,
  batchId: string,
): QueryCommandInput => ({
  TableName: tableName,
  IndexName: GSI2.indexName,
  KeyConditionExpression: '#pk = :pk',
  ExpressionAttributeNames: { '#pk': GSI2.partitionKey },
  ExpressionAttributeValues: { ':pk': batchJobsPartition(accountId, batchId) },
});

const toBatch = (item: Record<string, unknown>): Batch => {
  const { [ENDED]: _ended, [TTL]: _ttl, ...rest } = withoutKeys(item);
  return rest as unknown as Batch;
};

export interface BatchStoreOptions {
  /** How long a batch's record is kept: as long as its jobs' (domain/jobs.ts, jobRecordRetentionSeconds). */
  readonly recordRetentionSeconds: number;
}

export const createBatchStore = (
  db: DynamoDBDocumentClient,
  tableName: string,
  clock: Clock,
  { recordRetentionSeconds }: BatchStoreOptions,
): BatchStore => {
  const now = () => isoNow(clock.now());

  const read = async (accountId: string, batchId: string): Promise<Batch | undefined> => {
    const out = await db.send(new GetCommand(getBatchCountsParams(tableName, accountId, batchId)));
    const live =
      out.Item &&
      out.Item.status !== CANCELLED &&
      (out.Item[TTL] === undefined || Number(out.Item[TTL]) > epochSeconds(clock.now()));
    return live && out.Item ? toBatch(out.Item) : undefined;
  };

  /** The batch as a conditional update left it (read back without its set); undefined when refused. */
  const conditional = async (
    params: UpdateCommandInput,
    batch: { accountId: string; batchId: string },
  ): Promise<Batch | undefined> => {
    try {
      await db.send(new UpdateCommand(params));
      return await read(batch.accountId, batch.batchId);
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
  };

  /** `limit` items of `query` after `offset` (read as keys only; offsets are capped by the API). */
  const page = (query: QueryCommandInput, at: { limit: number; offset: number }) =>
    // LastEvaluatedKey carries every key attribute, whatever the projection.
    queryPage(db, query, at, query.ProjectionExpression ? {} : { ProjectionExpression: '#pk' });

  return {
    async create(batch: NewBatch): Promise<Batch> {
      const item = newBatchRecord(batch, now());
      const params = createBatchParams(
        tableName,
        item,
        epochSeconds(new Date(item.created_at)) + recordRetentionSeconds,
      );
      const counted = endedAtCreation(batch);
      // Jobs that ended already are counted from the start (a set cannot be empty: none, no attribute).
      if (counted.length > 0) params.Item = { ...params.Item, [ENDED]: new Set(counted) };
      await db.send(new PutCommand(params));
      return item;
    },

    get: read,

    async list(accountId, p) {
      const query = listBatchesParams(tableName, accountId, clock.now());
      const { ProjectionExpression, ExpressionAttributeNames } = batchProjection();
      return (
        await page(
          {
            ...query,
            ProjectionExpression: `#pk, #sk, ${ProjectionExpression}`,
            ExpressionAttributeNames: { ...query.ExpressionAttributeNames, ...ExpressionAttributeNames },
          },
          p,
        )
      ).map(toBatch);
    },

    countEnded: (accountId, batchId, jobId, how) =>
      conditional(countEndedParams(tableName, { accountId, batchId, jobId, how, at: now() }), {
        accountId,
        batchId,
      }),

    complete: (batch) =>
      conditional(completeBatchParams(tableName, batch, now()), {
        accountId: batch.account_id,
        batchId: batch.id,
      }),

    async cancel(accountId, batchId) {
      const at = clock.now();
      try {
        await db.send(
          new PutCommand(
            cancelBatchParams(
              tableName,
              accountId,
              batchId,
              isoNow(at),
              epochSeconds(at) + recordRetentionSeconds,
            ),
          ),
        );
        return true;
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
      }
      const out = await db.send(
        new GetCommand({
          ...getBatchParams(tableName, accountId, batchId),
          ProjectionExpression: '#status',
          ExpressionAttributeNames: { '#status': 'status' },
        }),
      );
      return out.Item?.status === CANCELLED;
    },

    recordOutputs: (batch, outputs) =>
      conditional(recordOutputsParams(tableName, batch, outputs, now()), {
        accountId: batch.account_id,
        batchId: batch.id,
      }),

    async jobs(accountId, batchId, p): Promise<Job[]> {
      return (await page(batchJobsParams(tableName, accountId, batchId), p)).map(toJob);
    },

    async statuses(accountId, batchId): Promise<BatchJobStatus[]> {
      const items = await queryAll(db, {
        ...batchJobsParams(tableName, accountId, batchId),
        ProjectionExpression: 'id, #status, updated_at',
        ExpressionAttributeNames: { '#pk': GSI2.partitionKey, '#status': 'status' },
      });
      return items.map((i) => ({
        id: String(i.id),
        status: i.status as BatchJobStatus['status'],
        updated_at: String(i.updated_at),
      }));
    },

    async counted(accountId, batchId) {
      const out = await db.send(
        new GetCommand({
          ...getBatchParams(tableName, accountId, batchId),
          ProjectionExpression: '#ended',
          ExpressionAttributeNames: { '#ended': ENDED },
        }),
      );
      return (out.Item?.[ENDED] as Set<string> | undefined) ?? new Set<string>();
    },
  };
};
