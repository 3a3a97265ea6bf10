/**
 * The single table in memory (functions/table.ts): what the memory stores keep, in one place, so
 * that stores which share DynamoDB's table share it here too. A batch's writes (batch-writes.ts)
 * put jobs that the job store then renders and the batch store lists, and hold units of the month
 * that the usage store then gives back or records, as the DynamoDB adapters do on one table. Each
 * store takes the table it is handed (a new one when none is: a store on its own).
 */
import type { Batch } from '../../domain/batches/batch-counter.js';
import type { Job } from '../../domain/jobs/jobs.js';

/** A job's record and when it expires (epoch seconds, as the table's TTL). */
export interface StoredJob {
  job: Job;
  readonly expiresAt: number;
}

/** A month's usage of an account (adapters/dynamodb/usage.ts): counters and the jobs holding units. */
export interface UsageMonth {
  rendersUsed?: number;
  inFlight?: number;
  pdfBytes: number;
  renderMs: number;
  /** Jobs holding a running render's unit. */
  holders: Set<string>;
  /** Jobs holding a queued job's unit (reserveQueued, BatchWrites.reserveUnits). */
  queued: Set<string>;
  /** Async renders of their own holding a unit (reserveAsync): the plan's queue depth bounds them. */
  async: Set<string>;
}

/** A batch's record, the ids of its jobs counted as ended, and when it expires. */
export interface StoredBatch {
  batch: Batch;
  readonly ended: Set<string>;
  readonly expiresAt: number;
  /** The sweeper's marker in the place of a batch whose acceptance died: never shown. */
  readonly cancelled?: true;
}

/** A batch item's idempotency key (adapters/dynamodb/batch-writes.ts, claimItemKeyParams). */
export interface StoredItemKey {
  readonly bodyHash: string;
  readonly jobId: string;
  readonly batchId: string;
  readonly expiresAt: number;
}

export interface MemoryTable {
  /** By jobKey(account, job). */
  readonly jobs: Map<string, StoredJob>;
  /** By monthKey(account, month). */
  readonly months: Map<string, UsageMonth>;
  /** Rate windows' counts, by JSON [account, window, minute]. */
  readonly windows: Map<string, number>;
  /** By batchKey(account, batch). */
  readonly batches: Map<string, StoredBatch>;
  /** By itemKeyKey(account, key). */
  readonly itemKeys: Map<string, StoredItemKey>;
}

export const createMemoryTable = (): MemoryTable => ({
  jobs: new Map(),
  months: new Map(),
  windows: new Map(),
  batches: new Map(),
  itemKeys: new Map(),
});

export const jobKey = (accountId: string, jobId: string): string => JSON.stringify([accountId, jobId]);
export const monthKey = (accountId: string, month: string): string => JSON.stringify([accountId, month]);
export const batchKey = (accountId: string, batchId: string): string => JSON.stringify([accountId, batchId]);
export const itemKeyKey = (accountId: string, key: string): string => JSON.stringify([accountId, key]);

/** The account's month, made empty on first use. */
export const usageMonth = (table: MemoryTable, accountId: string, month: string): UsageMonth => {
  const key = monthKey(accountId, month);
  let found = table.months.get(key);
  if (!found) {
    found = { pdfBytes: 0, renderMs: 0, holders: new Set(), queued: new Set(), async: new Set() };
    table.months.set(key, found);
  }
  return found;
};

/** A rejection named as DynamoDB's for a condition that failed (the domain tells it by that name). */
export const conditionFailed = (): Error => {
  const error = new Error('The conditional request failed');
  error.name = 'ConditionalCheckFailedException';
  return error;
};
