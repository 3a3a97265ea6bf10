/**
 * A batch's record, the port of its store, and the counter that counts its ended jobs once each
 * and completes it once: shared by the API (batches.ts), the render queue's consumer and the
 * sweeper, which end batches' jobs.
 */

import type { Page } from '../common/pagination.js';
import type { JobEvents } from '../common/ports.js';
import { isEnded, type Job, type JobStatus } from '../jobs/jobs.js';
import type { BatchOrders } from './batch-queue.js';

/** processing: some job has not ended yet; completed: every job ended (completed, failed or cancelled). */
export type BatchStatus = 'processing' | 'completed';

export interface Batch {
  readonly id: string;
  readonly account_id: string;
  readonly status: BatchStatus;
  /** Its jobs, one per item. */
  readonly total: number;
  /** Jobs that ended, counted once each. */
  readonly completed: number;
  readonly failed: number;
  /** Jobs cancelled while pending (POST /v1/batches/{id}/cancel). Absent on batches made before cancel: 0. */
  readonly cancelled?: number;
  readonly template_id: string | null;
  readonly template_version: number | null;
  /** The account's webhook endpoint told `batch.completed`; null: none. */
  readonly webhook_id: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly completed_at: string | null;
  /**
   * Items that are an earlier item's job again (their idempotency key replayed), by item index;
   * absent: none. Every other item's job carries this batch's id.
   */
  readonly replayed?: Readonly<Record<string, string>>;
  /** What is built once it completed (batch-outputs.ts); absent: nothing. */
  readonly output?: BatchOutput;
  /** What was built; absent until then. */
  readonly outputs?: BatchOutputs;
}

/** What a batch asked to be built once it completed. */
export interface BatchOutput {
  readonly merged_pdf: boolean;
  readonly zip: boolean;
}

/** What was built: object keys in the PDF bucket (null: not asked for, or nothing to put in it). */
export interface BatchOutputs {
  readonly status: 'ready' | 'failed';
  readonly merged_pdf_key: string | null;
  readonly zip_key: string | null;
  /** Why it failed (status failed); safe to show. */
  readonly error: string | null;
  readonly built_at: string;
}

/** How a job of a batch ended, as the batch counts it. */
export type EndedHow = Exclude<JobStatus, 'pending' | 'rendering'>;

/** The batch's jobs counted as ended, however they ended. */
export const endedCount = (batch: Pick<Batch, 'completed' | 'failed' | 'cancelled'>): number =>
  batch.completed + batch.failed + (batch.cancelled ?? 0);

export const wantsOutputs = (batch: Pick<Batch, 'output'>): boolean =>
  batch.output?.merged_pdf === true || batch.output?.zip === true;

export type NewBatch = Pick<
  Batch,
  'id' | 'account_id' | 'total' | 'template_id' | 'template_version' | 'webhook_id' | 'replayed' | 'output'
> & {
  /** Jobs that ended already (replayed items'), counted from the start. */
  readonly ended?: { readonly completed: readonly string[]; readonly failed: readonly string[] };
};

/** A new batch as every store writes it (made at `at`): processing, its replayed items' ended jobs counted. */
export const newBatchRecord = ({ ended, ...batch }: NewBatch, at: string): Batch => ({
  ...batch,
  status: 'processing',
  completed: ended?.completed.length ?? 0,
  failed: ended?.failed.length ?? 0,
  created_at: at,
  updated_at: at,
  completed_at: null,
});

/** The jobs a new batch counts as ended from the start (its replayed items' that ended). */
export const endedAtCreation = ({ ended }: NewBatch): string[] => [
  ...(ended?.completed ?? []),
  ...(ended?.failed ?? []),
];

/** A batch's jobs by status; pending and rendering are read from its jobs, the rest are its counters. */
export interface BatchCounts {
  readonly pending: number;
  readonly rendering: number;
  readonly completed: number;
  readonly failed: number;
  readonly cancelled: number;
}

export interface BatchView {
  readonly batch: Batch;
  readonly counts: BatchCounts;
  /** Fresh links to its built outputs (batch-outputs.ts), when they are ready; absent: none. */
  readonly outputUrls?: { readonly mergedPdf: string | null; readonly zip: string | null };
}

/** A job of the batch as its listing knows it (the index may lag a moment behind the job). */
export interface BatchJobStatus {
  readonly id: string;
  readonly status: Job['status'];
  readonly updated_at: string;
}

