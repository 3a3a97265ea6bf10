/**
 * A batch's acceptance writes on the single table (domain/batch-acceptance.ts, BatchWrites): jobs
 * 25 to a BatchWriteItem (unprocessed items sent again), the month's units for every job in one
 * conditional update, item keys one conditional put each. Requests are built by the pure
 * `*Params()` functions below.
 */
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  type PutCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { BatchWrites, ItemKeyRecord } from '../../domain/batches/batch-acceptance.js';
import { epochSeconds, isoNow } from '../../domain/common/clock.js';
import { ServiceError } from '../../domain/common/errors.js';
import type { Clock } from '../../domain/common/ports.js';
import type { Job } from '../../domain/jobs/jobs.js';
import { newJobRecord } from '../../domain/jobs/jobs.js';
// An item key is kept as long as POST /v1/pdf's Idempotency-Key.
import { IDEMPOTENCY_RETENTION_SECONDS } from '../../domain/renders/idempotency.js';
import { unitCap } from '../../settings.js';
import { isConditionFailure, withinLimit } from './conditional.js';
import { createJobParams, toJob } from './jobs.js';
import { batchItemKeyKey, ENTITY, jobKey, PK, SK, TTL, usageKey } from './keys.js';
import { HOLDERS, QUEUED_HOLDERS } from './usage.js';

