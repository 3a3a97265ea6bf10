/**
 * The job store on the single table (functions/domain/jobs/jobs.ts is its port). Requests are built by
 * the pure `*Params()` functions below (tested without AWS); the store only sends them.
 */
import {
  DeleteCommand,
  type DeleteCommandInput,
  type DynamoDBDocumentClient,
  GetCommand,
  type GetCommandInput,
  PutCommand,
  type PutCommandInput,
  type QueryCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { encodeTime } from 'ulid';
import { monthPeriod } from '../../domain/accounts/usage.js';
import { epochSeconds, isoNow } from '../../domain/common/clock.js';
import type { Clock } from '../../domain/common/ports.js';
import {
  fenceOf,
  INTERRUPTED,
  type Job,
  type JobStatus,
  type JobStore,
  type NewJob,
  newJobRecord,
  type OpenJobRef,
} from '../../domain/jobs/jobs.js';
import { isConditionFailure, orLanded } from './conditional.js';
import {
  batchJobIndexKey,
  ENTITY,
  GSI1,
  GSI2,
  ITEM_ABSENT,
  JOB_SK_PREFIX,
  jobKey,
  jobsPartition,
  leaseSortKey,
  OPEN_JOB_SHARDS,
  openJobIndexKey,
  openJobsPartition,
  PK,
  parseOpenJobSortKey,
  SK,
  TTL,
  withoutKeys,
} from './keys.js';
import { queryAll, queryPage, queryShards } from './pagination.js';

/**
 * A new job's item, written only if no item has its key; open (in the sweeper's index) while
 * leased. It expires (DynamoDB TTL) at `expiresAt`, epoch seconds, with everything the job later
 * carries (diagnostics, error).
 */
export const createJobParams = (tableName: string, job: Job, expiresAt: number): PutCommandInput => ({
  TableName: tableName,
  Item: {
    ...jobKey(job.account_id, job.id),
    type: ENTITY.job,
    ...job,
    ...(job.lease_until !== undefined ? openJobIndexKey(job.account_id, job.id, job.lease_until) : {}),
    ...(job.batch_id ? batchJobIndexKey(job.account_id, job.batch_id, job.id) : {}),
    [TTL]: expiresAt,
  },
  ConditionExpression: ITEM_ABSENT,
});

/** TTL deletes late: an item past its `expires_at` is gone as far as readers are concerned. */
const live = (item: Record<string, unknown>, now: Date): boolean =>
  item[TTL] === undefined || Number(item[TTL]) > epochSeconds(now);

export const getJobParams = (
  tableName: string,
  accountId: string,
  jobId: string,
  consistent = false,
): GetCommandInput => ({
  TableName: tableName,
  Key: jobKey(accountId, jobId),
  ...(consistent ? { ConsistentRead: true } : {}),
});

/** Deletes a job only while its unit was never held. */
export const discardJobParams = (
  tableName: string,
  job: Pick<Job, 'account_id' | 'id'>,
): DeleteCommandInput => ({
  TableName: tableName,
  Key: jobKey(job.account_id, job.id),
  ConditionExpression: '#unit = :reserving',
  ExpressionAttributeNames: { '#unit': 'unit' },
  ExpressionAttributeValues: { ':reserving': 'reserving' },
});

const OPEN: readonly JobStatus[] = ['pending', 'rendering'];

/** A lease moved to `leaseUntil`: the attribute and the index entry together. */
const leaseFields = (job: Pick<Job, 'account_id' | 'id'>, leaseUntil: number) => ({
  lease_until: leaseUntil,
  ...openJobIndexKey(job.account_id, job.id, leaseUntil),
});

/** What leaves a job when its unit is settled: it is no longer in the sweeper's index. */
export const SETTLED_REMOVES = ['lease_until', 'unit', GSI1.partitionKey, GSI1.sortKey] as const;

/** Extends the lease of a job still pending or rendering (an async job's: still at its attempt). */
export const renewJobParams = (
  tableName: string,
  job: Pick<Job, 'account_id' | 'id' | 'mode' | 'attempts'>,
  leaseUntil: number,
): UpdateCommandInput =>
  transitionJobParams(tableName, job, OPEN, leaseFields(job, leaseUntil), [], fenceOf(job));

/**
 * The consumer's claim of an async job: pending, or rendering past its lease (the holder died),
 * at the attempt the consumer read → rendering at the next attempt, its unit held, leased.
 */
export const claimJobParams = (
  tableName: string,
  job: Pick<Job, 'account_id' | 'id' | 'attempts'>,
  leaseUntil: number,
  now: number,
  at: string,
): UpdateCommandInput => {
  const seen = job.attempts ?? 0;
  const base = transitionJobParams(
    tableName,
    job,
    ['pending', 'rendering'],
    {
      status: 'rendering',
      attempts: seen + 1,
      unit: 'held',
      ...leaseFields(job, leaseUntil),
      updated_at: at,
      started_at: at,
    },
    [],
    seen,
  );
  return {
    ...base,
    ConditionExpression: `${base.ConditionExpression} AND (#status = :from0 OR lease_until < :now)`,
    ExpressionAttributeValues: { ...base.ExpressionAttributeValues, ':now': now },
  };
};

/**
 * An async job back to the queue at the attempt it is at: pending, its unit still held, leased for
 * the queue's wait. With `expiredBefore` (the sweeper), only once its lease ran out before then.
 */
export const requeueJobParams = (
  tableName: string,
  job: Pick<Job, 'account_id' | 'id' | 'attempts'>,
  leaseUntil: number,
  at: string,
  expiredBefore?: number,
): UpdateCommandInput => {
  const base = transitionJobParams(
    tableName,
    job,
    OPEN,
    { status: 'pending', ...leaseFields(job, leaseUntil), updated_at: at },
    [],
    job.attempts ?? 0,
  );
  if (expiredBefore === undefined) return base;
  return {
    ...base,
    ConditionExpression: `${base.ConditionExpression} AND lease_until < :now`,
    ExpressionAttributeValues: { ...base.ExpressionAttributeValues, ':now': expiredBefore },
  };
};

/** A run's item never started: pending again, its claim undone (issue 43), fenced by its attempt. */
export const releaseJobParams = (
  tableName: string,
  job: Pick<Job, 'account_id' | 'id' | 'attempts'>,
  leaseUntil: number,
  at: string,
): UpdateCommandInput =>
  transitionJobParams(
    tableName,
    job,
    ['rendering'],
    {
      status: 'pending',
      ...leaseFields(job, leaseUntil),
      attempts: Math.max(0, (job.attempts ?? 0) - 1),
      updated_at: at,
    },
    [],
    job.attempts ?? 0,
  );

/** A failed or cancelled job whose unit came back leaves the index (never a live job). */
export const settledJobParams = (
  tableName: string,
  job: Pick<Job, 'account_id' | 'id'>,
): UpdateCommandInput => ({
  TableName: tableName,
  Key: jobKey(job.account_id, job.id),
  UpdateExpression: `REMOVE ${SETTLED_REMOVES.map((_, i) => `#r${i}`).join(', ')}`,
  ConditionExpression: '#status IN (:failed, :cancelled)',
  ExpressionAttributeNames: {
    '#status': 'status',
    ...Object.fromEntries(SETTLED_REMOVES.map((a, i) => [`#r${i}`, a])),
  },
  ExpressionAttributeValues: { ':failed': 'failed', ':cancelled': 'cancelled' },
});

/**
 * A pending job is cancelled: only while it is pending (the consumer's claim is conditional on the
 * same status, so one of the two wins), its unit `refunding` and in the sweeper's index until
 * `settleBy` (its return is the caller's next write; the sweeper reconciles one that died).
 */
export const cancelJobParams = (
  tableName: string,
  job: Pick<Job, 'account_id' | 'id'>,
  settleBy: number,
  at: string,
): UpdateCommandInput =>
  transitionJobParams(tableName, job, ['pending'], {
    status: 'cancelled',
    unit: 'refunding',
    ...leaseFields(job, settleBy),
    updated_at: at,
    completed_at: at,
  });

/**
 * The sweeper's take-over: a pending or rendering job whose lease ran out before `now` fails with
 * PDF_RENDERING_INTERRUPTED. It stays in the index (unit `refunding`, due at once) until its month
 * is reconciled. The lease condition is the fence: a holder that renewed in time keeps its job.
 */
export const failExpiredJobParams = (
  tableName: string,
  job: Pick<Job, 'account_id' | 'id'>,
  now: number,
  at: string,
): UpdateCommandInput => {
  const base = transitionJobParams(tableName, job, OPEN, {
    status: 'failed',
    error: INTERRUPTED,
    unit: 'refunding',
    updated_at: at,
    completed_at: at,
  });
  return {
    ...base,
    ConditionExpression: `(${base.ConditionExpression}) AND lease_until < :now`,
    ExpressionAttributeValues: { ...base.ExpressionAttributeValues, ':now': now },
  };
};

/** One shard's index entries whose lease ran out before `now`, oldest first (keys only). */
export const openBeforeParams = (tableName: string, shard: number, now: number): QueryCommandInput => ({
  TableName: tableName,
  IndexName: GSI1.indexName,
  KeyConditionExpression: '#pk = :pk AND #sk < :before',
  ExpressionAttributeNames: { '#pk': GSI1.partitionKey, '#sk': GSI1.sortKey },
  ExpressionAttributeValues: { ':pk': openJobsPartition(shard), ':before': leaseSortKey(now) },
  ProjectionExpression: '#pk, #sk',
});

/**
 * The account's jobs that hold or held a unit of `month`, read consistently: job ids are ULIDs, so
 * the month's jobs lie in one sort-key range (widened by a day each side: a job is made a moment
 * before its unit is counted, and the counters' month is the one its reservation saw).
 */
export const monthJobsParams = (tableName: string, accountId: string, month: string): QueryCommandInput => {
  const { start, end } = monthPeriod(new Date(`${month}-01T00:00:00.000Z`));
  const from = `${JOB_SK_PREFIX}job_${encodeTime(Math.max(0, start.getTime() - 86_400_000), 10)}`;
  const to = `${JOB_SK_PREFIX}job_${encodeTime(end.getTime() + 86_400_000, 10)}`;
  return {
    TableName: tableName,
    KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
    FilterExpression: 'usage_month = :month',
    ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
    ExpressionAttributeValues: { ':pk': jobsPartition(accountId), ':from': from, ':to': to, ':month': month },
    ConsistentRead: true,
  };
};

/**
 * An account's jobs, newest first (ULID ids: sort key order is creation order), without those
 * whose record expired at `now` (TTL deletes late; jobs made before retention have no expiry).
 */
export const listJobsParams = (tableName: string, accountId: string, now: Date): QueryCommandInput => ({
  TableName: tableName,
  KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
  FilterExpression: 'attribute_not_exists(#ttl) OR #ttl > :now',
  ExpressionAttributeNames: { '#pk': PK, '#sk': SK, '#ttl': TTL },
  ExpressionAttributeValues: {
    ':pk': jobsPartition(accountId),
    ':prefix': JOB_SK_PREFIX,
    ':now': epochSeconds(now),
  },
  ScanIndexForward: false,
});

/**
 * Sets `fields` on the job only while its status is one of `from` (and, with `attempts`, while it
 * is at that attempt); answers the item as it became.
 */
export const transitionJobParams = (
  tableName: string,
  job: Pick<Job, 'account_id' | 'id'>,
  from: readonly JobStatus[],
  fields: Readonly<Record<string, unknown>>,
  removes: readonly string[] = [],
  attempts?: number,
): UpdateCommandInput => {
  const names: Record<string, string> = { '#status': 'status' };
  const values: Record<string, unknown> = {};
  const sets = Object.entries(fields).map(([k, v], i) => {
    names[`#f${i}`] = k;
    values[`:v${i}`] = v;
    return `#f${i} = :v${i}`;
  });
  const removed = removes.map((k, i) => {
    names[`#r${i}`] = k;
    return `#r${i}`;
  });
  from.forEach((s, i) => {
    values[`:from${i}`] = s;
  });
  let fence = '';
  if (attempts !== undefined) {
    names['#attempts'] = 'attempts';
    values[':attempts'] = attempts;
    fence = ' AND #attempts = :attempts';
  }
  return {
    TableName: tableName,
    Key: jobKey(job.account_id, job.id),
    UpdateExpression: `SET ${sets.join(', ')}${removed.length ? ` REMOVE ${removed.join(', ')}` : ''}`,
    ConditionExpression: `#status IN (${from.map((_, i) => `:from${i}`).join(', ')})${fence}`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ReturnValues: 'ALL_NEW',
  };
};

export const toJob = (item: Record<string, unknown>): Job => {
  const {
    [GSI1.partitionKey]: _pk,
    [GSI1.sortKey]: _sk,
    [GSI2.partitionKey]: _batchPk,
    [GSI2.sortKey]: _batchSk,
    ...rest
  } = withoutKeys(item);
  return rest as unknown as Job;
};

export interface JobStoreOptions {
  /** How long a job's record is kept (domain/jobs.ts, jobRecordRetentionSeconds). */
  readonly recordRetentionSeconds: number;
}

export const createJobStore = (
  db: DynamoDBDocumentClient,
  tableName: string,
  clock: Clock,
  { recordRetentionSeconds }: JobStoreOptions,
): JobStore => {
  const now = () => isoNow(clock.now());

  const read = async (job: Pick<Job, 'account_id' | 'id'>) =>
    (await db.send(new GetCommand(getJobParams(tableName, job.account_id, job.id, true)))).Item;

  /** The item as this store's write left it, if it did: `updated_at` is the write's own time. */
  const written = async (job: Pick<Job, 'account_id' | 'id'>, at: string, status?: unknown) => {
    const item = await read(job);
    return item && item.updated_at === at && (status === undefined || item.status === status)
      ? toJob(item)
      : undefined;
  };

  const transition = async (
    job: Pick<Job, 'account_id' | 'id' | 'mode' | 'attempts'>,
    from: readonly JobStatus[],
    fields: Readonly<Record<string, unknown>>,
    removes: readonly string[] = [],
  ): Promise<Job> => {
    const at = now();
    return orLanded(
      async () => {
        const out = await db.send(
          new UpdateCommand(
            transitionJobParams(tableName, job, from, { ...fields, updated_at: at }, removes, fenceOf(job)),
          ),
        );
        return toJob(out.Attributes ?? {});
      },
      () => written(job, at, fields.status),
    );
  };

  /** A conditional update's item as it became, or undefined when its condition failed. */
  const conditional = async (params: UpdateCommandInput): Promise<Job | undefined> => {
    try {
      const out = await db.send(new UpdateCommand(params));
      return toJob(out.Attributes ?? {});
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
  };

  return {
    async create(job: NewJob, lease): Promise<Job> {
      const at = now();
      const item = newJobRecord(job, at, lease);
      const expiresAt = epochSeconds(new Date(at)) + recordRetentionSeconds;
      // A job id is new (a ULID): an item with it and this creation time can only be this write's.
      return orLanded(
        async () => {
          await db.send(new PutCommand(createJobParams(tableName, item, expiresAt)));
          return item;
        },
        async () => ((await read(job))?.created_at === at ? item : undefined),
      );
    },

    async discard(job) {
      await orLanded(
        () => db.send(new DeleteCommand(discardJobParams(tableName, job))),
        async () => ((await read(job)) === undefined ? {} : undefined),
      );
    },

    markRendering: (job, leaseUntil) =>
      transition(job, ['pending'], {
        status: 'rendering',
        attempts: 1,
        started_at: now(),
        ...(leaseUntil !== undefined ? { unit: 'held', ...leaseFields(job, leaseUntil) } : {}),
      }),

    hold: (job, leaseUntil) =>
      transition(job, ['pending'], { unit: 'held', ...leaseFields(job, leaseUntil) }),

    claim: (job, leaseUntil, at) => conditional(claimJobParams(tableName, job, leaseUntil, at, now())),

    requeue: (job, leaseUntil, expiredBefore) =>
      conditional(requeueJobParams(tableName, job, leaseUntil, now(), expiredBefore)),

    release: (job, leaseUntil) => conditional(releaseJobParams(tableName, job, leaseUntil, now())),

    async renew(job, leaseUntil) {
      try {
        return await orLanded(
          async () => {
            await db.send(new UpdateCommand(renewJobParams(tableName, job, leaseUntil)));
            return true;
          },
          async () => ((await read(job))?.lease_until === leaseUntil ? true : undefined),
        );
      } catch (e) {
        if (isConditionFailure(e)) return false;
        throw e;
      }
    },

    complete: (job, result) =>
      transition(
        job,
        ['rendering'],
        {
          status: 'completed',
          file_size_bytes: result.fileSizeBytes,
          page_count: result.pageCount,
          render_duration_ms: result.renderDurationMs,
          diagnostics: result.diagnostics ?? null,
          completed_at: now(),
        },
        SETTLED_REMOVES,
      ),

    fail: (job, error, diagnostics = null, settleBy = undefined) =>
      transition(
        job,
        OPEN,
        {
          status: 'failed',
          error,
          render_duration_ms: null,
          diagnostics,
          completed_at: now(),
          ...(settleBy !== undefined ? { unit: 'refunding', ...leaseFields(job, settleBy) } : {}),
        },
        settleBy !== undefined ? [] : SETTLED_REMOVES,
      ),

    async cancel(job, settleBy) {
      const at = now();
      return orLanded(
        async () =>
          toJob(
            (await db.send(new UpdateCommand(cancelJobParams(tableName, job, settleBy, at)))).Attributes ??
              {},
          ),
        () => written(job, at, 'cancelled'),
      );
    },

    async settled(job) {
      await db.send(new UpdateCommand(settledJobParams(tableName, job)));
    },

    async failExpired(job, at) {
      const failedAt = now();
      try {
        return await orLanded(
          async () => {
            await db.send(new UpdateCommand(failExpiredJobParams(tableName, job, at, failedAt)));
            return true;
          },
          async () => ((await written(job, failedAt, 'failed')) ? true : undefined),
        );
      } catch (e) {
        if (isConditionFailure(e)) return false;
        throw e;
      }
    },

    async openBefore(at, limit): Promise<OpenJobRef[]> {
      return queryShards(
        db,
        OPEN_JOB_SHARDS,
        (shard) => openBeforeParams(tableName, shard, at),
        limit,
        (item) => parseOpenJobSortKey(String(item[GSI1.sortKey])),
      );
    },

    async ofMonth(accountId, month) {
      const items = await queryAll(db, monthJobsParams(tableName, accountId, month));
      return items.map(toJob);
    },

    async get(accountId, jobId, consistent = false) {
      const out = await db.send(new GetCommand(getJobParams(tableName, accountId, jobId, consistent)));
      return out.Item && live(out.Item, clock.now()) ? toJob(out.Item) : undefined;
    },

    /**
     * The `offset` items before the page are read as keys only; `offset` is capped
     * (MAX_LIST_OFFSET), so that is the most a page costs.
     */
    async list(accountId, { limit, offset }) {
      const query = listJobsParams(tableName, accountId, clock.now());
      const items = await queryPage(db, query, { limit, offset }, { ProjectionExpression: '#pk, #sk' });
      return items.map(toJob);
    },
  };
};
