/**
 * The sweeper: every job ends, and every unit is accounted for, whatever happened to the request
 * that held it (a crash, a Lambda timeout, a clean-up step that timed out). It runs on a schedule
 * (a Lambda every minute in the cloud, a timer and a pass at start-up in the local stack).
 *
 * A pass reads the open jobs whose lease ran out (the index, oldest first), fails those still
 * pending or rendering with PDF_RENDERING_INTERRUPTED (fenced by the lease: a holder that renewed
 * in time keeps its job), then works out each touched account-month's counters again from its
 * jobs (usage.ts, reconcileCounts) instead of giving units back blindly: after a crash it cannot
 * know which of a job's writes landed, but the jobs say what the counters should be. A month that
 * cannot be worked out now (a job mid-reservation or mid-refund) is tried again next pass; its
 * jobs stay in the index until then.
 *
 * An async job (async-renders.ts) whose lease ran out with attempts left is re-queued instead: its
 * message is sent again and its lease renewed for the queue's wait (a message lost, a consumer
 * that died mid-render, a local stack killed mid-batch); with none left it fails as above.
 *
 * A batch's job still being accepted (unit `reserving`) whose acceptance lease ran out is its
 * batch's to decide (batches.ts): a batch that was accepted (its record exists) has the job queued
 * (its message again, held under the queue's lease); a batch whose acceptance died is cancelled
 * (a marker in its record's place, which refuses the acceptance's own write from then on) and its
 * jobs fail as above, every unit given back by the month's reconciliation.
 *
 * A job it fails is told of (`events`: its webhook endpoint's job.failed, its batch's count and
 * batch.completed) by the write that failed it: that write is conditional (fenced by the lease), so
 * of a sweeper and a consumer racing, or two passes, only the one that ended the job tells, as the
 * consumer does. It also sends again the webhook deliveries whose message never came
 * (`overdueDeliveries`, webhook-sender.ts).
 *
 * Slots follow their owners (issue 37): a pass told that every holder of a lease is gone
 * (`holdersGone`: the local stack's pass at its start, before it serves, when every render the table
 * holds open was its previous process's) does not wait for their leases: it runs as of the moment
 * every holder's lease would have run out (now + a job's lease), so the renders a kill left free
 * their concurrent slots and units at once, and an async job the kill caught rendering goes back
 * to the queue. A queued async job is not a holder's (the queue keeps it): its lease is the
 * queue's, far longer, and it stays as it is (one whose queue lease was about to run out is sent
 * again early; a duplicate is dropped at claim).
 */

import { countJob, reconcileCounts, type UsageStore } from '../accounts/usage.js';
import { type UsageLedger, usageEntryOf } from '../accounts/usage-ledger.js';
import type { BatchStore } from '../batches/batch-counter.js';
import type { Clock, MessageQueue } from '../common/ports.js';
import { type RenderMessage, renderMessage } from '../renders/async-renders.js';
import type { JobLifecycle } from './job-lifecycle.js';
import type { Job, JobStore, OpenJobRef } from './jobs.js';

export interface SweeperDeps {
  /** Read only: the expired index entries, a job, a month's jobs. */
  readonly jobs: Pick<JobStore, 'openBefore' | 'get' | 'ofMonth'>;
  /**
   * Every write to a job (fenced by its lease), and telling JobEvents of a job this pass ended (its
   * webhook endpoint's job.failed, its batch's count and batch.completed).
   */
  readonly lifecycle: Pick<
    JobLifecycle,
    'requeueExpired' | 'interruptExpired' | 'settled' | 'ended' | 'hold'
  >;
  readonly usage: UsageStore;
  /** The usage ledger: a completed job a crash left out of it is recorded when its month is reconciled. */
  readonly ledger?: UsageLedger;
  readonly clock: Clock;
  readonly onFault: (message: string, error: unknown) => void;
  /** The render queue, to re-queue async jobs. Absent: they fail as sync ones do. */
  readonly renderQueue?: MessageQueue<RenderMessage>;
  readonly limits: { readonly asyncMaxAttempts: number; readonly jobLeaseSeconds: number };
  /**
   * A batch's jobs still being accepted (unit `reserving`) whose acceptance lease ran out: queued if
   * their batch was accepted, else the batch is cancelled (batches.ts). Absent: they fail.
   */
  readonly batches?: Pick<BatchStore, 'cancel'>;
  /** Pending webhook deliveries long past due, queued again each pass. @default none */
  readonly overdueDeliveries?: { requeue(limit?: number): Promise<number> };
}

export interface SweepReport {
  /** Index entries past their lease that were read. */
  readonly expired: number;
  /** Jobs failed with PDF_RENDERING_INTERRUPTED. */
  readonly interrupted: number;
  /** Async jobs sent to the render queue again. */
  readonly requeued: number;
  /** Account-months whose counters were set from their jobs. */
  readonly reconciled: number;
  /** Account-months left for the next pass (a job mid-write, or the counters moved meanwhile). */
  readonly deferred: number;
  /** Entries whose job is gone or already settled (an index entry can outlive its item briefly). */
  readonly skipped: number;
  /** Pending webhook deliveries whose attempt was queued again (when the sweeper has the webhook queue). */
  readonly redelivered?: number;
}

