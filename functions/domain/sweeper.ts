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
 */
import type { Job, JobStore, OpenJobRef } from './jobs.js';
import type { Clock } from './ports.js';
import { countJob, reconcileCounts, type UsageStore } from './usage.js';

export interface SweeperDeps {
  readonly jobs: JobStore;
  readonly usage: UsageStore;
  readonly clock: Clock;
  readonly onFault: (message: string, error: unknown) => void;
}

export interface SweepReport {
  /** Index entries past their lease that were read. */
  readonly expired: number;
  /** Jobs failed with PDF_RENDERING_INTERRUPTED. */
  readonly interrupted: number;
  /** Account-months whose counters were set from their jobs. */
  readonly reconciled: number;
  /** Account-months left for the next pass (a job mid-write, or the counters moved meanwhile). */
  readonly deferred: number;
  /** Entries whose job is gone or already settled (an index entry can outlive its item briefly). */
  readonly skipped: number;
}

/** What one expired index entry calls for, from its job as read now. */
export type SweepDecision =
  | { readonly kind: 'skip' }
  | { readonly kind: 'interrupt'; readonly month: string }
  | { readonly kind: 'reconcile'; readonly month: string };

export const decide = (job: Job | undefined, now: number): SweepDecision => {
  if (!job || job.unit === undefined || job.usage_month === undefined) return { kind: 'skip' };
  if (job.lease_until !== undefined && job.lease_until >= now) return { kind: 'skip' }; // renewed since
  const open = job.status === 'pending' || job.status === 'rendering';
  return open ? { kind: 'interrupt', month: job.usage_month } : { kind: 'reconcile', month: job.usage_month };
};

/** How many expired entries one pass reads at most (a pass that stops short is resumed by the next). */
export const SWEEP_BATCH = 500;

export const createSweeper = ({ jobs, usage, clock, onFault }: SweeperDeps) => {
  /** Sets one account-month's counters from its jobs, then lets its expired jobs leave the index. */
  const reconcile = async (accountId: string, month: string, now: number): Promise<boolean> => {
    const seen = await usage.readUnits(accountId, month);
    const monthJobs = await jobs.ofMonth(accountId, month);
    const counted = reconcileCounts(monthJobs, now);
    if (!counted) return false;
    const expired = monthJobs.filter((j) => countJob(j, now) === 'expired');
    // An open one among them was failed by this pass already, unless it was created since: fail it now.
    for (const job of expired) {
      if ((job.status === 'pending' || job.status === 'rendering') && !(await jobs.failExpired(job, now))) {
        return false;
      }
    }
    if (!(await usage.setUnits(accountId, month, seen, counted.counts, counted.holders))) return false;
    for (const job of expired) await jobs.settled(job);
    return true;
  };

  return {
    reconcile,

    async sweep(limit: number = SWEEP_BATCH): Promise<SweepReport> {
      const now = clock.now().getTime();
      const refs: OpenJobRef[] = await jobs.openBefore(now, limit);
      let interrupted = 0;
      let skipped = 0;
      const months = new Map<string, { accountId: string; month: string }>();
      for (const ref of refs) {
        try {
          const job = await jobs.get(ref.accountId, ref.jobId, true);
          const decision = decide(job, now);
          if (!job || decision.kind === 'skip') {
            skipped++;
            continue;
          }
          // The job's status ends now, whatever its month's counters can be worked out to.
          if (decision.kind === 'interrupt' && (await jobs.failExpired(job, now))) interrupted++;
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
      return { expired: refs.length, interrupted, reconciled, deferred, skipped };
    },
  };
};

export type Sweeper = ReturnType<typeof createSweeper>;