export interface BatchStore {
  /** A new batch, processing; refused if the id exists. */
  create(batch: NewBatch): Promise<Batch>;
  get(accountId: string, batchId: string): Promise<Batch | undefined>;
  /** Newest first. */
  list(accountId: string, page: Page): Promise<Batch[]>;
  /**
   * Counts job `jobId` as ended (`how`) once: undefined when it was counted already (or there is
   * no such batch), else the batch as this count left it.
   */
  countEnded(accountId: string, batchId: string, jobId: string, how: EndedHow): Promise<Batch | undefined>;
  /** processing → completed; undefined when it was completed already (another count did it). */
  complete(batch: Batch): Promise<Batch | undefined>;
  /**
   * The sweeper's fence against an acceptance that died (batches.ts): true when batch `batchId`
   * was never accepted (no record; a marker is left in its place, so that its acceptance, the
   * batch's creation, can no longer happen, and it is never shown), false when it was. Either
   * answer is final.
   */
  cancel(accountId: string, batchId: string): Promise<boolean>;
  /** The batch's jobs in item order. */
  jobs(accountId: string, batchId: string, page: Page): Promise<Job[]>;
  /** Every job of the batch with its status, in item order. */
  statuses(accountId: string, batchId: string): Promise<BatchJobStatus[]>;
  /** The ids of the jobs counted as ended (read consistently). */
  counted(accountId: string, batchId: string): Promise<ReadonlySet<string>>;
  /**
   * A completed batch's outputs, recorded once they are built (batch-outputs.ts): undefined when
   * they were ready already (another build recorded them), else the batch as it now is.
   */
  recordOutputs(batch: Batch, outputs: BatchOutputs): Promise<Batch | undefined>;
}

/** Told once a batch completed (the webhooks' `batch.completed`). */
export interface BatchEvents {
  completed(view: BatchView): Promise<void>;
}

export const NO_BATCH_EVENTS: BatchEvents = { completed: async () => {} };

/** Counts a batch's ended jobs once each, and completes the batch (once) when the last one ended. */
export const createBatchCounter = (deps: {
  readonly batches: BatchStore;
  readonly events?: BatchEvents;
  /** The batch's order goes once it completed (absent: left to the bucket's lifecycle rule). */
  readonly orders?: Pick<BatchOrders, 'delete'>;
  readonly onFault: (message: string, error: unknown) => void;
}) => {
  const { batches } = deps;
  const events = deps.events ?? NO_BATCH_EVENTS;
  /** Counts from the batch's counters, and its open jobs split by what its index says of them. */
  const view = async (batch: Batch, statuses?: readonly BatchJobStatus[]): Promise<BatchView> => {
    const open = batch.total - endedCount(batch);
    const rendering =
      open === 0 || !statuses ? 0 : Math.min(open, statuses.filter((s) => s.status === 'rendering').length);
    return {
      batch,
      counts: {
        pending: open - rendering,
        rendering,
        completed: batch.completed,
        failed: batch.failed,
        cancelled: batch.cancelled ?? 0,
      },
    };
  };

  /** The batch completed by this count, if it did: moved once, and told once. */
  const completeIfDone = async (batch: Batch): Promise<Batch> => {
    if (batch.status !== 'processing' || endedCount(batch) < batch.total) return batch;
    const completed = await batches.complete(batch);
    if (!completed) return (await batches.get(batch.account_id, batch.id)) ?? batch;
    // A batch with outputs keeps its order (its items' file names) for their builder, which deletes it.
    if (!wantsOutputs(completed))
      await deps.orders
        ?.delete(batch.account_id, batch.id)
        .catch((e) =>
          deps.onFault("deleting a completed batch's order failed (the lifecycle rule removes it)", e),
        );
    try {
      await events.completed(await view(completed));
    } catch (e) {
      deps.onFault('publishing batch.completed failed', e);
    }
    return completed;
  };

  /** One ended job of a batch, counted once (whoever calls it, however often). */
  const jobEnded = async (job: Pick<Job, 'account_id' | 'id' | 'status' | 'batch_id'>): Promise<void> => {
    if (!job.batch_id || !isEnded(job.status)) return;
    const counted = await batches.countEnded(job.account_id, job.batch_id, job.id, job.status as EndedHow);
    if (counted) await completeIfDone(counted);
  };

  return {
    view,
    completeIfDone,
    jobEnded,
    /** JobEvents for the consumer and the API: a batch's job that ended is counted on its batch. */
    jobEvents: { ended: (job: Job) => jobEnded(job) } satisfies JobEvents,
  };
};