/** What one expired index entry calls for, from its job as read now. */
export type SweepDecision =
  | { readonly kind: 'skip' }
  | { readonly kind: 'requeue' }
  | { readonly kind: 'accepting'; readonly month: string; readonly batchId: string }
  | { readonly kind: 'interrupt'; readonly month: string }
  | { readonly kind: 'reconcile'; readonly month: string };

export const decide = (job: Job | undefined, now: number, maxAttempts = 0): SweepDecision => {
  if (!job || job.unit === undefined || job.usage_month === undefined) return { kind: 'skip' };
  if (job.lease_until !== undefined && job.lease_until >= now) return { kind: 'skip' }; // renewed since
  const open = job.status === 'pending' || job.status === 'rendering';
  // Queued (its unit held) with an attempt left: it goes back to the queue rather than failing.
  if (open && job.mode === 'async' && job.unit === 'held' && (job.attempts ?? 0) < maxAttempts) {
    return { kind: 'requeue' };
  }
  // A batch's job not yet queued: its batch decides (accepted: queued; never accepted: cancelled).
  if (open && job.mode === 'async' && job.unit === 'reserving' && job.batch_id) {
    return { kind: 'accepting', month: job.usage_month, batchId: job.batch_id };
  }
  return open ? { kind: 'interrupt', month: job.usage_month } : { kind: 'reconcile', month: job.usage_month };
};

/** How many expired entries one pass reads at most (a pass that stops short is resumed by the next). */
export const SWEEP_BATCH = 500;

