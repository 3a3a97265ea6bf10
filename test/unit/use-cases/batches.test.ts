/**
 * Batches (domain/batches/) as the composition root builds them (functions/services.ts), on the
 * memory parts (test/helpers/memory-services.ts; the batch store and its wide writes share one
 * memory table with the job and usage stores, as on DynamoDB), with the render queue's consumer
 * rendering their jobs: a batch is accepted whole or not at all, each item's job renders once, the
 * batch completes once and tells its endpoint once, item keys replay earlier jobs, and after a
 * fault (the queue, a store) every job ends and every unit is consumed or given back.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BatchCommand, BatchItem } from '../../../functions/domain/batches/batches.js';
import { newWebhookId } from '../../../functions/domain/common/ids.js';
import type { Principal } from '../../../functions/domain/common/principal.js';
import { batches, renderWorker, sweeper } from '../../../functions/services.js';
import { parseTemplateData } from '../../../functions/templating/index.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';
import { rejection } from '../../helpers/rejection.js';

const item = (variables: string, idempotencyKey?: string): BatchItem => ({
  variables: parseTemplateData(variables),
  ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
});

const batchOf = (items: readonly BatchItem[], webhookId: string | null = null): BatchCommand => ({
  source: {
    kind: 'inline',
    html: '<p>Invoice {{ n }}: {{ 100 / d }}</p>',
    headerHtml: null,
    footerHtml: null,
  },
  options: {},
  items,
  webhookId,
});

const three = () => [item('{"n": 1, "d": 1}'), item('{"n": 2, "d": 2}'), item('{"n": 3, "d": 4}')];

let m: MemoryServices;
afterEach(async () => {
  vi.restoreAllMocks();
  await m?.close();
});

/** An endpoint of the account that hears everything. */
const endpoint = async (principal: Principal): Promise<string> => {
  const id = newWebhookId();
  await m.endpoints.create(
    {
      id,
      account_id: principal.accountId,
      url: 'https://example.com/hook',
      description: null,
      events: ['job.completed', 'job.failed', 'batch.completed'],
      created_at: '2026-11-28T10:00:00.000Z',
      sealed_secret: 'sealed',
    },
    10,
  );
  return id;
};

/** Plays the render queue's consumer until the queue is empty (no retries expected here). */
const work = async () => {
  const worker = m.services.get(renderWorker);
  const whys: string[] = [];
  for (let messages = m.renderQueue.drain(); messages.length > 0; messages = m.renderQueue.drain()) {
    for (const message of messages) {
      const outcome = await worker.handle(message);
      whys.push(outcome.kind === 'done' ? outcome.why : `retry ${outcome.delaySeconds}`);
    }
  }
  return whys;
};