/** BatchWriteItem's and BatchGetItem's most requests per call. */
const WRITE_WIDTH = 25;
const GET_WIDTH = 100;
/** Calls in flight at once. */
const PARALLEL = 4;
const ATTEMPTS = 8;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Units for `jobIds` (not empty), all in one write: refused when they would take the month past
 * `limit`, or when the first job holds one already (the write adds all or none, so the first
 * job's unit tells whether this write landed).
 */
export const reserveUnitsParams = (
  tableName: string,
  o: { accountId: string; month: string; limit: number; jobIds: readonly string[] },
): UpdateCommandInput => {
  const units = withinLimit('renders_used', ':most', { adding: o.jobIds.length, limit: o.limit });
  return {
    TableName: tableName,
    Key: usageKey(o.accountId, o.month),
    UpdateExpression: 'ADD renders_used :n, #queued :jobs SET #type = :type',
    ConditionExpression: `${units.condition} AND NOT contains(#queued, :first) AND NOT contains(#holders, :first)`,
    ExpressionAttributeNames: { '#type': 'type', '#holders': HOLDERS, '#queued': QUEUED_HOLDERS },
    ExpressionAttributeValues: {
      ':n': o.jobIds.length,
      ':most': units.most,
      ':type': ENTITY.usage,
      ':jobs': new Set(o.jobIds),
      ':first': o.jobIds[0],
    },
  };
};

/** Gives back the units `reserveUnitsParams` held for `jobIds`; refused if the first holds none. */
export const releaseUnitsParams = (
  tableName: string,
  o: { accountId: string; month: string; jobIds: readonly string[] },
): UpdateCommandInput => ({
  TableName: tableName,
  Key: usageKey(o.accountId, o.month),
  UpdateExpression: 'ADD renders_used :minus DELETE #queued :jobs',
  ConditionExpression: 'contains(#queued, :first)',
  ExpressionAttributeNames: { '#queued': QUEUED_HOLDERS },
  ExpressionAttributeValues: {
    ':minus': -o.jobIds.length,
    ':jobs': new Set(o.jobIds),
    ':first': o.jobIds[0],
  },
});

/** Claims an item key: no live record has it, or the live one names the job it replaces. */
export const claimItemKeyParams = (
  tableName: string,
  o: {
    accountId: string;
    key: string;
    record: ItemKeyRecord & { batchId: string };
    replacing?: string | undefined;
    now: Date;
  },
): PutCommandInput => ({
  TableName: tableName,
  Item: {
    ...batchItemKeyKey(o.accountId, o.key),
    type: ENTITY.batchItemKey,
    body_hash: o.record.bodyHash,
    job_id: o.record.jobId,
    batch_id: o.record.batchId,
    [TTL]: epochSeconds(o.now) + IDEMPOTENCY_RETENTION_SECONDS,
  },
  ConditionExpression: `attribute_not_exists(${PK}) OR #ttl < :now${o.replacing ? ' OR job_id = :replacing' : ''}`,
  ExpressionAttributeNames: { '#ttl': TTL },
  ExpressionAttributeValues: {
    ':now': epochSeconds(o.now),
    ...(o.replacing ? { ':replacing': o.replacing } : {}),
  },
});

export const createBatchWrites = (
  db: DynamoDBDocumentClient,
  tableName: string,
  clock: Clock,
  { recordRetentionSeconds }: { readonly recordRetentionSeconds: number },
): BatchWrites => {
  type WriteRequest =
    | { PutRequest: { Item: Record<string, unknown> } }
    | { DeleteRequest: { Key: Record<string, unknown> } };

  /** Every request written, 25 to a call, a few calls at once; unprocessed ones sent again with a backoff. */
  const writeAll = async (requests: readonly WriteRequest[]): Promise<void> => {
    const chunks: WriteRequest[][] = [];
    for (let i = 0; i < requests.length; i += WRITE_WIDTH) chunks.push(requests.slice(i, i + WRITE_WIDTH));
    let next = 0;
    const worker = async () => {
      while (next < chunks.length) {
        let pending = chunks[next++] as WriteRequest[];
        for (let attempt = 1; pending.length > 0; attempt++) {
          const out = await db.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending } }));
          pending = (out.UnprocessedItems?.[tableName] ?? []) as WriteRequest[];
          if (pending.length === 0) break;
          if (attempt === ATTEMPTS)
            throw new Error(`DynamoDB left ${pending.length} writes unprocessed ${ATTEMPTS} times`);
          await sleep(Math.min(2000, 25 * 2 ** attempt));
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, chunks.length) }, worker));
  };

  const put = (job: Job): WriteRequest => ({
    PutRequest: {
      Item: createJobParams(tableName, job, epochSeconds(new Date(job.created_at)) + recordRetentionSeconds)
        .Item as Record<string, unknown>,
    },
  });

  return {
    async createJobs(news, lease) {
      const at = isoNow(clock.now());
      const jobs = news.map((job) => newJobRecord(job, at, lease));
      await writeAll(jobs.map(put));
      return jobs;
    },

    async holdJobs(jobs, leaseUntil) {
      const at = isoNow(clock.now());
      // Whole items again, not updates: nothing else writes these jobs before their messages are sent.
      const held = jobs.map(
        (job): Job => ({ ...job, unit: 'held', lease_until: leaseUntil, updated_at: at }),
      );
      // The item's lease index entry (createJobParams) moves with its lease.
      await writeAll(held.map(put));
      return held;
    },

    async deleteJobs(jobs) {
      await writeAll(jobs.map((job) => ({ DeleteRequest: { Key: { ...jobKey(job.account_id, job.id) } } })));
    },

    async getJobs(accountId, ids) {
      const found = new Map<string, Job>();
      const unique = [...new Set(ids)];
      for (let i = 0; i < unique.length; i += GET_WIDTH) {
        let keys: Record<string, unknown>[] = unique
          .slice(i, i + GET_WIDTH)
          .map((id) => ({ ...jobKey(accountId, id) }));
        for (let attempt = 1; keys.length > 0; attempt++) {
          const out = await db.send(
            new BatchGetCommand({ RequestItems: { [tableName]: { Keys: keys, ConsistentRead: true } } }),
          );
          for (const item of out.Responses?.[tableName] ?? []) {
            if (item[TTL] !== undefined && Number(item[TTL]) <= epochSeconds(clock.now())) continue;
            const job = toJob(item);
            found.set(job.id, job);
          }
          keys = (out.UnprocessedKeys?.[tableName]?.Keys ?? []) as Record<string, unknown>[];
          if (keys.length > 0 && attempt === ATTEMPTS) throw new Error('DynamoDB left reads unprocessed');
          if (keys.length > 0) await sleep(25 * 2 ** attempt);
        }
      }
      return found;
    },

    async reserveUnits(accountId, plan, month, jobIds) {
      if (jobIds.length === 0) return;
      try {
        await db.send(
          new UpdateCommand(
            reserveUnitsParams(tableName, { accountId, month, limit: unitCap(plan), jobIds }),
          ),
        );
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        // Refused: by the quota, or because this very write landed on an attempt whose answer was lost.
        const out = await db.send(
          new GetCommand({ TableName: tableName, Key: usageKey(accountId, month), ConsistentRead: true }),
        );
        const held = out.Item?.[QUEUED_HOLDERS] as Set<string> | undefined;
        if (held?.has(jobIds[0] as string)) return;
        throw new ServiceError('PLAN_QUOTA_EXCEEDED', 'The monthly quota cannot cover the batch');
      }
    },

    async releaseUnits(accountId, month, jobIds) {
      if (jobIds.length === 0) return;
      try {
        await db.send(new UpdateCommand(releaseUnitsParams(tableName, { accountId, month, jobIds })));
      } catch (e) {
        // None held (never, or given back already).
        if (!isConditionFailure(e)) throw e;
      }
    },

    async itemKeys(accountId, keys) {
      const found = new Map<string, ItemKeyRecord>();
      const bySk = new Map(keys.map((key) => [batchItemKeyKey(accountId, key)[SK], key]));
      const all = [...bySk.keys()];
      const now = epochSeconds(clock.now());
      for (let i = 0; i < all.length; i += GET_WIDTH) {
        let requested: Record<string, unknown>[] = all
          .slice(i, i + GET_WIDTH)
          .map((sk) => ({ [PK]: batchItemKeyKey(accountId, '')[PK], [SK]: sk }));
        for (let attempt = 1; requested.length > 0; attempt++) {
          const out = await db.send(
            new BatchGetCommand({ RequestItems: { [tableName]: { Keys: requested, ConsistentRead: true } } }),
          );
          for (const item of out.Responses?.[tableName] ?? []) {
            if (Number(item[TTL]) < now) continue;
            const key = bySk.get(String(item[SK]));
            if (key !== undefined)
              found.set(key, { bodyHash: String(item.body_hash), jobId: String(item.job_id) });
          }
          requested = (out.UnprocessedKeys?.[tableName]?.Keys ?? []) as Record<string, unknown>[];
          if (requested.length > 0 && attempt === ATTEMPTS)
            throw new Error('DynamoDB left reads unprocessed');
          if (requested.length > 0) await sleep(25 * 2 ** attempt);
        }
      }
      return found;
    },

    async claimItemKey(accountId, key, record, replacing) {
      try {
        await db.send(
          new PutCommand(
            claimItemKeyParams(tableName, { accountId, key, record, replacing, now: clock.now() }),
          ),
        );
        return true;
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        // This very claim, landed on an attempt whose answer was lost?
        const out = await db.send(
          new GetCommand({
            TableName: tableName,
            Key: batchItemKeyKey(accountId, key),
            ConsistentRead: true,
          }),
        );
        return out.Item?.job_id === record.jobId;
      }
    },

    async releaseItemKey(accountId, key, jobId) {
      try {
        await db.send(
          new DeleteCommand({
            TableName: tableName,
            Key: batchItemKeyKey(accountId, key),
            ConditionExpression: 'job_id = :job',
            ExpressionAttributeValues: { ':job': jobId },
          }),
        );
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
      }
    },
  };
};