export const createSweeper = ({
  jobs,
  lifecycle,
  usage,
  clock,
  onFault,
  renderQueue,
  limits,
  overdueDeliveries,
  batches,
  ledger,
}: SweeperDeps) => {
  const maxAttempts = renderQueue ? limits.asyncMaxAttempts : 0;

  /**
   * Whether a batch's acceptance died (cancelled now if so), asked once per batch and pass. The
   * answer is final: the marker refuses the acceptance's own write from then on.
   */
  const cancelledBatches = new Map<string, Promise<boolean>>();
  const acceptanceDied = (job: Job): Promise<boolean> => {
    if (!batches || !renderQueue || !job.batch_id) return Promise.resolve(true);
    const key = `${job.account_id}\n${job.batch_id}`;
    let known = cancelledBatches.get(key);
    if (!known) {
      known = batches.cancel(job.account_id, job.batch_id);
      cancelledBatches.set(key, known);
      known.catch(() => cancelledBatches.delete(key));
    }
    return known;
  };

  /**
   * A job of an accepted batch still `reserving` (its consumer has not reached it within the
   * acceptance lease, or its message was lost at a kill right after the acceptance): its message
   * again, then held in the queue under the queue's lease. A duplicate is dropped at claim.
   */
  const queueAccepted = async (job: Job): Promise<boolean> => {
    await renderQueue?.send(renderMessage(job), { groupId: job.account_id });
    try {
      await lifecycle.hold(job);
      return true;
    } catch (e) {
      if ((e as Error | undefined)?.name === 'ConditionalCheckFailedException') return false; // taken meanwhile
      throw e;
    }
  };

  /** The message first, then the lease: a job renewed without a message would wait a whole lease again. */
  const requeue = async (job: Job, now: number): Promise<boolean> => {
    await renderQueue?.send(renderMessage(job), { groupId: job.account_id });
    return (await lifecycle.requeueExpired(job, now)) !== undefined;
  };

  /**
   * A job this pass failed, told of when it names a webhook endpoint or a batch. Called only by the
   * one whose conditional write failed it; never fails the pass.
   */
  const tellEnded = async (ref: Pick<OpenJobRef, 'accountId' | 'jobId'>): Promise<void> => {
    try {
      const ended = await jobs.get(ref.accountId, ref.jobId, true);
      if (ended) await lifecycle.ended(ended);
    } catch (e) {
      onFault(`telling of interrupted job ${ref.jobId} failed`, e);
    }
  };

  /** Sets one account-month's counters from its jobs, then lets its expired jobs leave the index. */
  /**
   * Records the ledger entry of every completed job of the month that has none: a process killed
   * between a job's completion and its entry (issue 39). Run for every month this pass touched.
   */
  const catchUpLedger = async (accountId: string, month: string, monthJobs?: readonly Job[]) => {
    if (!ledger) return;
    const all = monthJobs ?? (await jobs.ofMonth(accountId, month));
    const recorded = new Set((await ledger.ofAccountMonth(accountId, month)).map((e) => e.job_id));
    for (const job of all) {
      if (job.status === 'completed' && !recorded.has(job.id)) await ledger.record(usageEntryOf(job, month));
    }
  };

  const reconcile = async (accountId: string, month: string, now: number): Promise<boolean> => {
    const seen = await usage.readUnits(accountId, month);
    const monthJobs = await jobs.ofMonth(accountId, month);
    const counted = reconcileCounts(monthJobs, now);
    if (!counted) return false;
    const expired = monthJobs.filter((j) => countJob(j, now) === 'expired');
    // An open one among them was failed by this pass already, unless it was created since: fail it now.
    for (const job of expired) {
      if (job.status === 'pending' || job.status === 'rendering') {
        // A job of an accepted batch is queued, not failed; the month waits for its next pass.
        if (decide(job, now, maxAttempts).kind === 'accepting' && !(await acceptanceDied(job))) {
          await queueAccepted(job);
          return false;
        }
        if (!(await lifecycle.interruptExpired(job, now))) return false;
        await tellEnded({ accountId: job.account_id, jobId: job.id });
      }
    }
    // The ledger holds every completed job of the month, as the counters will (issue 39).
    await catchUpLedger(accountId, month, monthJobs);
    if (
      !(await usage.setUnits(
        accountId,
        month,
        seen,
        counted.counts,
        counted.holders,
        counted.queuedHolders,
        counted.asyncHolders,
      ))
    )
      return false;
    for (const job of expired) await lifecycle.settled(job);
    return true;
  };

  return {
    reconcile,

    async sweep(
      limit: number = SWEEP_BATCH,
      options: { readonly holdersGone?: boolean } = {},
    ): Promise<SweepReport> {
      // Every lease of a holder runs out within a job's lease from now: a pass that knows them gone
      // runs as of then (the module's comment).
      const now = clock.now().getTime() + (options.holdersGone ? limits.jobLeaseSeconds * 1000 + 1 : 0);
      cancelledBatches.clear();
      const refs: OpenJobRef[] = await jobs.openBefore(now, limit);
      let interrupted = 0;
      let requeued = 0;
      let skipped = 0;
      const months = new Map<string, { accountId: string; month: string }>();
      // Months whose jobs were queued again (not reconciled): their ledger is caught up all the same.
      const ledgerMonths = new Map<string, { accountId: string; month: string }>();
      const touchLedger = (job: Job) => {
        if (job.usage_month === undefined) return;
        const at = { accountId: job.account_id, month: job.usage_month };
        ledgerMonths.set(`${at.accountId}\n${at.month}`, at);
      };
      for (const ref of refs) {
        try {
          const job = await jobs.get(ref.accountId, ref.jobId, true);
          const decision = decide(job, now, maxAttempts);
          if (!job || decision.kind === 'skip') {
            skipped++;
            continue;
          }
          if (decision.kind === 'requeue') {
            if (await requeue(job, now)) requeued++;
            touchLedger(job);
            continue;
          }
          if (decision.kind === 'accepting' && !(await acceptanceDied(job))) {
            if (await queueAccepted(job)) requeued++;
            touchLedger(job);
            continue;
          }
          // The job's status ends now, whatever its month's counters can be worked out to.
          if (
            (decision.kind === 'interrupt' || decision.kind === 'accepting') &&
            (await lifecycle.interruptExpired(job, now))
          ) {
            interrupted++;
            await tellEnded(ref);
          } else if (decision.kind === 'reconcile' && job.error?.code === 'PDF_RENDERING_INTERRUPTED') {
            // Failed by a pass that may have died before telling: told again (the event's
            // delivery id is the same every time, so it is recorded and sent once).
            await tellEnded(ref);
          }
          months.set(`${ref.accountId}\n${decision.month}`, {
            accountId: ref.accountId,
            month: decision.month,
          });
        } catch (e) {
          onFault(`sweeping job ${ref.jobId} failed`, e);
        }
      }
      let reconciled = 0;
      let deferred = 0;
      for (const { accountId, month } of months.values()) {
        try {
          if (await reconcile(accountId, month, now)) reconciled++;
          else deferred++;
        } catch (e) {
          deferred++;
          onFault(`reconciling ${accountId} ${month} failed`, e);
        }
      }
      for (const [key, { accountId, month }] of ledgerMonths) {
        if (months.has(key)) continue;
        try {
          await catchUpLedger(accountId, month);
        } catch (e) {
          onFault(`catching up the usage ledger of ${accountId} ${month} failed`, e);
        }
      }
      const report = { expired: refs.length, interrupted, requeued, reconciled, deferred, skipped };
      if (!overdueDeliveries) return report;
      let redelivered = 0;
      try {
        redelivered = await overdueDeliveries.requeue();
      } catch (e) {
        onFault('re-queueing overdue webhook deliveries failed', e);
      }
      return { ...report, redelivered };
    },
  };
};

export type Sweeper = ReturnType<typeof createSweeper>;
