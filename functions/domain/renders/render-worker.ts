/**
 * The render queue's consumer: one message names one async job (async-renders.ts); this renders
 * it through the same job lifecycle (job-lifecycle.ts) and renderer call (render-call.ts) as a
 * sync render, once, whatever the queue does.
 *
 * - Delivered twice (SQS delivers at least once): a job that ended is acknowledged without
 *   rendering; one rendering under a live lease is acknowledged too (its holder finishes it, or the
 *   sweeper re-queues it once the lease runs out).
 * - The claim (pending, or rendering past its lease → rendering, `attempts + 1`) is a conditional
 *   write on the attempt read: two consumers never render the same attempt, and every later write
 *   of the holder (renew, complete, fail, requeue) is fenced by that attempt.
 * - A batch's job arrives still `reserving`: its message was sent only once the batch was
 *   accepted, so its claim holds it (batches.ts).
 * - A retryable failure (the renderer crashed or was unreachable, busy, a storage or service
 *   fault) puts the job back in the queue while attempts remain, with a backoff (`retry`); the
 *   last attempt fails it for good. Final failures (templating, limits, the page's timeout) fail
 *   the job at once. Failing gives the unit back, as for a sync render.
 */

import type { BatchOrderReader } from '../batches/batch-queue.js';
import type { Clock, RenderFailureCode, RenderResult } from '../common/ports.js';
import { FAULT, type JobLifecycle } from '../jobs/job-lifecycle.js';
import { isOpen, type Job, type JobError, type JobStore } from '../jobs/jobs.js';
import { isMergeOrder, type StoredMergeOrder } from '../merges/merge-order.js';
import type { AnyStoredOrder, RenderMessage, RenderOrders } from './async-renders.js';
import { keepOrder } from './kept-orders.js';
import type { RenderCall } from './render-call.js';

export interface RenderWorkerDeps {
  /** Claim, renew, complete, fail, requeue: every write to the job. */
  readonly lifecycle: JobLifecycle;
  /** The renderer, with the upload link and the limits (an async render's). */
  readonly render: RenderCall;
  /** Read only: the job a message names, and a failed job as it ended. */
  readonly jobs: Pick<JobStore, 'get'>;
  readonly orders: RenderOrders;
  /** A batch's jobs' orders (one per batch, read once); absent: every job has an order of its own. */
  readonly batchOrders?: BatchOrderReader;
  readonly clock: Clock;
  readonly limits: {
    readonly asyncMaxAttempts: number;
    readonly asyncRetryBaseSeconds: number;
  };
  readonly onFault: (message: string, error: unknown) => void;
  /**
   * Runs a claimed async merge (domain/merges/merges.ts `run`): the job as it ended, completed or
   * failed; throws on a fault of ours (retried as a render's is). Absent: a merge's message fails it.
   */
  readonly merges?: {
    run(claimed: Job, month: string, order: StoredMergeOrder): Promise<Job>;
  };
}

/** What became of a message: acknowledge it (`done`), or let it come back after `delaySeconds`. */
export type WorkOutcome =
  | { readonly kind: 'done'; readonly why: string; readonly job?: Job }
  | { readonly kind: 'retry'; readonly delaySeconds: number; readonly job: Job };

/** Failures another attempt may not repeat: the renderer, its capacity, storage. */
export const RETRYABLE_FAILURES: ReadonlySet<RenderFailureCode> = new Set([
  'PDF_RENDERING_FAILED',
  'PDF_STORAGE_FAILED',
  'SERVICE_BUSY',
]);

const ORDER_MISSING: JobError = {
  code: 'INTERNAL_ERROR',
  message: "The render's order was not found (a fault of the service); the render unit was given back.",
};

/** SQS holds a message back at most 15 minutes. */
const MAX_DELAY_SECONDS = 900;

export const retryDelaySeconds = (baseSeconds: number, attempt: number): number =>
  Math.min(MAX_DELAY_SECONDS, baseSeconds * 2 ** Math.max(0, attempt - 1));

