/**
 * The JobStore (domain/jobs.ts) in memory, as the DynamoDB adapter (adapters/dynamodb/jobs.ts)
 * behaves: every transition is conditional on the job's status (and, for an async job, on the
 * attempt its caller read: the fence), and a transition whose condition fails rejects with an
 * error named ConditionalCheckFailedException, as DynamoDB's does (the domain tells it by that
 * name); a job is in the sweeper's index while it has a lease; records expire
 * `recordRetentionSeconds` after their creation (gone from reads at once, as the adapter filters
 * them). Its jobs are those of the table it is handed (table.ts), which a batch's writes share. The job store contract (test/contract/jobs.contract.ts) runs the same cases against both.
 */
import { epochSeconds, isoNow } from '../../domain/common/clock.js';
import type { Clock, Diagnostics } from '../../domain/common/ports.js';
import {
  type CompletedRender,
  fenceOf,
  INTERRUPTED,
  type Job,
  type JobError,
  type JobStatus,
  type JobStore,
  type NewJob,
  newJobRecord,
} from '../../domain/jobs/jobs.js';
import { conditionFailed, createMemoryTable, jobKey, type MemoryTable, type StoredJob } from './table.js';

export interface MemoryJobStoreOptions {
  /** How long a job's record is kept (domain/jobs.ts, jobRecordRetentionSeconds). */
  readonly recordRetentionSeconds: number;
}

const OPEN: readonly JobStatus[] = ['pending', 'rendering'];

/** What leaves a job when its unit is settled: its lease (and so its place in the sweeper's index) and unit. */
const settledOf = (job: Job): Job => {
  const { lease_until: _lease, unit: _unit, ...rest } = job;
  return rest;
};

