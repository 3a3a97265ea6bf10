/**
 * The job store on the single table (functions/domain/jobs.ts is its port). Requests are built by
 * the pure `*Params()` functions below (tested without AWS); the store only sends them.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  type GetCommandInput,
  PutCommand,
  type PutCommandInput,
  QueryCommand,
  type QueryCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { epochSeconds, isoNow } from '../../domain/clock.js';
import type { Job, JobStatus, JobStore, NewJob } from '../../domain/jobs.js';
import type { Clock } from '../../domain/ports.js';
import {
  ENTITY,
  ITEM_ABSENT,
  JOB_SK_PREFIX,
  jobKey,
  jobsPartition,
  PK,
  SK,
  TTL,
  withoutKeys,
} from './keys.js';
import { skipItems } from './pagination.js';

/**
 * A new job's item, written only if no item has its key. It expires (DynamoDB TTL) at
 * `expiresAt`, epoch seconds, with everything the job later carries (diagnostics, error).
 */
export const createJobParams = (tableName: string, job: Job, expiresAt: number): PutCommandInput => ({
  TableName: tableName,
  Item: { ...jobKey(job.account_id, job.id), type: ENTITY.job, ...job, [TTL]: expiresAt },
  ConditionExpression: ITEM_ABSENT,
});

/** TTL deletes late: an item past its `expires_at` is gone as far as readers are concerned. */
const live = (item: Record<string, unknown>, now: Date): boolean =>
  item[TTL] === undefined || Number(item[TTL]) > epochSeconds(now);

export const getJobParams = (tableName: string, accountId: string, jobId: string): GetCommandInput => ({
  TableName: tableName,
  Key: jobKey(accountId, jobId),
});

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

/** Sets `fields` on the job only while its status is one of `from`; answers the item as it became. */
export const transitionJobParams = (
  tableName: string,
  job: Pick<Job, 'account_id' | 'id'>,
  from: readonly JobStatus[],
  fields: Readonly<Record<string, unknown>>,
): UpdateCommandInput => {
  const names: Record<string, string> = { '#status': 'status' };
  const values: Record<string, unknown> = {};
  const sets = Object.entries(fields).map(([k, v], i) => {
    names[`#f${i}`] = k;
    values[`:v${i}`] = v;
    return `#f${i} = :v${i}`;
  });
  from.forEach((s, i) => {
    values[`:from${i}`] = s;
  });
  return {
    TableName: tableName,
    Key: jobKey(job.account_id, job.id),
    UpdateExpression: `SET ${sets.join(', ')}`,
    ConditionExpression: `#status IN (${from.map((_, i) => `:from${i}`).join(', ')})`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ReturnValues: 'ALL_NEW',
  };
};

const toJob = (item: Record<string, unknown>): Job => withoutKeys(item) as unknown as Job;

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

  const transition = async (
    job: Pick<Job, 'account_id' | 'id'>,
    from: readonly JobStatus[],
    fields: Partial<Job>,
  ): Promise<Job> => {
    const out = await db.send(
      new UpdateCommand(transitionJobParams(tableName, job, from, { ...fields, updated_at: now() })),
    );
    return toJob(out.Attributes ?? {});
  };

  return {
    async create(job: NewJob): Promise<Job> {
      const at = now();
      const item: Job = {
        ...job,
        status: 'pending',
        file_size_bytes: null,
        page_count: null,
        render_duration_ms: null,
        error: null,
        diagnostics: null,
        created_at: at,
        updated_at: at,
        completed_at: null,
      };
      const expiresAt = epochSeconds(new Date(at)) + recordRetentionSeconds;
      await db.send(new PutCommand(createJobParams(tableName, item, expiresAt)));
      return item;
    },

    markRendering: (job) => transition(job, ['pending'], { status: 'rendering' }),

    complete: (job, result) =>
      transition(job, ['rendering'], {
        status: 'completed',
        file_size_bytes: result.fileSizeBytes,
        page_count: result.pageCount,
        render_duration_ms: result.renderDurationMs,
        diagnostics: result.diagnostics ?? null,
        completed_at: now(),
      }),

    fail: (job, error, diagnostics = null) =>
      transition(job, ['pending', 'rendering'], {
        status: 'failed',
        error,
        render_duration_ms: null,
        diagnostics,
      }),

    async get(accountId, jobId) {
      const out = await db.send(new GetCommand(getJobParams(tableName, accountId, jobId)));
      return out.Item && live(out.Item, clock.now()) ? toJob(out.Item) : undefined;
    },

    /**
     * The `offset` items before the page are read as keys only; `offset` is capped
     * (MAX_LIST_OFFSET), so that is the most a page costs.
     */
    async list(accountId, { limit, offset }) {
      const query = listJobsParams(tableName, accountId, clock.now());
      const { startKey, exhausted } =
        offset > 0
          ? await skipItems(db, { ...query, ProjectionExpression: '#pk, #sk' }, offset)
          : { startKey: undefined, exhausted: false };
      if (exhausted) return [];
      const items: Record<string, unknown>[] = [];
      let next = startKey;
      do {
        const out = await db.send(
          new QueryCommand({ ...query, Limit: limit - items.length, ExclusiveStartKey: next }),
        );
        items.push(...(out.Items ?? []));
        next = out.LastEvaluatedKey;
      } while (next && items.length < limit);
      return items.map(toJob);
    },
  };
};
