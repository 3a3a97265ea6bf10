/**
 * Work that died, recovered by the sweeper (domain/jobs/sweeper.ts) as the composition root builds
 * it (functions/services.ts) for the sweeper function, beside async submit, batches and the render
 * queue's consumer, on the memory parts (test/helpers/memory-services.ts): a consumer that died
 * mid-render, a batch whose acceptance died after holding its units. Every job ends completed or
 * failed, every unit is consumed by a completed render or given back, and each end is told once.
 * (test/integration/crash-recovery.test.ts kills real stacks; this is the same bookkeeping in
 * milliseconds.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { BatchItem } from '../../../functions/domain/batches/batches.js';
import { newJobId, newWebhookId } from '../../../functions/domain/common/ids.js';
import type { Principal } from '../../../functions/domain/common/principal.js';
import { INTERRUPTED, type Job, pdfObjectKey } from '../../../functions/domain/jobs/jobs.js';
import type { RenderCommand } from '../../../functions/domain/renders/render-command.js';
import { asyncRenders, batches, renderWorker, sweeper } from '../../../functions/services.js';
import type { Plan } from '../../../functions/settings.js';
import { parseTemplateData, readTemplateDataText } from '../../../functions/templating/index.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';

const MONTH = '2026-11';
const HTML = '<p>Invoice {{ n }}</p>';

const asyncCommand = (webhookId: string | null): RenderCommand => ({
  source: { kind: 'inline', html: HTML, headerHtml: null, footerHtml: null },
  variables: readTemplateDataText('{"n": 1}'),
  options: {},
  idempotency: null,
  mode: 'async',
  webhookId,
});

const items = (n: number): BatchItem[] =>
  Array.from({ length: n }, (_, i) => ({ variables: parseTemplateData(`{"n": ${i}}`) }));

let m: MemoryServices;
afterEach(async () => {
  await m?.close();
});

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

/** A consumer takes the message's job and dies before rendering it. */
const dies = async (principal: Principal, jobId: string): Promise<Job> => {
  const queued = (await m.jobs.get(principal.accountId, jobId, true)) as Job;
  const now = m.clock.now().getTime();
  const claimed = await m.jobs.claim(queued, now + m.settings.jobLeaseSeconds * 1000, now);
  expect(claimed).toMatchObject({ status: 'rendering' });
  return claimed as Job;
};

/** Past the dead holder's lease. */
const leaseRunsOut = () => m.clock.advance(m.settings.jobLeaseSeconds * 1000 + 1);

