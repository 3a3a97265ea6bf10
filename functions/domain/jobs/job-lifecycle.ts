/**
 * The job lifecycle, one module for every use case that moves a job: the sync render
 * (pdf-jobs.ts), the async submit (async-renders.ts), the render queue's consumer
 * (render-worker.ts), batches (batches.ts) and the sweeper (sweeper.ts) all lease, renew, claim,
 * complete, fail and settle jobs through it, and nothing else writes a job's state.
 *
 * Every job ends, and no unit is held without a job the sweeper can find: a job is written
 * (leased, unit `reserving`) before its unit is reserved (`open`), its holder renews the lease
 * while it works (`renewing`), and a step that fails leaves the job in the sweeper's index rather
 * than being only logged. A job that ends and names a webhook endpoint or a batch is told of
 * (JobEvents), once, by whoever ended it.
 */

import type { Plan } from '../../settings.js';
import { isQueuedAsync, type UsageStore, unitHeldBy } from '../accounts/usage.js';
import { type UsageLedger, usageEntryOf } from '../accounts/usage-ledger.js';
import { isOverload, overloaded, ServiceError } from '../common/errors.js';
import {
  type Clock,
  type Diagnostics,
  type JobEvents,
  NO_JOB_EVENTS,
  type RenderResult,
} from '../common/ports.js';
import type { AcceptedRender } from '../renders/render-order.js';
import { named, PART_FIELD, templateDetail } from '../templates/template-check.js';
import { INTERRUPTED, type Job, type JobError, type JobStore, type NewJob } from './jobs.js';

export interface JobLifecycleLimits {
  /** A pending or rendering job's lease; renewed every third of it. */
  readonly jobLeaseSeconds: number;
  /** An async job's lease while it waits in the render queue. */
  readonly asyncQueueLeaseSeconds: number;
}

export interface JobLifecycleDeps {
  readonly jobs: JobStore;
  readonly usage: UsageStore;
  readonly clock: Clock;
  readonly limits: JobLifecycleLimits;
  /** Told about faults that are answered as a failed job, or left to the sweeper, rather than thrown. */
  readonly onFault: (message: string, error: unknown) => void;
  /** Told when a job that names a webhook endpoint or a batch ends. @default NO_JOB_EVENTS */
  readonly events?: JobEvents;
  /** Where a completed job's unit is recorded for billing (issue 39). @default none */
  readonly ledger?: UsageLedger;
}

/** The holder renews a job's lease (and its idempotency claim) every third of the lease while it works. */
export interface Renewal {
  /** The job left this holder (the sweeper took it over): it must not claim it any more. */
  readonly lost: () => boolean;
  readonly stop: () => void;
}

/** What a fault of ours fails a job with. */
export const FAULT: JobError = {
  code: 'INTERNAL_ERROR',
  message: 'The render was interrupted by a fault of the service; the render unit was given back.',
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const isConditionFailure = (e: unknown) =>
  (e as Error | undefined)?.name === 'ConditionalCheckFailedException';

/** Tries `step` a few times (a counter write that a brief fault refused); false if it never went through. */
const retried = async (step: () => Promise<unknown>, onFault: (error: unknown) => void): Promise<boolean> => {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await step();
      return true;
    } catch (e) {
      onFault(e);
      await sleep(100 * 2 ** attempt);
    }
  }
  return false;
};

