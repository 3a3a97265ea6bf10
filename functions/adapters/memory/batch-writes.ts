/**
 * A batch's acceptance writes (domain/batches/batch-acceptance.ts, BatchWrites) in memory, as the
 * DynamoDB adapter (adapters/dynamodb/batch-writes.ts) makes them, on the table it is handed
 * (table.ts): its jobs are the job store's and the batch store's, its units are the usage store's
 * month (queued units, which the usage store gives back or records job by job). The month's units
 * for all the jobs are held in one step, all or none, refused whole past the quota; sent twice,
 * the first job's unit tells it landed. An item key is claimed only when no live record has it
 * or the live one names the job it replaces, and kept as long as an Idempotency-Key. The batch
 * contract (test/contract/batches.contract.ts) runs the same cases against both.
 */
import type { BatchWrites, ItemKeyRecord } from '../../domain/batches/batch-acceptance.js';
import { epochSeconds, isoNow } from '../../domain/common/clock.js';
import { ServiceError } from '../../domain/common/errors.js';
import type { Clock } from '../../domain/common/ports.js';
import { type Job, newJobRecord } from '../../domain/jobs/jobs.js';
import { IDEMPOTENCY_RETENTION_SECONDS } from '../../domain/renders/idempotency.js';
import { unitCap } from '../../settings.js';
import { createMemoryTable, itemKeyKey, jobKey, type MemoryTable, monthKey, usageMonth } from './table.js';

export const createMemoryBatchWrites = (
  clock: Clock,
  { recordRetentionSeconds }: { readonly recordRetentionSeconds: number },
  table: MemoryTable = createMemoryTable(),
): BatchWrites => {
  const { jobs, itemKeys } = table;
  /** Whole records, as the adapter's BatchWriteItem puts them (no condition: the ids are new). */
  const put = (job: Job) =>
    jobs.set(jobKey(job.account_id, job.id), {
      job: structuredClone(job),
      expiresAt: epochSeconds(new Date(job.created_at)) + recordRetentionSeconds,
    });

  return {
    async createJobs(news, lease) {
      const at = isoNow(clock.now());
      const created = news.map((job) => newJobRecord(job, at, lease));
      for (const job of created) put(job);
      return created;
    },

    async holdJobs(held, leaseUntil) {
      const at = isoNow(clock.now());
      const out = held.map((job): Job => ({ ...job, unit: 'held', lease_until: leaseUntil, updated_at: at }));
      for (const job of out) put(job);
      return out;
    },

    async deleteJobs(gone) {
      for (const job of gone) jobs.delete(jobKey(job.account_id, job.id));
    },

    async getJobs(accountId, ids) {
      const found = new Map<string, Job>();
      const now = epochSeconds(clock.now());
      for (const id of ids) {
        const stored = jobs.get(jobKey(accountId, id));
        if (stored && stored.expiresAt > now) found.set(id, structuredClone(stored.job));
      }
      return found;
    },

    async reserveUnits(accountId, plan, month, jobIds) {
      const first = jobIds[0];
      if (first === undefined) return;
      const m = usageMonth(table, accountId, month);
      const fits = (m.rendersUsed ?? 0) <= unitCap(plan) - jobIds.length;
      if (!fits || m.queued.has(first) || m.holders.has(first)) {
        // This very write, sent again?
        if (m.queued.has(first)) return;
        throw new ServiceError('PLAN_QUOTA_EXCEEDED', 'The monthly quota cannot cover the batch');
      }
      m.rendersUsed = (m.rendersUsed ?? 0) + jobIds.length;
      for (const id of jobIds) m.queued.add(id);
    },

    async releaseUnits(accountId, month, jobIds) {
      const first = jobIds[0];
      const m = table.months.get(monthKey(accountId, month));
      // None held (never, or given back already).
      if (first === undefined || !m?.queued.has(first)) return;
      m.rendersUsed = (m.rendersUsed ?? 0) - jobIds.length;
      for (const id of jobIds) m.queued.delete(id);
    },

    async itemKeys(accountId, keys) {
      const found = new Map<string, ItemKeyRecord>();
      const now = epochSeconds(clock.now());
      for (const key of keys) {
        const stored = itemKeys.get(itemKeyKey(accountId, key));
        if (stored && stored.expiresAt >= now)
          found.set(key, { bodyHash: stored.bodyHash, jobId: stored.jobId });
      }
      return found;
    },

    async claimItemKey(accountId, key, record, replacing) {
      const now = epochSeconds(clock.now());
      const at = itemKeyKey(accountId, key);
      const stored = itemKeys.get(at);
      if (stored && stored.expiresAt >= now && stored.jobId !== replacing) {
        // This very claim, made before?
        return stored.jobId === record.jobId;
      }
      itemKeys.set(at, {
        bodyHash: record.bodyHash,
        jobId: record.jobId,
        batchId: record.batchId,
        expiresAt: now + IDEMPOTENCY_RETENTION_SECONDS,
      });
      return true;
    },

    async releaseItemKey(accountId, key, jobId) {
      const at = itemKeyKey(accountId, key);
      if (itemKeys.get(at)?.jobId === jobId) itemKeys.delete(at);
    },
  };
};