describe('work that died', () => {
  it('an async job whose consumer died with attempts left is queued again by the sweeper and rendered once', async () => {
    m = memoryServices();
    const ada = caller();
    const webhookId = await endpoint(ada);
    const { job } = await m.services.get(asyncRenders).create(ada, asyncCommand(webhookId));
    const [message] = m.renderQueue.drain(); // taken by the consumer that dies
    expect(message?.job_id).toBe(job.job.id);
    await dies(ada, job.job.id);
    leaseRunsOut();
    expect(await m.services.get(sweeper).sweep()).toMatchObject({ requeued: 1, interrupted: 0 });
    const [again] = m.renderQueue.drain();
    expect(again).toEqual(message);
    expect(await m.services.get(renderWorker).handle(again as NonNullable<typeof again>)).toMatchObject({
      kind: 'done',
      why: 'completed',
    });
    expect(await m.jobs.get(ada.accountId, job.job.id, true)).toMatchObject({
      status: 'completed',
      attempts: 2,
    });
    expect(await m.ledger(ada.accountId)).toMatchObject({
      open: 0,
      completed: 1,
      unsettled: 0,
      rendersUsed: 1,
      inFlight: 0,
      billed: 1,
      billedAgrees: true,
    });
    expect((await m.events()).map((e) => e.type)).toEqual(['job.completed']);
  });

  it('a batch’s last job whose consumer died on its last attempt is failed by the sweeper, its unit given back, and the batch completes, told once', async () => {
    m = memoryServices({ settings: { asyncMaxAttempts: 1 } });
    const ada = caller();
    const webhookId = await endpoint(ada);
    const view = await m.services.get(batches).create(ada, { ...batchCommand(2), webhookId });
    const [first, second] = m.renderQueue.drain();
    await m.services.get(renderWorker).handle(first as NonNullable<typeof first>);
    await dies(ada, second?.job_id as string);
    leaseRunsOut();
    expect(await m.services.get(sweeper).sweep()).toMatchObject({ interrupted: 1, requeued: 0 });
    expect(await m.jobs.get(ada.accountId, second?.job_id as string, true)).toMatchObject({
      status: 'failed',
      error: INTERRUPTED,
    });
    expect(await m.ledger(ada.accountId)).toMatchObject({
      open: 0,
      completed: 1,
      failed: 1,
      unsettled: 0,
      rendersUsed: 1,
      inFlight: 0,
      billed: 1,
      billedAgrees: true,
    });
    expect((await m.services.get(batches).get(ada, view.batch.id)).batch).toMatchObject({
      status: 'completed',
      completed: 1,
      failed: 1,
    });
    // The batch's endpoint hears of each item too (issue 37), and of the batch once.
    const told = await m.events();
    expect(told.map((e) => e.type).sort()).toEqual(['batch.completed', 'job.completed', 'job.failed']);
    expect(told).toContainEqual({
      type: 'batch.completed',
      data: expect.objectContaining({ id: view.batch.id, status: 'completed' }),
    });
    // Another pass finds nothing more to do, and tells nothing again.
    m.clock.advance(60_000);
    expect(await m.services.get(sweeper).sweep()).toMatchObject({ expired: 0, interrupted: 0 });
    expect(await m.events()).toHaveLength(3);
  });

  it('a batch whose acceptance died after holding its units: the sweeper fails its jobs and gives every unit back', async () => {
    m = memoryServices();
    const ada = caller();
    const plan: Plan = m.settings.plans.free as Plan;
    // What a request that died between holding the units and queueing the jobs leaves behind.
    const now = m.clock.now().getTime();
    const batchId = 'bat_01JBQ5Y8S1W8M3ZT6YDV1KQ0XE';
    const written = await m.batchWrites.createJobs(
      [0, 1, 2].map((i) => {
        const id = newJobId();
        return {
          id,
          account_id: ada.accountId,
          template_id: null,
          template_version: null,
          object_key: pdfObjectKey(ada.accountId, id),
          mode: 'async' as const,
          webhook_id: null,
          batch_id: batchId,
          batch_item: i,
        };
      }),
      { month: MONTH, leaseUntil: now + 10 * m.settings.jobLeaseSeconds * 1000 },
    );
    await m.batchWrites.reserveUnits(
      ada.accountId,
      plan,
      MONTH,
      written.map((j) => j.id),
    );
    expect(await m.ledger(ada.accountId)).toMatchObject({ open: 3, rendersUsed: 3, inFlight: 0 });
    // Before the acceptance's lease ran out, the sweeper leaves them.
    expect(await m.services.get(sweeper).sweep()).toMatchObject({ interrupted: 0 });
    m.clock.advance(10 * m.settings.jobLeaseSeconds * 1000 + 1);
    expect(await m.services.get(sweeper).sweep()).toMatchObject({ interrupted: 3, deferred: 0 });
    expect(await m.ledger(ada.accountId)).toMatchObject({
      open: 0,
      failed: 3,
      unsettled: 0,
      rendersUsed: 0,
      inFlight: 0,
    });
    expect(m.renderQueue.messages()).toEqual([]);
  });
});

const batchCommand = (n: number) => ({
  source: { kind: 'inline' as const, html: HTML, headerHtml: null, footerHtml: null },
  options: {},
  items: items(n),
  webhookId: null,
});