export const createJobLifecycle = (deps: JobLifecycleDeps) => {
  const { jobs, usage, clock, limits } = deps;
  const leaseSeconds = limits.jobLeaseSeconds;
  const leaseMs = leaseSeconds * 1000;
  const queueLeaseMs = limits.asyncQueueLeaseSeconds * 1000;

  /** The lease of a job its holder works on now. */
  const leaseUntil = () => clock.now().getTime() + leaseMs;
  /** The lease of a job that waits in the render queue, after `delaySeconds` (a retry's backoff). */
  const queueLeaseUntil = (delaySeconds = 0) => clock.now().getTime() + delaySeconds * 1000 + queueLeaseMs;

  /** A fault whose clean-up is left to the sweeper: the answer names the job and says when it ends. */
  const unsettled = (job: Job, cause: unknown) =>
    isOverload(cause)
      ? overloaded(cause, job.id)
      : new ServiceError(
          'INTERNAL_ERROR',
          `The render was interrupted by a fault of the service; job ${job.id} will be failed and its render unit given back within ${2 * leaseSeconds} s.`,
          { jobId: job.id, cause },
        );

  const interrupted = (job: Job, cause?: unknown) =>
    new ServiceError('PDF_RENDERING_INTERRUPTED', INTERRUPTED.message, {
      jobId: job.id,
      retryAfterSeconds: 1,
      ...(cause === undefined ? {} : { cause }),
    });

  /**
   * The job first, then its unit (a unit is never held without a job the sweeper can find).
   * Refused (404/429, a ServiceError): the job goes and nothing is held. Unknown whether the unit
   * is held: the job's lease runs out and the sweeper settles it.
   */
  const open = async (job: NewJob, plan: Plan, month: string): Promise<Job> => {
    const created = await jobs.create(job, { month, leaseUntil: leaseUntil() });
    try {
      // An async render of its own waits in the queue: its plan's queue depth bounds it, not the
      // concurrency (which bounds the renders requests wait for).
      if (isQueuedAsync(created)) await usage.reserveAsync(created.account_id, plan, month, created.id);
      else await usage.reserveRender(created.account_id, plan, month, created.id);
    } catch (e) {
      if (e instanceof ServiceError) {
        // Refused: nothing is held. A job left behind (the delete failed) is swept as unsure.
        await jobs.discard(created).catch((f) => deps.onFault('discarding a refused job failed', f));
        throw e;
      }
      throw unsettled(created, e);
    }
    return created;
  };

  const renewing = (job: Job, also?: () => Promise<unknown>): Renewal => {
    const state = { lost: false };
    const timer = setInterval(() => {
      jobs.renew(job, leaseUntil()).then(
        (held) => {
          if (!held) {
            state.lost = true;
            clearInterval(timer);
          }
        },
        (e) => deps.onFault('renewing the job lease failed', e),
      );
      also?.().catch((e) => deps.onFault('renewing the idempotency claim failed', e));
    }, leaseMs / 3);
    timer.unref?.();
    return { lost: () => state.lost, stop: () => clearInterval(timer) };
  };

  /** Tells JobEvents of an ended job that names a webhook endpoint, a batch or a destination; never fails the caller. */
  const ended = async (job: Job): Promise<void> => {
    if (!job.webhook_id && !job.batch_id && !job.destination_id) return;
    const events = deps.events ?? NO_JOB_EVENTS;
    await retried(
      () => events.ended(job),
      (f) => deps.onFault('publishing the job event failed', f),
    );
  };

  /**
   * The job fails and its unit comes back (in that order: a sweep between the two sees a unit
   * still `refunding` and waits). A step that does not go through leaves the job in the sweeper's
   * index, which settles it; never only logged. Answers the job as it ended up, when known.
   * `tell`: whether JobEvents hear of it here (a batch counts its own jobs that it failed).
   */
  const fail = async (
    job: Job,
    month: string,
    error: JobError,
    diagnostics: Diagnostics | null = null,
    tell = true,
  ): Promise<Job | undefined> => {
    let failed: Job;
    try {
      failed = await jobs.fail(job, error, diagnostics, leaseUntil());
    } catch (e) {
      if (!isConditionFailure(e)) {
        deps.onFault('marking the job failed failed', e);
        return undefined;
      }
      // No longer open: completed after all (a write that timed out had landed), or swept.
      return jobs.get(job.account_id, job.id, true).catch(() => undefined);
    }
    const refunded = await retried(
      () => usage.releaseRender(job.account_id, month, job.id, unitHeldBy(job)),
      (f) => deps.onFault('quota release failed', f),
    );
    if (refunded) await jobs.settled(job).catch((f) => deps.onFault('settling the job failed', f));
    if (tell) await ended(failed);
    return failed;
  };

  /**
   * The one place a completed job's unit is counted as consumed: the month's totals and the usage
   * ledger's entry, side by side (each once per job, however often this runs). A crash between the
   * job's completion and these is caught up by the sweeper's reconciliation of the month.
   */
  const recordCompleted = async (completed: Job, month: string) => {
    const { ledger } = deps;
    // The unit is used either way; only the totals and the running count would be off.
    await Promise.all([
      retried(
        () =>
          usage.recordRender(
            completed.account_id,
            month,
            completed.file_size_bytes ?? 0,
            completed.render_duration_ms ?? 0,
            completed.id,
            unitHeldBy(completed),
          ),
        (f) => deps.onFault('recording a completed render failed', f),
      ),
      // A job that holds no unit of a month (none was reserved for it) is not billed.
      ledger &&
        completed.usage_month !== undefined &&
        retried(
          () => ledger.record(usageEntryOf(completed, month)),
          (f) => deps.onFault('recording the usage entry failed', f),
        ),
    ]);
  };

  /**
   * The job completes, then the month's totals count it (it no longer runs), its events are told
   * and `alongside` (a sync request's idempotency answer) is written, side by side: none waits for
   * another (a batch's count is one more write).
   */
  const complete = async (
    { month }: Pick<AcceptedRender, 'job' | 'month'>,
    rendering: Job,
    result: Extract<RenderResult, { ok: true }>,
    alongside?: (completed: Job) => Promise<unknown>,
  ): Promise<Job> => {
    const completed = await jobs.complete(rendering, result);
    await Promise.all([recordCompleted(completed, month), ended(completed), alongside?.(completed)]);
    return completed;
  };

  /**
   * The render failed, and the failure is the job's: it fails, and its unit goes back (in that
   * order, so a fault cannot give it back twice). Answers the error the render answers.
   */
  const failRender = async (
    accepted: Pick<AcceptedRender, 'job' | 'month' | 'field'>,
    rendering: Job,
    result: Extract<RenderResult, { ok: false }>,
  ): Promise<ServiceError> => {
    const { job, month, field } = accepted;
    const templating = result.code === 'INVALID_HTML_TEMPLATE' || result.code === 'HTML_CONTENT_TOO_LARGE';
    const part = result.details?.part;
    const where = part ? PART_FIELD[part] : field;
    const message = templating ? named(where, result.message) : result.message;
    const failed = await fail(rendering, month, { code: result.code, message }, result.diagnostics ?? null);
    if (!failed)
      return unsettled(job, new Error(`failing job ${job.id} (${result.code}) did not go through`));
    if (failed.status !== 'failed' || failed.error?.code !== result.code) return interrupted(job);
    return new ServiceError(result.code, message, {
      jobId: job.id,
      ...(templating ? { details: [templateDetail(where, result.message, result.details)] } : {}),
      ...(result.diagnostics ? { diagnostics: result.diagnostics } : {}),
      ...(result.retryAfterSeconds !== undefined ? { retryAfterSeconds: result.retryAfterSeconds } : {}),
    });
  };

  /** A fault of ours after the render was accepted: the job fails and its unit goes back, or the sweeper sees to it. */
  const abandon = async (
    { job, month }: Pick<AcceptedRender, 'job' | 'month'>,
    cause: unknown,
  ): Promise<ServiceError | Job> => {
    // A store that timed out under load is back-pressure (503, retry soon), not a fault of ours.
    const busy = isOverload(cause) ? overloaded(cause, job.id) : undefined;
    const failed = await fail(job, month, busy ? { code: busy.code, message: busy.message } : FAULT);
    if (!failed) return unsettled(job, cause);
    if (failed.status === 'completed') return failed;
    if (failed.error?.code === INTERRUPTED.code) return interrupted(job, cause);
    return busy ?? new ServiceError('INTERNAL_ERROR', FAULT.message, { jobId: job.id, cause });
  };

  /**
   * The job's outcome when its holder no longer holds it, or a fault of ours ended it: the job
   * when it completed after all (its usage recorded), else the error to answer (thrown).
   */
  const settle = async (
    accepted: Pick<AcceptedRender, 'job' | 'month'>,
    renewal: Renewal,
    cause: unknown,
  ): Promise<Job> => {
    if (renewal.lost()) throw interrupted(accepted.job, cause);
    const outcome = await abandon(accepted, cause);
    if (outcome instanceof ServiceError) throw outcome;
    await recordCompleted(outcome, accepted.month);
    return outcome;
  };

  /**
   * A pending job is cancelled, its unit given back and its end told (its webhook's
   * job.cancelled, its batch's count), in that order, as `fail` does. The write is conditional on
   * `pending`, as the consumer's claim is: a job claimed first is not cancelled (it renders and
   * completes or fails; answered `cancelled: false` with the job as it is), and a job cancelled
   * first is never claimed, so never rendered nor charged. A step after the write that does not go
   * through leaves the job in the sweeper's index (unit `refunding`), which gives the unit back.
   */
  const cancel = async (
    job: Pick<Job, 'account_id' | 'id'>,
  ): Promise<{ readonly cancelled: boolean; readonly job: Job | undefined }> => {
    let cancelled: Job;
    try {
      cancelled = await jobs.cancel(job, leaseUntil());
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      return { cancelled: false, job: await jobs.get(job.account_id, job.id, true) };
    }
    if (cancelled.usage_month !== undefined) {
      const month = cancelled.usage_month;
      const refunded = await retried(
        () => usage.releaseRender(job.account_id, month, job.id, unitHeldBy(cancelled)),
        (f) => deps.onFault('quota release failed', f),
      );
      if (refunded) await jobs.settled(job).catch((f) => deps.onFault('settling the job failed', f));
    }
    await ended(cancelled);
    return { cancelled: true, job: cancelled };
  };

  return {
    leaseUntil,
    queueLeaseUntil,
    cancel,
    open,
    renewing,
    /** pending → rendering for its render (its unit held), the lease moved. */
    markRendering: (job: Job) => jobs.markRendering(job, leaseUntil()),
    /** The consumer takes an async job (fenced by its attempt): undefined when another has it. */
    claim: (job: Job, now: number) => jobs.claim(job, leaseUntil(), now),
    /** An accepted async job waits in the render queue (pending, its unit held). */
    hold: (job: Job) => jobs.hold(job, queueLeaseUntil()),
    /** Back to the queue after a retryable failure, held back `delaySeconds`; undefined if taken over. */
    requeue: (job: Job, delaySeconds: number) => jobs.requeue(job, queueLeaseUntil(delaySeconds)),
    /**
     * A batch run's item it never started: back to the queue now, its claim undone (render-run.ts).
     * Its message comes back at once; with a claim's lease, not the queue's, so that a consumer
     * that dies before the message is made visible again leaves it to the sweeper within a lease
     * (measured: with the queue's lease, a stack killed mid-run left 10 such items for minutes).
     */
    release: (job: Job) => jobs.release(job, leaseUntil()),
    /** The sweeper sends a job whose lease ran out before `now` back to the queue; undefined if it was not. */
    requeueExpired: (job: Job, now: number) => jobs.requeue(job, now + queueLeaseMs, now),
    /** The sweeper fails a job whose lease ran out before `now`; false if it was not (its holder renewed it). */
    interruptExpired: (job: Pick<Job, 'account_id' | 'id'>, now: number) => jobs.failExpired(job, now),
    /** A failed job's unit came back (or its month was reconciled): it leaves the open jobs. */
    settled: (job: Pick<Job, 'account_id' | 'id'>) => jobs.settled(job),
    complete,
    fail,
    failRender,
    settle,
    ended,
    unsettled,
    interrupted,
  };
};

export type JobLifecycle = ReturnType<typeof createJobLifecycle>;