export const createMemoryJobStore = (
  clock: Clock,
  { recordRetentionSeconds }: MemoryJobStoreOptions,
  table: MemoryTable = createMemoryTable(),
): JobStore => {
  const { jobs } = table;
  const keyOf = (job: Pick<Job, 'account_id' | 'id'>) => jobKey(job.account_id, job.id);
  const live = (s: StoredJob) => s.expiresAt > epochSeconds(clock.now());
  const copy = (job: Job): Job => structuredClone(job);

  /** Applies `change` if `allowed` holds for the stored job; the job as it became, or undefined. */
  const update = (
    job: Pick<Job, 'account_id' | 'id'>,
    allowed: (stored: Job) => boolean,
    change: (stored: Job, at: string) => Job,
  ): Job | undefined => {
    const stored = jobs.get(keyOf(job));
    if (!stored || !allowed(stored.job)) return undefined;
    stored.job = change(stored.job, isoNow(clock.now()));
    return copy(stored.job);
  };

  const inState = (from: readonly JobStatus[], attempts?: number) => (stored: Job) =>
    from.includes(stored.status) && (attempts === undefined || stored.attempts === attempts);

  /** A transition the caller expects to hold: rejects as DynamoDB does when it does not. */
  const transition = (
    job: Pick<Job, 'account_id' | 'id' | 'mode' | 'attempts'>,
    from: readonly JobStatus[],
    change: (stored: Job) => Job,
  ): Promise<Job> => {
    const done = update(job, inState(from, fenceOf(job)), (stored, at) => ({
      ...change(stored),
      updated_at: at,
    }));
    return done ? Promise.resolve(done) : Promise.reject(conditionFailed());
  };

  return {
    async create(job: NewJob, lease) {
      if (jobs.has(keyOf(job))) throw conditionFailed();
      const record = newJobRecord(job, isoNow(clock.now()), lease);
      jobs.set(keyOf(job), {
        job: copy(record),
        expiresAt: epochSeconds(clock.now()) + recordRetentionSeconds,
      });
      return record;
    },

    async discard(job) {
      const stored = jobs.get(keyOf(job));
      if (stored?.job.unit !== 'reserving') throw conditionFailed();
      jobs.delete(keyOf(job));
    },

    markRendering: (job, leaseUntil) =>
      transition(job, ['pending'], (stored) => ({
        ...stored,
        status: 'rendering',
        attempts: 1,
        started_at: isoNow(clock.now()),
        ...(leaseUntil !== undefined ? { unit: 'held' as const, lease_until: leaseUntil } : {}),
      })),

    hold: (job, leaseUntil) =>
      transition(job, ['pending'], (stored) => ({ ...stored, unit: 'held', lease_until: leaseUntil })),

    async claim(job, leaseUntil, now) {
      const seen = job.attempts ?? 0;
      return update(
        job,
        (stored) =>
          inState(OPEN, seen)(stored) &&
          (stored.status === 'pending' || (stored.lease_until !== undefined && stored.lease_until < now)),
        (stored, at) => ({
          ...stored,
          status: 'rendering',
          attempts: seen + 1,
          unit: 'held',
          lease_until: leaseUntil,
          updated_at: at,
          started_at: at,
        }),
      );
    },

    async requeue(job, leaseUntil, expiredBefore) {
      return update(
        job,
        (stored) =>
          inState(OPEN, job.attempts ?? 0)(stored) &&
          (expiredBefore === undefined ||
            (stored.lease_until !== undefined && stored.lease_until < expiredBefore)),
        (stored, at) => ({ ...stored, status: 'pending', lease_until: leaseUntil, updated_at: at }),
      );
    },

    async release(job, leaseUntil) {
      const seen = job.attempts ?? 0;
      return update(
        job,
        (stored) => seen > 0 && inState(['rendering'], seen)(stored),
        (stored, at) => ({
          ...stored,
          status: 'pending',
          attempts: seen - 1,
          lease_until: leaseUntil,
          updated_at: at,
        }),
      );
    },

    async renew(job, leaseUntil) {
      return (
        update(job, inState(OPEN, fenceOf(job)), (stored, at) => ({
          ...stored,
          lease_until: leaseUntil,
          updated_at: at,
        })) !== undefined
      );
    },

    complete: (job, result: CompletedRender) =>
      transition(job, ['rendering'], (stored) => ({
        ...settledOf(stored),
        status: 'completed',
        file_size_bytes: result.fileSizeBytes,
        page_count: result.pageCount,
        render_duration_ms: result.renderDurationMs,
        diagnostics: structuredClone(result.diagnostics) ?? null,
        completed_at: isoNow(clock.now()),
      })),

    fail: (job, error: JobError, diagnostics: Diagnostics | null = null, settleBy?: number) =>
      transition(job, OPEN, (stored) => ({
        ...(settleBy !== undefined
          ? { ...stored, unit: 'refunding' as const, lease_until: settleBy }
          : settledOf(stored)),
        status: 'failed',
        error: structuredClone(error),
        render_duration_ms: null,
        diagnostics: structuredClone(diagnostics),
        completed_at: isoNow(clock.now()),
      })),

    async cancel(job, settleBy) {
      const done = update(
        job,
        (stored) => stored.status === 'pending',
        (stored, at) => ({
          ...stored,
          status: 'cancelled',
          unit: 'refunding',
          lease_until: settleBy,
          updated_at: at,
          completed_at: at,
        }),
      );
      if (!done) throw conditionFailed();
      return done;
    },

    async settled(job) {
      const done = update(
        job,
        (stored) => stored.status === 'failed' || stored.status === 'cancelled',
        (stored) => settledOf(stored),
      );
      if (!done) throw conditionFailed();
    },

    async failExpired(job, now) {
      return (
        update(
          job,
          (stored) =>
            OPEN.includes(stored.status) && stored.lease_until !== undefined && stored.lease_until < now,
          (stored, at) => ({
            ...stored,
            status: 'failed',
            error: INTERRUPTED,
            unit: 'refunding',
            updated_at: at,
            completed_at: at,
          }),
        ) !== undefined
      );
    },

    async openBefore(now, limit) {
      return [...jobs.values()]
        .filter((s) => s.job.lease_until !== undefined && s.job.lease_until < now)
        .sort((a, b) => (a.job.lease_until as number) - (b.job.lease_until as number))
        .slice(0, limit)
        .map((s) => ({ accountId: s.job.account_id, jobId: s.job.id }));
    },

    async ofMonth(accountId, month) {
      return [...jobs.values()]
        .filter((s) => s.job.account_id === accountId && s.job.usage_month === month)
        .sort((a, b) => (a.job.id < b.job.id ? -1 : 1))
        .map((s) => copy(s.job));
    },

    async get(accountId, jobId) {
      const stored = jobs.get(keyOf({ account_id: accountId, id: jobId }));
      return stored && live(stored) ? copy(stored.job) : undefined;
    },

    async list(accountId, { limit, offset }) {
      return [...jobs.values()]
        .filter((s) => s.job.account_id === accountId && live(s))
        .sort((a, b) => (a.job.id < b.job.id ? 1 : -1))
        .slice(offset, offset + limit)
        .map((s) => copy(s.job));
    },
  };
};
