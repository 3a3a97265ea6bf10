/**
 * The sweeper (domain/sweeper.ts) as the composition root builds it (functions/services.ts) on the
 * memory parts (test/helpers/memory-services.ts: the memory job and usage stores and the memory
 * queue, each passing its port's contract, test/contract), and a test clock. Jobs are left as a request
 * that died would leave them, through the stores' own operations; the sweeper ends them and works
 * the month's counters out again from its jobs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { newJobId } from '../../../functions/domain/common/ids.js';
import { INTERRUPTED, type Job, type NewJob } from '../../../functions/domain/jobs/jobs.js';
import { sweeper as sweeperOf } from '../../../functions/services.js';
import type { Plan } from '../../../functions/settings.js';
import { type MemoryServices, memoryServices } from '../../helpers/memory-services.js';

const PLAN: Plan = { monthlyRenders: 10, rendersPerMinute: 10, concurrentRenders: 3 };
const ACCOUNT = 'acct-swept';
const MONTH = '2026-11';

let built: MemoryServices[] = [];
afterEach(async () => {
  await Promise.all(built.map((m) => m.close()));
  built = [];
});

const setup = () => {
  const m = memoryServices({ settings: { asyncMaxAttempts: 2, asyncQueueLeaseSeconds: 300 } });
  built.push(m);
  const { clock, jobs, usage, renderQueue: queue, faults } = m;
  const sweeper = m.services.get(sweeperOf);
  const now = () => clock.now().getTime();
  /** A job whose request reserved its unit and began rendering, then died. */
  const dead = async (over: Partial<NewJob> = {}): Promise<Job> => {
    const id = newJobId();
    const job = await jobs.create(
      {
        id,
        account_id: ACCOUNT,
        template_id: null,
        template_version: null,
        object_key: `pdf/${ACCOUNT}/${id}.pdf`,
        ...over,
      },
      { month: MONTH, leaseUntil: now() + 30_000 },
    );
    await usage.reserveRender(ACCOUNT, PLAN, MONTH, id);
    return jobs.markRendering(job, now() + 30_000);
  };
  return { clock, jobs, usage, queue, sweeper, faults, dead, now };
};

