/**
 * The batch ports' contract: the BatchStore (domain/batches/batch-counter.ts) and a batch's wide
 * writes (BatchWrites, domain/batches/batch-acceptance.ts), with the job and usage stores of the
 * same table, since a batch's writes make jobs the job store renders and the batch store lists,
 * and hold units the usage store gives back. The same cases for the memory stores on one memory
 * table and the DynamoDB adapters on dynalite. Times are the test clock's; leases are epoch ms.
 */
import { monotonicFactory } from 'ulid';
import { describe, expect, it } from 'vitest';
import type { UsageStore } from '../../functions/domain/accounts/usage.js';
import type { BatchWrites } from '../../functions/domain/batches/batch-acceptance.js';
import type { BatchStore, NewBatch } from '../../functions/domain/batches/batch-counter.js';
import { ServiceError } from '../../functions/domain/common/errors.js';
import type { Job, JobStore, NewJob } from '../../functions/domain/jobs/jobs.js';
import type { Plan } from '../../functions/settings.js';
import { clockAt, type StoreBackend, unique } from './stores.js';

const nextUlid = monotonicFactory();
const RETENTION_SECONDS = 2 * 86_400;
const MONTH = '2026-11';
const PLAN: Plan = { monthlyRenders: 5, rendersPerMinute: 10, concurrentRenders: 2 };
const t0 = Date.parse('2026-11-28T10:00:00.000Z');

/** The stores of one table. */
export interface BatchStores {
  readonly batches: BatchStore;
  readonly writes: BatchWrites;
  readonly jobs: JobStore;
  readonly usage: UsageStore;
}

const newBatch = (accountId: string, over: Partial<NewBatch> = {}): NewBatch => ({
  id: `bat_${nextUlid()}`,
  account_id: accountId,
  total: 3,
  template_id: null,
  template_version: null,
  webhook_id: null,
  ...over,
});

const batchJob = (accountId: string, batchId: string, item: number): NewJob => {
  const id = `job_${nextUlid()}`;
  return {
    id,
    account_id: accountId,
    template_id: null,
    template_version: null,
    object_key: `pdf/${accountId}/${id}.pdf`,
    mode: 'async',
    webhook_id: null,
    batch_id: batchId,
    batch_item: item,
  };
};

const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    if (e instanceof ServiceError) return e.code;
    return (e as Error).name;
  }
  return undefined;
};