describe('a batch', () => {
  it('is accepted whole: every item a pending job, its units held, one order, one message each; its consumer holds each job in the queue', async () => {
    m = memoryServices();
    const ada = caller();
    const view = await m.services.get(batches).create(ada, batchOf(three()));
    expect(view.batch).toMatchObject({ status: 'processing', total: 3, completed: 0, failed: 0 });
    expect(view.counts).toEqual({ pending: 3, rendering: 0, completed: 0, failed: 0, cancelled: 0 });
    const jobs = await m.batchStore.jobs(ada.accountId, view.batch.id, { limit: 10, offset: 0 });
    // Accepted by the batch's record, the last write: a job is held in the queue by its consumer.
    expect(jobs.map((j) => [j.status, j.unit, j.batch_item])).toEqual([
      ['pending', 'reserving', 0],
      ['pending', 'reserving', 1],
      ['pending', 'reserving', 2],
    ]);
    // Quota units, not running renders: the plan's concurrency (2) neither refuses nor counts them.
    expect(await m.ledger(ada.accountId)).toMatchObject({ rendersUsed: 3, inFlight: 0 });
    expect(m.batchOrders.size()).toBe(1);
    expect(m.renderOrders.size()).toBe(0);
    expect(m.renderQueue.messages().map((q) => [q.body.job_id, q.groupId])).toEqual(
      jobs.map((j) => [j.id, ada.accountId]),
    );
  });

  it('completes once its jobs rendered: each once, the order gone, its endpoint told batch.completed once', async () => {
    m = memoryServices();
    const ada = caller();
    const webhookId = await endpoint(ada);
    const { batch } = await m.services.get(batches).create(ada, batchOf(three(), webhookId));
    expect(await work()).toEqual(['completed', 'completed', 'completed']);
    const done = await m.services.get(batches).get(ada, batch.id);
    expect(done.batch).toMatchObject({ status: 'completed', completed: 3, failed: 0 });
    expect(done.counts).toEqual({ pending: 0, rendering: 0, completed: 3, failed: 0, cancelled: 0 });
    expect(m.batchOrders.size()).toBe(0);
    const listed = await m.services.get(batches).listJobs(ada, batch.id, { limit: 10, offset: 0 });
    expect(listed.map((v) => [v.job.batch_item, v.job.status])).toEqual([
      [0, 'completed'],
      [1, 'completed'],
      [2, 'completed'],
    ]);
    expect(await m.ledger(ada.accountId)).toMatchObject({
      open: 0,
      completed: 3,
      unsettled: 0,
      rendersUsed: 3,
      inFlight: 0,
    });
    // Each job tells the batch's endpoint (it subscribed to job.completed: issue 37); the batch
    // tells it once.
    const told = await m.events();
    expect(told.map((e) => `${e.type} ${e.data.item_index ?? '-'}`).sort()).toEqual([
      'batch.completed -',
      'job.completed 0',
      'job.completed 1',
      'job.completed 2',
    ]);
    expect(told.find((e) => e.type === 'batch.completed')).toEqual({
      type: 'batch.completed',
      data: expect.objectContaining({
        id: batch.id,
        status: 'completed',
        counts: { pending: 0, rendering: 0, completed: 3, failed: 0, cancelled: 0 },
      }),
    });
    expect(m.faults).toEqual([]);
  });

  it('completes with the item that failed counted, its unit given back', async () => {
    m = memoryServices();
    const ada = caller();
    const items = [item('{"n": 1, "d": 1}'), item('{"n": 2, "d": 0}'), item('{"n": 3, "d": 4}')];
    const { batch } = await m.services.get(batches).create(ada, batchOf(items));
    expect(await work()).toEqual(['completed', 'failed', 'completed']);
    expect((await m.services.get(batches).get(ada, batch.id)).batch).toMatchObject({
      status: 'completed',
      completed: 2,
      failed: 1,
    });
    expect(await m.ledger(ada.accountId)).toMatchObject({
      open: 0,
      completed: 2,
      failed: 1,
      unsettled: 0,
      rendersUsed: 2,
      inFlight: 0,
    });
  });

  it('is refused whole past the monthly quota, or for an item lacking a variable, with nothing written', async () => {
    m = memoryServices({ settings: { plans: { free: { monthlyRenders: 4, rendersPerMinute: 10 } } } });
    const ada = caller();
    const use = m.services.get(batches);
    await use.create(ada, batchOf([item('{"n": 0, "d": 1}'), item('{"n": 0, "d": 1}')]));
    const quota = await rejection(use.create(ada, batchOf(three())));
    expect(quota.code).toBe('PLAN_QUOTA_EXCEEDED');
    expect(quota.message).toContain('only 2 of the monthly quota of 4 renders remain');
    const missing = await rejection(use.create(ada, batchOf([item('{"n": 1, "d": 1}'), item('{"n": 2}')])));
    expect(missing).toMatchObject({
      code: 'INVALID_HTML_TEMPLATE',
      details: [expect.objectContaining({ field: 'items[1].variables', name: 'd' })],
    });
    expect(await use.list(ada, { limit: 10, offset: 0 })).toHaveLength(1);
    expect(await m.ledger(ada.accountId)).toMatchObject({ open: 2, rendersUsed: 2, inFlight: 0 });
    expect(m.renderQueue.messages()).toHaveLength(2);
    expect(m.batchOrders.size()).toBe(1);
  });

  it('replays an item whose key was used for the same item: its earlier job, no new unit or message; another item with the key is refused', async () => {
    m = memoryServices();
    const ada = caller();
    const use = m.services.get(batches);
    const first = await use.create(
      ada,
      batchOf([item('{"n": 1, "d": 1}', 'inv-1'), item('{"n": 2, "d": 1}', 'inv-2')]),
    );
    await work();
    const again = await use.create(
      ada,
      batchOf([item('{"n": 2, "d": 1}', 'inv-2'), item('{"n": 3, "d": 1}', 'inv-3')]),
    );
    const earlier = await m.batchStore.jobs(ada.accountId, first.batch.id, { limit: 10, offset: 0 });
    expect(again.batch.replayed).toEqual({ '0': earlier[1]?.id });
    expect(again.counts).toEqual({ pending: 1, rendering: 0, completed: 1, failed: 0, cancelled: 0 });
    expect(m.renderQueue.messages()).toHaveLength(1);
    expect(await m.ledger(ada.accountId)).toMatchObject({ rendersUsed: 3, inFlight: 0 });
    await work();
    const listed = await use.listJobs(ada, again.batch.id, { limit: 10, offset: 0 });
    expect(listed.map((v) => v.job.id)[0]).toBe(earlier[1]?.id);
    expect((await use.get(ada, again.batch.id)).batch).toMatchObject({ status: 'completed', completed: 2 });

    const reused = await rejection(use.create(ada, batchOf([item('{"n": 9, "d": 1}', 'inv-1')])));
    expect(reused).toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
      details: [expect.objectContaining({ field: 'items[0].idempotency_key' })],
    });
    expect(await m.ledger(ada.accountId)).toMatchObject({ open: 0, completed: 3, rendersUsed: 3 });
  });

  it('replays the items of an accepted batch sent again before its consumer took its jobs: the same jobs, not 503', async () => {
    m = memoryServices();
    const ada = caller();
    const use = m.services.get(batches);
    const body = batchOf([item('{"n": 1, "d": 1}', 'w-1'), item('{"n": 2, "d": 1}', 'w-2')]);
    const first = await use.create(ada, body);
    // No consumer has run: its jobs are still those of an acceptance, but the batch was accepted.
    const again = await use.create(ada, body);
    const earlier = await m.batchStore.jobs(ada.accountId, first.batch.id, { limit: 10, offset: 0 });
    expect(again.batch.replayed).toEqual({ '0': earlier[0]?.id, '1': earlier[1]?.id });
    expect(m.renderQueue.messages()).toHaveLength(2);
    await work();
    expect((await use.get(ada, again.batch.id)).batch).toMatchObject({ status: 'completed', completed: 2 });
    expect(await m.ledger(ada.accountId)).toMatchObject({ open: 0, completed: 2, rendersUsed: 2 });
  });

  it('is accepted when its messages cannot be sent: the sweeper queues its jobs once their acceptance lease ran out, and they render', async () => {
    m = memoryServices();
    const ada = caller();
    vi.spyOn(m.renderQueue as Required<typeof m.renderQueue>, 'sendMany').mockRejectedValueOnce(
      new Error('SQS is unreachable'),
    );
    const use = m.services.get(batches);
    const view = await use.create(ada, batchOf(three()));
    expect(view.batch).toMatchObject({ status: 'processing', total: 3 });
    expect(m.faults.map((f) => f.message)).toEqual([
      'queueing a batch failed; the sweeper queues its jobs once their acceptance lease runs out',
    ]);
    expect(m.renderQueue.messages()).toEqual([]);
    expect(await m.ledger(ada.accountId)).toMatchObject({ open: 3, rendersUsed: 3, inFlight: 0 });
    // Within its acceptance lease the sweeper leaves them; past it, it queues them (10 job leases).
    expect(await m.services.get(sweeper).sweep()).toMatchObject({ requeued: 0, interrupted: 0 });
    m.clock.advance(10 * m.settings.jobLeaseSeconds * 1000 + 1);
    expect(await m.services.get(sweeper).sweep()).toMatchObject({ requeued: 3, interrupted: 0 });
    expect(await work()).toEqual(['completed', 'completed', 'completed']);
    expect((await use.get(ada, view.batch.id)).batch).toMatchObject({ status: 'completed', completed: 3 });
    expect(await m.ledger(ada.accountId)).toMatchObject({
      open: 0,
      completed: 3,
      rendersUsed: 3,
      unsettled: 0,
    });
  });

  it('undoes its acceptance when holding its units fails by a fault: no job, no unit, its keys free for the retry', async () => {
    m = memoryServices();
    const ada = caller();
    vi.spyOn(m.batchWrites, 'reserveUnits').mockRejectedValueOnce(new Error('DynamoDB timed out'));
    const use = m.services.get(batches);
    const items = () => [item('{"n": 1, "d": 1}', 'inv-1'), item('{"n": 2, "d": 1}', 'inv-2')];
    await expect(use.create(ada, batchOf(items()))).rejects.toThrow('DynamoDB timed out');
    expect(await m.ledger(ada.accountId)).toMatchObject({ open: 0, completed: 0, failed: 0, rendersUsed: 0 });
    expect(await use.list(ada, { limit: 10, offset: 0 })).toEqual([]);
    expect(m.renderQueue.messages()).toEqual([]);
    // The retry is a new acceptance: its keys are free, nothing is replayed.
    const retried = await use.create(ada, batchOf(items()));
    expect(retried.batch.replayed).toBeUndefined();
    expect(retried.counts.pending).toBe(2);
    expect(await work()).toEqual(['completed', 'completed']);
    expect(await m.ledger(ada.accountId)).toMatchObject({
      open: 0,
      completed: 2,
      rendersUsed: 2,
      inFlight: 0,
    });
  });

  it('counts a job whose count did not go through when the batch is read later, and completes it once', async () => {
    m = memoryServices();
    const ada = caller();
    const use = m.services.get(batches);
    const { batch } = await use.create(ada, batchOf([item('{"n": 1, "d": 1}')]));
    vi.spyOn(m.batchStore, 'countEnded').mockRejectedValue(new Error('DynamoDB timed out'));
    expect(await work()).toEqual(['completed']);
    vi.mocked(m.batchStore.countEnded).mockRestore();
    // Its job ended; its count is missing. A read soon after leaves it to the job's holder…
    expect((await use.get(ada, batch.id)).batch).toMatchObject({ status: 'processing', completed: 0 });
    // …and a read once that count is overdue counts it and completes the batch, once.
    m.clock.advance(31_000);
    expect((await use.get(ada, batch.id)).batch).toMatchObject({ status: 'completed', completed: 1 });
    expect((await use.get(ada, batch.id)).batch).toMatchObject({ status: 'completed', completed: 1 });
    expect(await m.ledger(ada.accountId)).toMatchObject({ completed: 1, rendersUsed: 1, inFlight: 0 });
  });
});
