/**
 * The BatchStore (domain/batches/batch-counter.ts) in memory, as the DynamoDB adapter
 * (adapters/dynamodb/batches.ts) behaves: a batch counts each of its jobs that ended once (the
 * job's id joins the set of counted ones in the same step that adds to `completed` or `failed`),
 * completes once (processing → completed), and lists its jobs in item (job id) order from the
 * jobs of the table it is handed (table.ts), which the job store and a batch's writes share. A
 * batch's record expires with its jobs' records (gone from reads at once, as the adapter filters
 * them). The batch contract (test/contract/batches.contract.ts) runs the same cases against both.
 */
import {
  type Batch,
  type BatchJobStatus,
  type BatchStore,
  endedAtCreation,
  type NewBatch,
  newBatchRecord,
} from '../../domain/batches/batch-counter.js';
import { epochSeconds, isoNow } from '../../domain/common/clock.js';
import type { Clock } from '../../domain/common/ports.js';
import type { Job } from '../../domain/jobs/jobs.js';
import { batchKey, conditionFailed, createMemoryTable, type MemoryTable, type StoredBatch } from './table.js';

export interface MemoryBatchStoreOptions {
  /** How long a batch's record is kept: as long as its jobs' (domain/jobs.ts, jobRecordRetentionSeconds). */
  readonly recordRetentionSeconds: number;
}

export const createMemoryBatchStore = (
  clock: Clock,
  { recordRetentionSeconds }: MemoryBatchStoreOptions,
  table: MemoryTable = createMemoryTable(),
): BatchStore => {
  const { batches } = table;
  const now = () => isoNow(clock.now());
  const live = (s: StoredBatch | undefined): s is StoredBatch =>
    s !== undefined && !s.cancelled && s.expiresAt > epochSeconds(clock.now());

  const read = (accountId: string, batchId: string): Batch | undefined => {
    const stored = batches.get(batchKey(accountId, batchId));
    return live(stored) ? structuredClone(stored.batch) : undefined;
  };

  /** The batch's jobs in item order: the table's jobs that carry its id (the adapter's index, GSI2). */
  const jobsOf = (accountId: string, batchId: string): Job[] =>
    [...table.jobs.values()]
      .map((s) => s.job)
      .filter((job) => job.account_id === accountId && job.batch_id === batchId)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

  return {
    async create(batch: NewBatch): Promise<Batch> {
      const key = batchKey(batch.account_id, batch.id);
      if (batches.has(key)) throw conditionFailed();
      const record = newBatchRecord(batch, now());
      batches.set(key, {
        batch: structuredClone(record),
        ended: new Set(endedAtCreation(batch)),
        expiresAt: epochSeconds(new Date(record.created_at)) + recordRetentionSeconds,
      });
      return record;
    },

    get: async (accountId, batchId) => read(accountId, batchId),

    async list(accountId, { limit, offset }) {
      return [...batches.values()]
        .filter((s) => s.batch.account_id === accountId && live(s))
        .sort((a, b) => (a.batch.id < b.batch.id ? 1 : -1))
        .slice(offset, offset + limit)
        .map((s) => structuredClone(s.batch));
    },

    async countEnded(accountId, batchId, jobId, how) {
      const stored = batches.get(batchKey(accountId, batchId));
      if (!stored || stored.ended.has(jobId)) return undefined;
      if (stored.cancelled) {
        stored.ended.add(jobId);
        return undefined;
      }
      stored.ended.add(jobId);
      stored.batch = { ...stored.batch, [how]: (stored.batch[how] ?? 0) + 1, updated_at: now() };
      return read(accountId, batchId);
    },

    async complete(batch) {
      const stored = batches.get(batchKey(batch.account_id, batch.id));
      if (stored?.cancelled || stored?.batch.status !== 'processing') return undefined;
      const at = now();
      stored.batch = { ...stored.batch, status: 'completed', completed_at: at, updated_at: at };
      return read(batch.account_id, batch.id);
    },

    async cancel(accountId, batchId) {
      const key = batchKey(accountId, batchId);
      const stored = batches.get(key);
      if (stored) return stored.cancelled === true;
      const at = now();
      batches.set(key, {
        // A marker, not a batch: never read as one (live() leaves it out).
        batch: {
          ...newBatchRecord(
            {
              id: batchId,
              account_id: accountId,
              total: 0,
              template_id: null,
              template_version: null,
              webhook_id: null,
            },
            at,
          ),
        },
        ended: new Set(),
        expiresAt: epochSeconds(clock.now()) + recordRetentionSeconds,
        cancelled: true,
      });
      return true;
    },

    async recordOutputs(batch, outputs) {
      const stored = batches.get(batchKey(batch.account_id, batch.id));
      if (!live(stored) || stored.batch.outputs?.status === 'ready') return undefined;
      stored.batch = { ...stored.batch, outputs: structuredClone(outputs), updated_at: now() };
      return read(batch.account_id, batch.id);
    },

    async jobs(accountId, batchId, { limit, offset }) {
      return jobsOf(accountId, batchId)
        .slice(offset, offset + limit)
        .map((job) => structuredClone(job));
    },

    async statuses(accountId, batchId): Promise<BatchJobStatus[]> {
      return jobsOf(accountId, batchId).map((job) => ({
        id: job.id,
        status: job.status,
        updated_at: job.updated_at,
      }));
    },

    async counted(accountId, batchId) {
      return new Set(batches.get(batchKey(accountId, batchId))?.ended);
    },
  };
};
