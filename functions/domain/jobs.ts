/**
 * PDF jobs: pending → rendering → completed, or failed from either earlier state. Every state
 * change is a conditional write on the state it leaves, so a job never moves backwards.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { isoNow } from './clock.js';
import { ENTITY, ITEM_ABSENT, JOB_SK_PREFIX, jobKey, jobsPartition, PK, SK, withoutKeys } from './keys.js';
import { type Page, skipItems } from './pagination.js';
import type { Clock, Diagnostics } from './ports.js';

export type JobStatus = 'pending' | 'rendering' | 'completed' | 'failed';

export interface JobError {
  readonly code: string;
  readonly message: string;
}

export interface Job {
  readonly id: string;
  readonly account_id: string;
  readonly status: JobStatus;
  readonly template_id: string | null;
  /** The saved template's version it rendered; null for inline html (and for jobs made before versions). */
  readonly template_version: number | null;
  readonly object_key: string;
  readonly file_size_bytes: number | null;
  readonly page_count: number | null;
  readonly render_duration_ms: number | null;
  readonly error: JobError | null;
  /**
   * What happened inside the render's page (capped: ports.ts); null until the render ends, when it
   * ended before a page opened, and on jobs made before diagnostics.
   */
  readonly diagnostics?: Diagnostics | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly completed_at: string | null;
}

/** The job as the API shows it (contract: spec fields plus template_id, template_version, page_count, error). */
export interface JobResponse {
  readonly id: string;
  readonly status: JobStatus;
  readonly download_url: string | null;
  readonly file_size_bytes: number | null;
  readonly render_duration_ms: number | null;
  readonly page_count: number | null;
  readonly template_id: string | null;
  readonly template_version: number | null;
  readonly error: JobError | null;
  readonly diagnostics: Diagnostics | null;
  readonly created_at: string;
}

export const jobResponse = (job: Job, downloadUrl: string | null): JobResponse => ({
  id: job.id,
  status: job.status,
  download_url: downloadUrl,
  file_size_bytes: job.file_size_bytes,
  render_duration_ms: job.render_duration_ms,
  page_count: job.page_count,
  template_id: job.template_id,
  template_version: job.template_version ?? null,
  error: job.error,
  diagnostics: job.diagnostics ?? null,
  created_at: job.created_at,
});

/** Whether the PDF still exists: completed, and younger than the retention period. */
export const hasFile = (job: Job, retentionDays: number, now: Date = new Date()): boolean =>
  job.status === 'completed' &&
  job.completed_at !== null &&
  now.getTime() - Date.parse(job.completed_at) < retentionDays * 86_400_000;

const toJob = (item: Record<string, unknown>): Job => withoutKeys(item) as unknown as Job;

export const createJobStore = (db: DynamoDBDocumentClient, tableName: string, clock: Clock) => {
  const now = () => isoNow(clock.now());
  const newestFirst = (accountId: string) => ({
    TableName: tableName,
    KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
    ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
    ExpressionAttributeValues: { ':pk': jobsPartition(accountId), ':prefix': JOB_SK_PREFIX },
    ScanIndexForward: false,
  });

  /** Where a page at `count` starts: the jobs before it are read as keys only. */
  const skip = (accountId: string, count: number) =>
    skipItems(db, { ...newestFirst(accountId), ProjectionExpression: '#pk, #sk' }, count);

  const transition = async (
    job: Pick<Job, 'account_id' | 'id'>,
    from: readonly JobStatus[],
    fields: Partial<Job>,
  ): Promise<Job> => {
    const all: Record<string, unknown> = { ...fields, updated_at: now() };
    const names: Record<string, string> = { '#status': 'status' };
    const values: Record<string, unknown> = {};
    const sets = Object.entries(all).map(([k, v], i) => {
      names[`#f${i}`] = k;
      values[`:v${i}`] = v;
      return `#f${i} = :v${i}`;
    });
    from.forEach((s, i) => {
      values[`:from${i}`] = s;
    });
    const out = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: jobKey(job.account_id, job.id),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: `#status IN (${from.map((_, i) => `:from${i}`).join(', ')})`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return toJob(out.Attributes ?? {});
  };

  return {
    async create(
      job: Pick<Job, 'id' | 'account_id' | 'template_id' | 'template_version' | 'object_key'>,
    ): Promise<Job> {
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
      await db.send(
        new PutCommand({
          TableName: tableName,
          Item: { ...jobKey(job.account_id, job.id), type: ENTITY.job, ...item },
          ConditionExpression: ITEM_ABSENT,
        }),
      );
      return item;
    },

    markRendering: (job: Job) => transition(job, ['pending'], { status: 'rendering' }),

    complete: (
      job: Job,
      result: {
        fileSizeBytes: number;
        pageCount: number;
        renderDurationMs: number;
        diagnostics?: Diagnostics | undefined;
      },
    ) =>
      transition(job, ['rendering'], {
        status: 'completed',
        file_size_bytes: result.fileSizeBytes,
        page_count: result.pageCount,
        render_duration_ms: result.renderDurationMs,
        diagnostics: result.diagnostics ?? null,
        completed_at: now(),
      }),

    fail: (job: Job, error: JobError, diagnostics: Diagnostics | null = null) =>
      transition(job, ['pending', 'rendering'], {
        status: 'failed',
        error,
        render_duration_ms: null,
        diagnostics,
      }),

    async get(accountId: string, jobId: string): Promise<Job | undefined> {
      const out = await db.send(new GetCommand({ TableName: tableName, Key: jobKey(accountId, jobId) }));
      return out.Item ? toJob(out.Item) : undefined;
    },

    /**
     * Newest first (ULID ids sort by creation time). The `offset` items before the page are
     * read as keys only; `offset` is capped (MAX_LIST_OFFSET), so that is the most a page costs.
     */
    async list(accountId: string, { limit, offset }: Page): Promise<Job[]> {
      const { startKey, exhausted } =
        offset > 0 ? await skip(accountId, offset) : { startKey: undefined, exhausted: false };
      if (exhausted) return [];
      const items: Record<string, unknown>[] = [];
      let next = startKey;
      do {
        const out = await db.send(
          new QueryCommand({
            ...newestFirst(accountId),
            Limit: limit - items.length,
            ExclusiveStartKey: next,
          }),
        );
        items.push(...(out.Items ?? []));
        next = out.LastEvaluatedKey;
      } while (next && items.length < limit);
      return items.map(toJob);
    },
  };
};

export type JobStore = ReturnType<typeof createJobStore>;