export const batchesContract = (
  backend: StoreBackend<BatchStores, { recordRetentionSeconds: number }>,
): void => {
  describe(`the batch stores on ${backend.name}`, () => {
    const setup = () => {
      const clock = clockAt();
      return {
        clock,
        ...backend.create(clock, { recordRetentionSeconds: RETENTION_SECONDS }),
        account: unique('acct'),
      };
    };

    it('creates a batch once, processing, with replayed items’ ended jobs counted from the start', async () => {
      const { batches, account } = setup();
      const plain = await batches.create(newBatch(account));
      expect(plain).toMatchObject({
        account_id: account,
        status: 'processing',
        total: 3,
        completed: 0,
        failed: 0,
        created_at: '2026-11-28T10:00:00.000Z',
        completed_at: null,
      });
      expect(await batches.get(account, plain.id)).toEqual(plain);
      expect(await refusal(batches.create(newBatch(account, { id: plain.id })))).toBe(
        'ConditionalCheckFailedException',
      );
      expect(await batches.get(unique('acct'), plain.id)).toBeUndefined();

      const replayed = await batches.create(
        newBatch(account, {
          replayed: { '0': 'job_a', '2': 'job_b' },
          ended: { completed: ['job_a'], failed: ['job_b'] },
        }),
      );
      expect(replayed).toMatchObject({ completed: 1, failed: 1, replayed: { '0': 'job_a', '2': 'job_b' } });
      expect(await batches.get(account, replayed.id)).toEqual(replayed);
      expect([...(await batches.counted(account, replayed.id))].sort()).toEqual(['job_a', 'job_b']);
      expect(await batches.countEnded(account, replayed.id, 'job_a', 'completed')).toBeUndefined();
      expect([...(await batches.counted(account, plain.id))]).toEqual([]);
    });

    it('counts each ended job once, and completes a batch once', async () => {
      const { batches, account, clock } = setup();
      const batch = await batches.create(newBatch(account, { total: 2 }));
      clock.advance(1000);
      const once = await batches.countEnded(account, batch.id, 'job_1', 'completed');
      expect(once).toMatchObject({ completed: 1, failed: 0, updated_at: '2026-11-28T10:00:01.000Z' });
      expect(once).not.toHaveProperty('ended_jobs');
      // Sent again (an event delivered twice, a read that repairs): nothing changes.
      expect(await batches.countEnded(account, batch.id, 'job_1', 'completed')).toBeUndefined();
      expect(await batches.countEnded(account, batch.id, 'job_1', 'failed')).toBeUndefined();
      const both = await batches.countEnded(account, batch.id, 'job_2', 'failed');
      expect(both).toMatchObject({ status: 'processing', completed: 1, failed: 1 });
      expect([...(await batches.counted(account, batch.id))].sort()).toEqual(['job_1', 'job_2']);
      // No such batch: nothing counted.
      expect(await batches.countEnded(account, `bat_${nextUlid()}`, 'job_1', 'completed')).toBeUndefined();

      clock.advance(1000);
      const completed = await batches.complete(both as NonNullable<typeof both>);
      expect(completed).toMatchObject({
        status: 'completed',
        completed_at: '2026-11-28T10:00:02.000Z',
        completed: 1,
        failed: 1,
      });
      expect(await batches.complete(both as NonNullable<typeof both>)).toBeUndefined();
      expect(await batches.get(account, batch.id)).toEqual(completed);
    });

    it('cancels a batch never accepted: a marker that is never shown and refuses the batch’s creation; an accepted batch is not cancelled', async () => {
      const { batches, account } = setup();
      const never = newBatch(account);
      expect(await batches.cancel(account, never.id)).toBe(true);
      expect(await batches.cancel(account, never.id)).toBe(true);
      expect(await batches.get(account, never.id)).toBeUndefined();
      expect(await batches.list(account, { limit: 10, offset: 0 })).toEqual([]);
      expect(await refusal(batches.create(never))).toBe('ConditionalCheckFailedException');
      // A job's count on it does nothing that shows (nor completes anything).
      expect(await batches.countEnded(account, never.id, 'job_1', 'failed')).toBeUndefined();
      expect(await batches.get(account, never.id)).toBeUndefined();

      const accepted = newBatch(account);
      await batches.create(accepted);
      expect(await batches.cancel(account, accepted.id)).toBe(false);
      expect(await batches.get(account, accepted.id)).toMatchObject({ status: 'processing' });
      expect((await batches.list(account, { limit: 10, offset: 0 })).map((b) => b.id)).toEqual([accepted.id]);
    });

    it('records a completed batch’s outputs: a failed build may be recorded again, a ready one once', async () => {
      const { batches, account } = setup();
      const batch = await batches.create(newBatch(account, { total: 1 }));
      const failed = {
        status: 'failed' as const,
        merged_pdf_key: null,
        zip_key: null,
        error: 'the ZIP could not be written',
        built_at: '2026-11-28T10:00:00.000Z',
      };
      expect(await batches.recordOutputs(batch, failed)).toMatchObject({ outputs: failed });
      const ready = {
        ...failed,
        status: 'ready' as const,
        zip_key: `batches/${account}/${batch.id}.zip`,
        error: null,
      };
      expect(await batches.recordOutputs(batch, ready)).toMatchObject({ outputs: ready });
      expect(await batches.recordOutputs(batch, { ...ready, zip_key: 'other.zip' })).toBeUndefined();
      expect((await batches.get(account, batch.id))?.outputs).toEqual(ready);
      // No such batch: nothing recorded.
      expect(await batches.recordOutputs({ ...batch, id: `bat_${nextUlid()}` }, ready)).toBeUndefined();
    });

    it('lists an account’s batches newest first a page at a time, and forgets them past retention', async () => {
      const { batches, account, clock } = setup();
      const made = [];
      for (let i = 0; i < 3; i++) made.push(await batches.create(newBatch(account)));
      await batches.create(newBatch(unique('acct')));
      const ids = made.map((b) => b.id).reverse();
      expect((await batches.list(account, { limit: 2, offset: 0 })).map((b) => b.id)).toEqual(
        ids.slice(0, 2),
      );
      expect(await batches.list(account, { limit: 10, offset: 2 })).toEqual([made[0]]);
      clock.advance(RETENTION_SECONDS * 1000 + 1000);
      expect(await batches.get(account, made[0]?.id as string)).toBeUndefined();
      expect(await batches.list(account, { limit: 10, offset: 0 })).toEqual([]);
    });

    it('writes a batch’s jobs as the job store creates one, leased and reserving; lists them in item order', async () => {
      const { batches, writes, jobs, account } = setup();
      const batch = await batches.create(newBatch(account));
      const news = [0, 1, 2].map((i) => batchJob(account, batch.id, i));
      const created = await writes.createJobs(news, { month: MONTH, leaseUntil: t0 + 60_000 });
      expect(created.map((j) => j.id)).toEqual(news.map((j) => j.id));
      for (const [i, job] of created.entries()) {
        expect(job).toMatchObject({
          status: 'pending',
          mode: 'async',
          attempts: 0,
          batch_id: batch.id,
          batch_item: i,
          unit: 'reserving',
          usage_month: MONTH,
          lease_until: t0 + 60_000,
          created_at: '2026-11-28T10:00:00.000Z',
        });
        expect(await jobs.get(account, job.id, true)).toMatchObject(job);
      }
      // In the sweeper's index, as a job the job store creates with a lease.
      const open = (await jobs.openBefore(t0 + 60_001, 1000)).filter((r) => r.accountId === account);
      expect(open.map((r) => r.jobId).sort()).toEqual(news.map((j) => j.id).sort());

      expect((await batches.jobs(account, batch.id, { limit: 2, offset: 0 })).map((j) => j.id)).toEqual(
        news.slice(0, 2).map((j) => j.id),
      );
      expect(await batches.jobs(account, batch.id, { limit: 5, offset: 2 })).toMatchObject([created[2]]);
      expect(await batches.statuses(account, batch.id)).toEqual(
        created.map((j) => ({ id: j.id, status: 'pending', updated_at: j.updated_at })),
      );
      const found = await writes.getJobs(account, [
        news[2]?.id as string,
        'job_missing',
        news[0]?.id as string,
      ]);
      expect([...found.keys()].sort()).toEqual([news[0]?.id, news[2]?.id].sort());
      expect(found.get(news[2]?.id as string)).toMatchObject(created[2] as Job);
      expect((await writes.getJobs(unique('acct'), [news[0]?.id as string])).size).toBe(0);
    });

    it('holds a batch’s jobs in the queue, which the job store then claims; deletes jobs never held', async () => {
      const { batches, writes, jobs, account, clock } = setup();
      const batch = await batches.create(newBatch(account));
      const created = await writes.createJobs(
        [0, 1, 2].map((i) => batchJob(account, batch.id, i)),
        { month: MONTH, leaseUntil: t0 + 60_000 },
      );
      clock.advance(1000);
      const held = await writes.holdJobs(created.slice(0, 2), t0 + 600_000);
      for (const job of held) {
        expect(job).toMatchObject({
          unit: 'held',
          lease_until: t0 + 600_000,
          updated_at: '2026-11-28T10:00:01.000Z',
        });
        expect(await jobs.get(account, job.id, true)).toMatchObject(job);
      }
      // The lease index moved with the lease: only the job not held is open before then.
      const open = (await jobs.openBefore(t0 + 60_001, 1000)).filter((r) => r.accountId === account);
      expect(open.map((r) => r.jobId)).toEqual([created[2]?.id]);

      // The job store renders a held one; the batch store sees it rendering.
      const claimed = await jobs.claim(held[0] as Job, t0 + 700_000, clock.now().getTime());
      expect(claimed).toMatchObject({ status: 'rendering', attempts: 1 });
      expect((await batches.statuses(account, batch.id)).map((s) => s.status)).toEqual([
        'rendering',
        'pending',
        'pending',
      ]);

      await writes.deleteJobs([created[2] as Job]);
      expect(await jobs.get(account, created[2]?.id as string, true)).toBeUndefined();
      expect((await batches.jobs(account, batch.id, { limit: 10, offset: 0 })).map((j) => j.id)).toEqual(
        held.map((j) => j.id),
      );
    });

    it('holds a fresh month to the quota: more jobs than the plan allows are refused with nothing yet used', async () => {
      const { writes, usage, account } = setup();
      const six = ['job_1', 'job_2', 'job_3', 'job_4', 'job_5', 'job_6'];
      expect(await refusal(writes.reserveUnits(account, PLAN, MONTH, six))).toBe('PLAN_QUOTA_EXCEEDED');
      expect(await usage.readMonth(account, MONTH)).toMatchObject({ rendersUsed: 0 });
      await writes.reserveUnits(account, PLAN, MONTH, six.slice(0, 5));
      expect(await usage.readMonth(account, MONTH)).toMatchObject({ rendersUsed: 5 });
    });

    it('holds units for all of a batch’s jobs or none, once however often sent; the usage store gives them back', async () => {
      const { writes, usage, account } = setup();
      await usage.reserveRender(account, PLAN, MONTH, 'job_running');
      await writes.reserveUnits(account, PLAN, MONTH, ['job_1', 'job_2', 'job_3']);
      // A queued job is no running render: concurrency is not counted.
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 4, inFlight: 1 });
      // Sent again (an answer lost): held once.
      await writes.reserveUnits(account, PLAN, MONTH, ['job_1', 'job_2', 'job_3']);
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 4, inFlight: 1 });
      // Two more do not fit in 5: refused whole.
      expect(await refusal(writes.reserveUnits(account, PLAN, MONTH, ['job_4', 'job_5']))).toBe(
        'PLAN_QUOTA_EXCEEDED',
      );
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 4, inFlight: 1 });
      // A job holding a running render's unit is not a batch's write sent again.
      expect(await refusal(writes.reserveUnits(account, PLAN, MONTH, ['job_running']))).toBe(
        'PLAN_QUOTA_EXCEEDED',
      );
      await writes.reserveUnits(account, PLAN, MONTH, ['job_4']);
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 5, inFlight: 1 });
      await writes.reserveUnits(account, PLAN, MONTH, []);

      // The usage store gives back or records a queued unit job by job.
      await usage.releaseRender(account, MONTH, 'job_4');
      await usage.releaseRender(account, MONTH, 'job_4');
      await usage.recordRender(account, MONTH, 1000, 50, 'job_3');
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 4, inFlight: 1 });
      expect(await usage.readMonth(account, MONTH)).toEqual({ rendersUsed: 4, pdfBytes: 1000, renderMs: 50 });

      // An acceptance undone gives back the units it held, once.
      await writes.reserveUnits(account, PLAN, MONTH, ['job_6']);
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 5, inFlight: 1 });
      await writes.releaseUnits(account, MONTH, ['job_6']);
      await writes.releaseUnits(account, MONTH, ['job_6']);
      await writes.releaseUnits(account, MONTH, []);
      await writes.releaseUnits(unique('acct'), MONTH, ['job_6']);
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 4, inFlight: 1 });
    });

    it('claims an item key when no live record has it or the live one names the job replaced; forgets it for its job only', async () => {
      const { writes, account, clock } = setup();
      const record = { bodyHash: 'hash-1', jobId: 'job_1', batchId: 'bat_1' };
      expect(await writes.claimItemKey(account, 'key-a', record)).toBe(true);
      // The same claim again (an answer lost): its own.
      expect(await writes.claimItemKey(account, 'key-a', record)).toBe(true);
      expect(await writes.claimItemKey(account, 'key-a', { ...record, jobId: 'job_2' })).toBe(false);
      expect(await writes.itemKeys(account, ['key-a', 'key-b'])).toEqual(
        new Map([['key-a', { bodyHash: 'hash-1', jobId: 'job_1' }]]),
      );
      expect((await writes.itemKeys(unique('acct'), ['key-a'])).size).toBe(0);
      // Its job failed by a fault of the service: a new job takes the key over.
      expect(await writes.claimItemKey(account, 'key-a', { ...record, jobId: 'job_3' }, 'job_1')).toBe(true);
      expect((await writes.itemKeys(account, ['key-a'])).get('key-a')).toEqual({
        bodyHash: 'hash-1',
        jobId: 'job_3',
      });
      // Forgotten only for the job that holds it.
      await writes.releaseItemKey(account, 'key-a', 'job_1');
      expect((await writes.itemKeys(account, ['key-a'])).size).toBe(1);
      await writes.releaseItemKey(account, 'key-a', 'job_3');
      expect((await writes.itemKeys(account, ['key-a'])).size).toBe(0);
      expect(await writes.claimItemKey(account, 'key-a', { ...record, jobId: 'job_4' })).toBe(true);
      // Kept 24 hours, as an Idempotency-Key; then anyone's.
      clock.advance(24 * 3600 * 1000 + 1000);
      expect((await writes.itemKeys(account, ['key-a'])).size).toBe(0);
      expect(await writes.claimItemKey(account, 'key-a', { ...record, jobId: 'job_5' })).toBe(true);
    });
  });
};