export const createRenderWorker = (deps: RenderWorkerDeps) => {
  const { lifecycle, jobs, orders, clock } = deps;
  const maxAttempts = deps.limits.asyncMaxAttempts;
  const baseSeconds = deps.limits.asyncRetryBaseSeconds;

  const done = (why: string, job?: Job): WorkOutcome => ({ kind: 'done', why, ...(job ? { job } : {}) });

  /** Back to the queue for another attempt after a backoff, if the job is still this attempt's. */
  const retry = async (claimed: Job): Promise<WorkOutcome> => {
    const delaySeconds = retryDelaySeconds(baseSeconds, claimed.attempts ?? 1);
    const requeued = await lifecycle.requeue(claimed, delaySeconds);
    return requeued ? { kind: 'retry', delaySeconds, job: requeued } : done('taken over', claimed);
  };

  /** A batch's job whose order is its batch's (deleted with the batch), or one with its own order. */
  const inBatchOrder = (job: Job): job is Job & { batch_id: string; batch_item: number } =>
    deps.batchOrders !== undefined && typeof job.batch_id === 'string' && job.batch_item !== undefined;

  const orderOf = (job: Job): Promise<AnyStoredOrder | undefined> =>
    inBatchOrder(job)
      ? (deps.batchOrders as BatchOrderReader).item(job.account_id, job.batch_id, job.batch_item)
      : orders.get(job.account_id, job.id);

  const ended = async (job: Job, outcome: Job | undefined, why: string): Promise<WorkOutcome> => {
    if (!inBatchOrder(job)) {
      await orders
        .delete(job.account_id, job.id)
        .catch((e) => deps.onFault('deleting a render order failed (the lifecycle rule removes it)', e));
    }
    return done(why, outcome ?? job);
  };

  /** The claimed job's order, as the render call takes it; undefined when it is missing. */
  const acceptedOf = async (claimed: Job, month: string, reading: Promise<AnyStoredOrder | undefined>) => {
    const order = await reading;
    if (!order || order.kind === 'merge') return undefined;
    const { v: _, ...rest } = order;
    return { job: claimed, month, ...rest };
  };
  type Accepted = NonNullable<Awaited<ReturnType<typeof acceptedOf>>>;

  /** A claimed job whose order is missing fails (its unit given back). */
  const orderMissing = async (claimed: Job, month: string): Promise<WorkOutcome> =>
    ended(claimed, await lifecycle.fail(claimed, month, ORDER_MISSING), 'order missing');

  /** A claimed async merge: run with its lease renewed; its order stays for another attempt until it ended. */
  const merge = async (
    claimed: Job,
    month: string,
    reading: Promise<AnyStoredOrder | undefined>,
  ): Promise<WorkOutcome> => {
    const order = await reading;
    if (!deps.merges || !isMergeOrder(order)) return orderMissing(claimed, month);
    const renewal = lifecycle.renewing(claimed);
    try {
      const outcome = await deps.merges.run(claimed, month, order);
      return await ended(claimed, outcome, outcome.status === 'completed' ? 'merged' : 'merge failed');
    } catch (e) {
      return await faulted(claimed, month, e);
    } finally {
      renewal.stop();
    }
  };

  const render = async (
    claimed: Job,
    month: string,
    reading: Promise<AnyStoredOrder | undefined>,
  ): Promise<WorkOutcome> => {
    if (claimed.kind === 'merge') return merge(claimed, month, reading);
    const accepted = await acceptedOf(claimed, month, reading);
    if (!accepted) return orderMissing(claimed, month);
    const renewal = lifecycle.renewing(claimed);
    try {
      return await settle(accepted, await deps.render(accepted));
    } catch (e) {
      return await faulted(claimed, month, e);
    } finally {
      renewal.stop();
    }
  };

  /** What a render's result makes of its job: completed, retried, or failed. */
  const settle = async (accepted: Accepted, result: RenderResult): Promise<WorkOutcome> => {
    const claimed = accepted.job;
    if (result.ok) {
      // A job that prints page numbers keeps its order for merges (kept-orders.ts), written beside its completion.
      const [completed] = await Promise.all([
        lifecycle.complete(accepted, claimed, result),
        keepOrder(orders, accepted, deps.onFault),
      ]);
      return ended(claimed, completed, 'completed');
    }
    if (RETRYABLE_FAILURES.has(result.code) && (claimed.attempts ?? 1) < maxAttempts) {
      deps.onFault(
        `async render attempt ${claimed.attempts} failed (${result.code}): retrying`,
        result.message,
      );
      return await retry(claimed);
    }
    await lifecycle.failRender(accepted, claimed, result);
    return ended(claimed, await jobs.get(claimed.account_id, claimed.id, true), 'failed');
  };

  /** A fault of ours (table, bucket): another attempt if one is left, else the job fails now. */
  const faulted = async (claimed: Job, month: string, e: unknown): Promise<WorkOutcome> => {
    deps.onFault(`async render of ${claimed.id} failed`, e);
    if ((claimed.attempts ?? 1) < maxAttempts) return await retry(claimed);
    return ended(claimed, await lifecycle.fail(claimed, month, FAULT), 'failed by a fault');
  };

  /**
   * The job a message names, claimed for a render; or what became of the message when it is not
   * to be rendered. Throws only when nothing could be decided.
   */
  const take = async (
    message: RenderMessage,
  ): Promise<
    | { readonly outcome: WorkOutcome }
    | { readonly claimed: Job; readonly month: string; readonly reading: Promise<AnyStoredOrder | undefined> }
  > => {
    const job = await jobs.get(message.account_id, message.job_id, true);
    if (!job) return { outcome: done('no such job') };
    // A batch's job is queued by its message: one is sent only once its batch was accepted
    // (batches.ts), so a job still `reserving` is its accepted batch's, and its claim holds it
    // (unit `held`) in the same write. It was held first and then claimed: one more write of the
    // job per invoice (issue 43). A claim refused leaves it to whoever took it, or to the sweeper.
    const accepted = job.status === 'pending' && job.unit === 'reserving' && Boolean(job.batch_id);
    if (!isOpen(job)) return { outcome: done(`already ${job.status}`, job) };
    const now = clock.now().getTime();
    if (job.status === 'rendering' && (job.lease_until ?? 0) >= now)
      return { outcome: done('rendering elsewhere', job) };
    // Still being accepted (its unit not yet held), or no attempt left: the sweeper's to settle.
    if ((job.unit !== 'held' && !accepted) || job.usage_month === undefined)
      return { outcome: done('not queued', job) };
    if ((job.attempts ?? 0) >= maxAttempts) return { outcome: done('no attempt left', job) };
    // The order is read beside the claim (the claim decides whether it is used).
    const reading = orderOf(job);
    reading.catch(() => {});
    const claimed = await lifecycle.claim(job, now);
    if (!claimed) return { outcome: done('claimed elsewhere', job) };
    return { claimed, month: job.usage_month, reading };
  };

  return {
    maxAttempts,

    /** Renders the job a message names, at most once per attempt; throws only when nothing could be decided. */
    async handle(message: RenderMessage): Promise<WorkOutcome> {
      const taken = await take(message);
      if ('outcome' in taken) return taken.outcome;
      return render(taken.claimed, taken.month, taken.reading);
    },

    /** For a batch run (render-run.ts): the same steps as `handle`, one by one. */
    steps: { take, acceptedOf, orderMissing, settle, faulted, done, render },
  };
};

export type RenderWorker = ReturnType<typeof createRenderWorker>;
