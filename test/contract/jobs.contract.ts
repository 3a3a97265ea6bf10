/**
 * The JobStore port's contract (domain/jobs.ts): the same cases for the memory store and the
 * DynamoDB adapter on dynalite. Times are the test clock's; leases are epoch ms.
 */
import { monotonicFactory } from 'ulid';
import { describe, expect, it } from 'vitest';
import type { Diagnostics } from '../../functions/domain/common/ports.js';
import { INTERRUPTED, type Job, type JobStore, type NewJob } from '../../functions/domain/jobs/jobs.js';
import { clockAt, type StoreBackend, unique } from './stores.js';

const nextUlid = monotonicFactory();
const RETENTION_SECONDS = 2 * 86_400;

const newJob = (accountId: string, over: Partial<NewJob> = {}): NewJob => {
  const id = `job_${nextUlid()}`;
  return {
    id,
    account_id: accountId,
    template_id: null,
    template_version: null,
    object_key: `pdf/${accountId}/${id}.pdf`,
    ...over,
  };
};

const rejectionName = (p: Promise<unknown>) =>
  p.then(
    () => 'fulfilled',
    (e: Error) => e.name,
  );

export const jobsContract = (backend: StoreBackend<JobStore, { recordRetentionSeconds: number }>): void => {
  describe(`the job store on ${backend.name}`, () => {
    const setup = () => {
      const clock = clockAt();
      return {
        clock,
        jobs: backend.create(clock, { recordRetentionSeconds: RETENTION_SECONDS }),
        account: unique('acct'),
      };
    };
    const mine = async (jobs: JobStore, account: string, at: number) =>
      (await jobs.openBefore(at, 1000)).filter((r) => r.accountId === account).map((r) => r.jobId);
    const t0 = Date.parse('2026-11-28T10:00:00.000Z');

    it('creates a pending job once; with a lease its unit is reserving and it is in the sweeper’s index', async () => {
      const { jobs, account } = setup();
      const plain = await jobs.create(newJob(account));
      expect(plain).toMatchObject({
        status: 'pending',
        mode: 'sync',
        attempts: 0,
        webhook_id: null,
        batch_id: null,
        file_size_bytes: null,
        error: null,
        created_at: '2026-11-28T10:00:00.000Z',
        updated_at: '2026-11-28T10:00:00.000Z',
        completed_at: null,
      });
      expect(plain).not.toHaveProperty('unit');
      expect(await rejectionName(jobs.create(newJob(account, { id: plain.id })))).toBe(
        'ConditionalCheckFailedException',
      );
      const leased = await jobs.create(newJob(account, { mode: 'async' }), {
        month: '2026-11',
        leaseUntil: t0 + 1000,
      });
      expect(leased).toMatchObject({
        unit: 'reserving',
        usage_month: '2026-11',
        lease_until: t0 + 1000,
        mode: 'async',
      });
      expect(await mine(jobs, account, t0 + 1001)).toEqual([leased.id]);
      expect(await mine(jobs, account, t0 + 1000)).toEqual([]);
      expect(await jobs.get(account, leased.id, true)).toMatchObject(leased);
    });

    it('renders a sync job: rendering with its unit held, then completed and settled; a second completion is refused', async () => {
      const { jobs, account, clock } = setup();
      const job = await jobs.create(newJob(account), { month: '2026-11', leaseUntil: t0 + 1000 });
      clock.advance(100);
      const rendering = await jobs.markRendering(job, t0 + 5000);
      expect(rendering).toMatchObject({
        status: 'rendering',
        attempts: 1,
        unit: 'held',
        lease_until: t0 + 5000,
      });
      expect(await jobs.renew(rendering, t0 + 9000)).toBe(true);
      clock.advance(100);
      const diagnostics: Diagnostics = {
        entries: [{ type: 'console', message: 'hi', count: 2 }],
        truncated: false,
      };
      const done = await jobs.complete(rendering, {
        fileSizeBytes: 1234,
        pageCount: 2,
        renderDurationMs: 50,
        diagnostics,
      });
      expect(done).toMatchObject({
        status: 'completed',
        file_size_bytes: 1234,
        page_count: 2,
        render_duration_ms: 50,
        completed_at: '2026-11-28T10:00:00.200Z',
        updated_at: '2026-11-28T10:00:00.200Z',
        diagnostics,
      });
      expect(done).not.toHaveProperty('lease_until');
      expect(done).not.toHaveProperty('unit');
      expect(await mine(jobs, account, t0 + 1e9)).toEqual([]);
      expect(
        await rejectionName(
          jobs.complete(rendering, { fileSizeBytes: 1, pageCount: 1, renderDurationMs: 1 }),
        ),
      ).toBe('ConditionalCheckFailedException');
      expect(await jobs.renew(done, t0 + 9000)).toBe(false);
      expect(await rejectionName(jobs.markRendering(job))).toBe('ConditionalCheckFailedException');
    });

    it('fails a job either settled at once, or refunding until settled, in the index until then', async () => {
      const { jobs, account } = setup();
      const error = { code: 'INVALID_HTML_TEMPLATE', message: 'line 2' };
      const a = await jobs.markRendering(
        await jobs.create(newJob(account), { month: '2026-11', leaseUntil: t0 + 1000 }),
        t0 + 2000,
      );
      const failedNow = await jobs.fail(a, error);
      expect(failedNow).toMatchObject({
        status: 'failed',
        error,
        diagnostics: null,
        render_duration_ms: null,
      });
      expect(failedNow).not.toHaveProperty('unit');
      const b = await jobs.create(newJob(account), { month: '2026-11', leaseUntil: t0 + 1000 });
      const refunding = await jobs.fail(b, error, null, t0 + 3000);
      expect(refunding).toMatchObject({ status: 'failed', unit: 'refunding', lease_until: t0 + 3000 });
      expect(await mine(jobs, account, t0 + 3001)).toEqual([b.id]);
      await jobs.settled(b);
      expect(await mine(jobs, account, t0 + 1e9)).toEqual([]);
      expect(await jobs.get(account, b.id, true)).not.toHaveProperty('unit');
      expect(await rejectionName(jobs.fail(refunding, error))).toBe('ConditionalCheckFailedException');
    });

    it('cancels only a pending job, refunding until settled; then a claim is refused, and a claimed job cannot be cancelled (issue 37)', async () => {
      const { jobs, account } = setup();
      const queued = await jobs.hold(
        await jobs.create(newJob(account, { mode: 'async' }), { month: '2026-11', leaseUntil: t0 + 1000 }),
        t0 + 5000,
      );
      const cancelled = await jobs.cancel(queued, t0 + 3000);
      expect(cancelled).toMatchObject({ status: 'cancelled', unit: 'refunding', lease_until: t0 + 3000 });
      expect(cancelled.completed_at).toBe(cancelled.updated_at);
      expect(await jobs.claim(queued, t0 + 9000, t0)).toBeUndefined();
      expect(await rejectionName(jobs.cancel(queued, t0 + 3000))).toBe('ConditionalCheckFailedException');
      await jobs.settled(cancelled);
      expect(await mine(jobs, account, t0 + 1e9)).toEqual([]);
      expect(await jobs.get(account, queued.id, true)).toMatchObject({ status: 'cancelled' });

      const other = await jobs.hold(
        await jobs.create(newJob(account, { mode: 'async' }), { month: '2026-11', leaseUntil: t0 + 1000 }),
        t0 + 5000,
      );
      const claimed = await jobs.claim(other, t0 + 9000, t0);
      expect(claimed).toMatchObject({ status: 'rendering', attempts: 1 });
      expect(claimed?.started_at).toBe(claimed?.updated_at);
      expect(await rejectionName(jobs.cancel(other, t0 + 3000))).toBe('ConditionalCheckFailedException');
    });

    it('fences an async job by its attempt: one claim per attempt, a stale holder’s writes refused', async () => {
      const { jobs, account } = setup();
      const job = await jobs.create(newJob(account, { mode: 'async' }), {
        month: '2026-11',
        leaseUntil: t0 + 1000,
      });
      const held = await jobs.hold(job, t0 + 60_000);
      expect(held).toMatchObject({ status: 'pending', unit: 'held', lease_until: t0 + 60_000 });
      const first = await jobs.claim(held, t0 + 10_000, t0);
      expect(first).toMatchObject({
        status: 'rendering',
        attempts: 1,
        unit: 'held',
        lease_until: t0 + 10_000,
      });
      // The same message again: the attempt read is gone.
      expect(await jobs.claim(held, t0 + 10_000, t0)).toBeUndefined();
      // Its holder alive (the lease runs): no second claim.
      expect(await jobs.claim(first as Job, t0 + 20_000, t0 + 5_000)).toBeUndefined();
      // Its holder dead (the lease ran out): the next attempt.
      const second = await jobs.claim(first as Job, t0 + 30_000, t0 + 10_001);
      expect(second).toMatchObject({ status: 'rendering', attempts: 2 });
      expect(await jobs.renew(first as Job, t0 + 40_000)).toBe(false);
      expect(
        await rejectionName(
          jobs.complete(first as Job, { fileSizeBytes: 1, pageCount: 1, renderDurationMs: 1 }),
        ),
      ).toBe('ConditionalCheckFailedException');
      expect(await jobs.renew(second as Job, t0 + 40_000)).toBe(true);
      expect(
        await jobs.complete(second as Job, { fileSizeBytes: 1, pageCount: 1, renderDurationMs: 1 }),
      ).toMatchObject({
        status: 'completed',
        attempts: 2,
      });
    });

    it('requeues an async job: by its holder at its attempt, by the sweeper only past its lease', async () => {
      const { jobs, account } = setup();
      const job = await jobs.hold(
        await jobs.create(newJob(account, { mode: 'async' }), { month: '2026-11', leaseUntil: t0 + 1000 }),
        t0 + 60_000,
      );
      const claimed = (await jobs.claim(job, t0 + 10_000, t0)) as Job;
      expect(await jobs.requeue(job, t0 + 70_000)).toBeUndefined(); // a stale attempt
      const back = await jobs.requeue(claimed, t0 + 70_000);
      expect(back).toMatchObject({ status: 'pending', attempts: 1, unit: 'held', lease_until: t0 + 70_000 });
      expect(await jobs.requeue(back as Job, t0 + 80_000, t0 + 70_000)).toBeUndefined(); // its lease still runs
      expect(await jobs.requeue(back as Job, t0 + 80_000, t0 + 70_001)).toMatchObject({
        lease_until: t0 + 80_000,
      });
    });

    it("releases a run's item it never started: pending, its attempt given back, fenced by it", async () => {
      const { jobs, account } = setup();
      const job = await jobs.hold(
        await jobs.create(newJob(account, { mode: 'async' }), { month: '2026-11', leaseUntil: t0 + 1000 }),
        t0 + 60_000,
      );
      const claimed = (await jobs.claim(job, t0 + 10_000, t0)) as Job;
      expect(claimed.attempts).toBe(1);
      expect(await jobs.release(job, t0 + 70_000)).toBeUndefined(); // a stale attempt
      const back = await jobs.release(claimed, t0 + 70_000);
      expect(back).toMatchObject({ status: 'pending', attempts: 0, unit: 'held', lease_until: t0 + 70_000 });
      expect(await jobs.release(claimed, t0 + 70_000)).toBeUndefined(); // not twice
      const again = (await jobs.claim(back as Job, t0 + 10_000, t0)) as Job;
      expect(again.attempts).toBe(1);
    });

    it('fails a job whose lease ran out as interrupted, refunding and still in the index; never one whose lease runs', async () => {
      const { jobs, account } = setup();
      const job = await jobs.markRendering(
        await jobs.create(newJob(account), { month: '2026-11', leaseUntil: t0 + 1000 }),
        t0 + 5000,
      );
      expect(await jobs.failExpired(job, t0 + 5000)).toBe(false);
      expect(await jobs.failExpired(job, t0 + 5001)).toBe(true);
      expect(await jobs.get(account, job.id, true)).toMatchObject({
        status: 'failed',
        error: INTERRUPTED,
        unit: 'refunding',
      });
      expect(await mine(jobs, account, t0 + 5001)).toEqual([job.id]);
      expect(await jobs.failExpired(job, t0 + 9999)).toBe(false);
    });

    it('discards a job only while its unit is being reserved', async () => {
      const { jobs, account } = setup();
      const reserving = await jobs.create(newJob(account), { month: '2026-11', leaseUntil: t0 + 1000 });
      await jobs.discard(reserving);
      expect(await jobs.get(account, reserving.id, true)).toBeUndefined();
      const held = await jobs.hold(
        await jobs.create(newJob(account), { month: '2026-11', leaseUntil: t0 + 1000 }),
        t0 + 2000,
      );
      expect(await rejectionName(jobs.discard(held))).toBe('ConditionalCheckFailedException');
      expect(await jobs.get(account, held.id, true)).toBeDefined();
    });

    it('lists an account’s jobs newest first a page at a time, finds a month’s, and forgets records past retention', async () => {
      const { jobs, account, clock } = setup();
      const made: Job[] = [];
      for (let i = 0; i < 3; i++)
        made.push(await jobs.create(newJob(account), { month: '2026-11', leaseUntil: t0 + 1000 }));
      const other = await jobs.create(newJob(account), { month: '2026-12', leaseUntil: t0 + 1000 });
      await jobs.create(newJob(unique('acct')), { month: '2026-11', leaseUntil: t0 + 1000 });
      const ids = [...made.map((j) => j.id), other.id].reverse();
      expect((await jobs.list(account, { limit: 2, offset: 0 })).map((j) => j.id)).toEqual(ids.slice(0, 2));
      expect((await jobs.list(account, { limit: 10, offset: 2 })).map((j) => j.id)).toEqual(ids.slice(2));
      expect((await jobs.ofMonth(account, '2026-11')).map((j) => j.id).sort()).toEqual(
        made.map((j) => j.id).sort(),
      );
      clock.advance(RETENTION_SECONDS * 1000 + 1000);
      expect(await jobs.get(account, other.id, true)).toBeUndefined();
      expect(await jobs.list(account, { limit: 10, offset: 0 })).toEqual([]);
    });
  });
};
