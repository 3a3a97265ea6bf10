/**
 * The sweeper against a real DynamoDB API (dynalite), on a clock the test sets: jobs whose request
 * died (pending or rendering past their lease) fail with PDF_RENDERING_INTERRUPTED and their units
 * come back; a failed job whose refund was never confirmed is reconciled; a live job is left
 * alone; an index entry whose item is gone is skipped.
 */
import { ulid } from 'ulid';
import { describe, expect, it } from 'vitest';
import { createJobStore } from '../../functions/adapters/dynamodb/jobs.js';
import { createUsageStore } from '../../functions/adapters/dynamodb/usage.js';
import { readLimits } from '../../functions/core/config.js';
import { createJobLifecycle } from '../../functions/domain/jobs/job-lifecycle.js';
import { type Job, type JobStore, jobRecordRetentionSeconds } from '../../functions/domain/jobs/jobs.js';
import { createSweeper } from '../../functions/domain/jobs/sweeper.js';
import { testClock, useTable } from '../helpers/dynalite.js';

const table = useTable('sweeper-test');
const clock = testClock('2026-11-25T10:00:00.000Z');
const LEASE_MS = 30_000;
const plan = { monthlyRenders: 100, rendersPerMinute: 100, concurrentRenders: 10 };
let accounts = 0;

const stores = () => ({
  jobs: createJobStore(table.db, table.name, clock, {
    recordRetentionSeconds: jobRecordRetentionSeconds(30),
  }),
  usage: createUsageStore(table.db, table.name, clock),
});
const sweeperWith = (jobs: JobStore) => {
  const { usage } = stores();
  const onFault = (m: string, e: unknown) => console.error(m, e);
  const limits = { ...readLimits({}), jobLeaseSeconds: LEASE_MS / 1000 };
  // No render queue: async jobs fail as sync ones do (no attempt is left to them).
  return createSweeper({
    jobs,
    lifecycle: createJobLifecycle({ jobs, usage, clock, limits, onFault }),
    usage,
    clock,
    onFault,
    limits,
  });
};

/** Job ids are ULIDs of the time they were made: the month's jobs are read by that range. */
const jobIdAt = (_n: number) => `job_${ulid(clock.now().getTime())}`;

/** A job as the render path leaves it: written, its unit reserved, then (optionally) rendering. */
const startRender = async (accountId: string, n: number, rendering: boolean): Promise<Job> => {
  const { jobs, usage } = stores();
  const id = jobIdAt(n);
  const job = await jobs.create(
    { id, account_id: accountId, template_id: null, template_version: null, object_key: `pdf/${id}.pdf` },
    { month: '2026-11', leaseUntil: clock.now().getTime() + LEASE_MS },
  );
  await usage.reserveRender(accountId, plan, '2026-11', id);
  return rendering ? jobs.markRendering(job, clock.now().getTime() + LEASE_MS) : job;
};

describe('the sweeper', () => {
  it('fails pending and rendering jobs past their lease and gives their units back; live ones keep theirs', async () => {
    const account = `acct-${++accounts}`;
    const { jobs, usage } = stores();
    const pending = await startRender(account, 1, false);
    const rendering = await startRender(account, 2, true);
    const done = await startRender(account, 3, true);
    await jobs.complete(done, { fileSizeBytes: 1, pageCount: 1, renderDurationMs: 1 });
    await usage.recordRender(account, '2026-11', 1, 1, done.id);
    clock.advance(LEASE_MS + 1);
    const live = await startRender(account, 4, true);

    const report = await sweeperWith(jobs).sweep();
    expect(report).toMatchObject({ interrupted: 2, reconciled: 1, deferred: 0, skipped: 0 });
    for (const job of [pending, rendering]) {
      expect(await jobs.get(account, job.id)).toMatchObject({
        status: 'failed',
        error: { code: 'PDF_RENDERING_INTERRUPTED' },
      });
    }
    expect((await jobs.get(account, live.id))?.status).toBe('rendering');
    // One completed, one running.
    expect(await usage.readUnits(account, '2026-11')).toEqual({ rendersUsed: 2, inFlight: 1 });
    // Settled jobs leave the index: the next pass finds nothing.
    expect(await sweeperWith(jobs).sweep()).toMatchObject({ expired: 0 });
  });

  it('reconciles a failed job whose refund was never confirmed (a crash between the two writes)', async () => {
    const account = `acct-${++accounts}`;
    const { jobs, usage } = stores();
    const job = await startRender(account, 1, true);
    await jobs.fail(
      job,
      { code: 'PDF_RENDERING_FAILED', message: 'x' },
      null,
      clock.now().getTime() + LEASE_MS,
    );
    // (the refund that should follow never happens)
    expect((await usage.readUnits(account, '2026-11')).rendersUsed).toBe(1);
    // Within the refund's grace the sweeper leaves it alone: the refund may still be on its way.
    await sweeperWith(jobs).sweep();
    expect((await jobs.get(account, job.id))?.unit).toBe('refunding');
    expect((await usage.readUnits(account, '2026-11')).rendersUsed).toBe(1);
    clock.advance(LEASE_MS + 1);
    expect((await sweeperWith(jobs).sweep()).reconciled).toBeGreaterThanOrEqual(1);
    expect(await usage.readUnits(account, '2026-11')).toEqual({ rendersUsed: 0, inFlight: 0 });
    expect(await jobs.get(account, job.id)).toMatchObject({
      status: 'failed',
      error: { code: 'PDF_RENDERING_FAILED' },
    });
    expect((await jobs.get(account, job.id))?.unit).toBeUndefined();
  });

  it('settles a job whose unit was never reserved (a crash between the job and its reservation)', async () => {
    const account = `acct-${++accounts}`;
    const { jobs, usage } = stores();
    const id = jobIdAt(9);
    await jobs.create(
      { id, account_id: account, template_id: null, template_version: null, object_key: 'k' },
      { month: '2026-11', leaseUntil: clock.now().getTime() + LEASE_MS },
    );
    clock.advance(LEASE_MS + 1);
    expect((await sweeperWith(jobs).sweep()).interrupted).toBeGreaterThanOrEqual(1);
    expect(await jobs.get(account, id)).toMatchObject({
      status: 'failed',
      error: { code: 'PDF_RENDERING_INTERRUPTED' },
    });
    expect((await jobs.get(account, id))?.unit).toBeUndefined();
    expect(await usage.readUnits(account, '2026-11')).toEqual({ rendersUsed: 0, inFlight: 0 });
  });

  it('skips an index entry whose item is gone', async () => {
    const { jobs } = stores();
    // dynalite can list an index entry a moment before (or after) its item: injected here.
    const ghost: JobStore = {
      ...jobs,
      openBefore: async (now, limit) => [
        { accountId: 'acct-ghost', jobId: 'job_01KAVX0000000000000000GONE' },
        ...(await jobs.openBefore(now, limit)),
      ],
    };
    clock.advance(LEASE_MS + 1);
    await sweeperWith(jobs).sweep(); // what the earlier tests left
    expect(await sweeperWith(ghost).sweep()).toEqual({
      expired: 1,
      skipped: 1,
      interrupted: 0,
      requeued: 0,
      reconciled: 0,
      deferred: 0,
    });
  });
});