describe('the sweeper', () => {
  it('fails a job whose holder died once its lease ran out, and gives its unit back', async () => {
    const { sweeper, jobs, usage, clock, dead, faults } = setup();
    const job = await dead();
    expect(await usage.readUnits(ACCOUNT, MONTH)).toEqual({ rendersUsed: 1, inFlight: 1 });
    expect(await sweeper.sweep()).toMatchObject({ expired: 0, interrupted: 0 });
    clock.advance(31_000);
    expect(await sweeper.sweep()).toMatchObject({ expired: 1, interrupted: 1, reconciled: 1, deferred: 0 });
    expect(await jobs.get(ACCOUNT, job.id, true)).toMatchObject({ status: 'failed', error: INTERRUPTED });
    expect(await usage.readUnits(ACCOUNT, MONTH)).toEqual({ rendersUsed: 0, inFlight: 0 });
    // Nothing is left for the next pass.
    clock.advance(60_000);
    expect(await sweeper.sweep()).toMatchObject({ expired: 0 });
    expect(faults).toEqual([]);
  });

  it('leaves a job whose holder renews its lease, and keeps the units of completed and running jobs', async () => {
    const { sweeper, jobs, usage, clock, dead, now } = setup();
    const live = await dead();
    const gone = await dead();
    const done = await dead();
    await jobs.complete(done, { fileSizeBytes: 10, pageCount: 1, renderDurationMs: 5 });
    await usage.recordRender(ACCOUNT, MONTH, 10, 5, done.id);
    clock.advance(20_000);
    await jobs.renew(live, now() + 30_000);
    clock.advance(11_000);
    expect(await sweeper.sweep()).toMatchObject({ interrupted: 1 });
    expect((await jobs.get(ACCOUNT, live.id, true))?.status).toBe('rendering');
    expect((await jobs.get(ACCOUNT, gone.id, true))?.status).toBe('failed');
    // The completed render's unit and the running one's stay held.
    expect(await usage.readUnits(ACCOUNT, MONTH)).toEqual({ rendersUsed: 2, inFlight: 1 });
  });

  it('sends an async job whose lease ran out to the queue again while it has attempts left, then fails it', async () => {
    const { sweeper, jobs, queue, clock, now } = setup();
    const id = newJobId();
    const created = await jobs.create(
      {
        id,
        account_id: ACCOUNT,
        template_id: null,
        template_version: null,
        object_key: `pdf/${ACCOUNT}/${id}.pdf`,
        mode: 'async',
      },
      { month: MONTH, leaseUntil: now() + 30_000 },
    );
    const held = await jobs.hold(created, now() + 30_000);
    const claimed = (await jobs.claim(held, now() + 30_000, now())) as Job;
    expect(claimed.attempts).toBe(1);
    clock.advance(31_000);
    expect(await sweeper.sweep()).toMatchObject({ requeued: 1, interrupted: 0 });
    expect(queue.drain()).toEqual([{ v: 1, account_id: ACCOUNT, job_id: id }]);
    expect(await jobs.get(ACCOUNT, id, true)).toMatchObject({
      status: 'pending',
      lease_until: now() + 300_000,
    });
    // The second attempt dies too: none left.
    const again = (await jobs.claim(
      (await jobs.get(ACCOUNT, id, true)) as Job,
      now() + 30_000,
      now(),
    )) as Job;
    expect(again.attempts).toBe(2);
    clock.advance(31_000);
    expect(await sweeper.sweep()).toMatchObject({ requeued: 0, interrupted: 1 });
    expect(queue.drain()).toEqual([]);
    expect((await jobs.get(ACCOUNT, id, true))?.error).toEqual(INTERRUPTED);
  });

  it('at the local stack start (every holder gone) frees a dead render at once, requeues the async job it was rendering, and leaves the queued one', async () => {
    const { sweeper, jobs, usage, queue, dead, now } = setup();
    const sync = await dead();
    const asyncJob = async () => {
      const id = newJobId();
      const created = await jobs.create(
        {
          id,
          account_id: ACCOUNT,
          template_id: null,
          template_version: null,
          object_key: `pdf/${ACCOUNT}/${id}.pdf`,
          mode: 'async',
        },
        { month: MONTH, leaseUntil: now() + 30_000 },
      );
      // An async render holds a unit and a place in the queue depth, not a running render (issue 37).
      await usage.reserveAsync(ACCOUNT, PLAN, MONTH, id);
      return jobs.hold(created, now() + 300_000);
    };
    const rendering = (await jobs.claim(await asyncJob(), now() + 30_000, now())) as Job;
    const queued = await asyncJob();
    expect(await usage.readUnits(ACCOUNT, MONTH)).toEqual({ rendersUsed: 3, inFlight: 1 });
    // Every lease still runs: a pass on the timer leaves them all.
    expect(await sweeper.sweep()).toMatchObject({ expired: 0, interrupted: 0 });
    // The pass at the start does not wait for the dead holders' leases.
    expect(await sweeper.sweep(undefined, { holdersGone: true })).toMatchObject({
      interrupted: 1,
      requeued: 1,
      deferred: 0,
    });
    expect(await jobs.get(ACCOUNT, sync.id, true)).toMatchObject({ status: 'failed', error: INTERRUPTED });
    expect(await jobs.get(ACCOUNT, rendering.id, true)).toMatchObject({ status: 'pending' });
    expect(queue.drain()).toEqual([{ v: 1, account_id: ACCOUNT, job_id: rendering.id }]);
    expect(await jobs.get(ACCOUNT, queued.id, true)).toMatchObject({
      status: 'pending',
      lease_until: queued.lease_until,
    });
    // The dead sync render's slot and unit are free now; the two async jobs keep their units.
    expect(await usage.readUnits(ACCOUNT, MONTH)).toEqual({ rendersUsed: 2, inFlight: 0 });
  });
});
