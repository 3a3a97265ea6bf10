/**
 * Async submit (domain/renders/async-renders.ts) as the composition root builds it
 * (functions/services.ts), on the memory parts (test/helpers/memory-services.ts): an accepted
 * render is a pending job whose unit is held, whose order is stored and whose message is queued,
 * once however often its Idempotency-Key is sent; a fault in queueing fails the job and gives its
 * unit back, and tells the job's webhook endpoint.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { newWebhookId } from '../../../functions/domain/common/ids.js';
import type { RenderCommand } from '../../../functions/domain/renders/render-command.js';
import type { StoredWebhookEndpoint } from '../../../functions/domain/webhooks/webhooks.js';
import { asyncRenders, pdfJobs, renderWorker } from '../../../functions/services.js';
import { readTemplateDataText } from '../../../functions/templating/index.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';
import { rejection } from '../../helpers/rejection.js';

const MONTH = '2026-11';

const command = (html: string, over: Partial<RenderCommand> = {}): RenderCommand => ({
  source: { kind: 'inline', html, headerHtml: null, footerHtml: null },
  variables: readTemplateDataText('{"n": 7}'),
  options: {},
  idempotency: null,
  mode: 'async',
  webhookId: null,
  ...over,
});

const endpoint = async (m: MemoryServices, accountId: string): Promise<string> => {
  const id = newWebhookId();
  const stored: StoredWebhookEndpoint = {
    id,
    account_id: accountId,
    url: 'https://example.com/hook',
    description: null,
    events: ['job.completed', 'job.failed', 'job.cancelled'],
    created_at: '2026-11-28T10:00:00.000Z',
    sealed_secret: 'sealed',
  };
  await m.endpoints.create(stored, 10);
  return id;
};

let m: MemoryServices;
afterEach(async () => {
  vi.restoreAllMocks();
  await m?.close();
});

describe('an async render, submitted', () => {
  it('is a pending job held in the queue with its unit, its order stored and its message sent', async () => {
    m = memoryServices();
    const ada = caller();
    const { job, replayed } = await m.services
      .get(asyncRenders)
      .create(ada, command('<p>Invoice {{ n }}</p>'));
    expect(replayed).toBe(false);
    expect(job.job).toMatchObject({
      status: 'pending',
      mode: 'async',
      attempts: 0,
      account_id: ada.accountId,
    });
    expect(job.downloadUrl).toBeNull();
    // Held in the queue with a long lease; its unit counts against the plan's queue depth from
    // acceptance to its end, not its concurrency (issue 37: a queued render is not a running one).
    expect(await m.jobs.get(ada.accountId, job.job.id, true)).toMatchObject({
      unit: 'held',
      lease_until: m.clock.now().getTime() + m.settings.asyncQueueLeaseSeconds * 1000,
    });
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 1, inFlight: undefined });
    expect(await m.renderOrders.get(ada.accountId, job.job.id)).toMatchObject({
      v: 1,
      template: { source: '<p>Invoice {{ n }}</p>', variables: '{"n":7}' },
    });
    expect(m.renderQueue.messages()).toEqual([
      expect.objectContaining({
        body: { v: 1, account_id: ada.accountId, job_id: job.job.id },
        groupId: ada.accountId,
      }),
    ]);
    expect(m.faults).toEqual([]);
  });

  it('is accepted once per Idempotency-Key: a replay answers the same job, queues nothing, holds no second unit', async () => {
    m = memoryServices();
    const ada = caller();
    const renders = m.services.get(asyncRenders);
    const keyed = command('<p>once</p>', { idempotency: { key: 'k-1', bodyHash: 'h1' } });
    const first = await renders.create(ada, keyed);
    const again = await renders.create(ada, keyed);
    expect(again).toMatchObject({
      replayed: true,
      job: { job: { id: first.job.job.id, status: 'pending' } },
    });
    expect(m.renderQueue.messages()).toHaveLength(1);
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 1, inFlight: undefined });
    const other = command('<p>other</p>', { idempotency: { key: 'k-1', bodyHash: 'h2' } });
    expect((await rejection(renders.create(ada, other))).code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('refuses a render past the monthly quota, or a template that does not parse, with nothing held or queued', async () => {
    m = memoryServices({ settings: { plans: { free: { monthlyRenders: 1, rendersPerMinute: 10 } } } });
    const ada = caller();
    const renders = m.services.get(asyncRenders);
    expect((await rejection(renders.create(ada, command('<p>{% if %}</p>')))).code).toBe(
      'INVALID_HTML_TEMPLATE',
    );
    await renders.create(ada, command('<p>one</p>'));
    const refused = await rejection(renders.create(ada, command('<p>two</p>')));
    expect(refused.code).toBe('PLAN_QUOTA_EXCEEDED');
    expect(refused.jobId).toBeUndefined();
    expect(await m.jobs.list(ada.accountId, { limit: 10, offset: 0 })).toHaveLength(1);
    expect(m.renderQueue.messages()).toHaveLength(1);
    expect(m.renderOrders.size()).toBe(1);
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 1, inFlight: undefined });
  });

  it('fails the job and gives its unit back when its message cannot be sent; the endpoint hears job.failed', async () => {
    m = memoryServices();
    const ada = caller();
    const webhookId = await endpoint(m, ada.accountId);
    vi.spyOn(m.renderQueue, 'send').mockRejectedValueOnce(new Error('SQS is unreachable'));
    const renders = m.services.get(asyncRenders);
    const e = await rejection(renders.create(ada, command('<p>x</p>', { webhookId })));
    expect(e.code).toBe('INTERNAL_ERROR');
    expect(e.message).toContain('the render unit was given back');
    const failed = await m.jobs.get(ada.accountId, e.jobId as string, true);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'INTERNAL_ERROR' } });
    expect(failed).not.toHaveProperty('unit');
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 0, inFlight: undefined });
    expect(m.renderQueue.messages()).toEqual([]);
    expect(m.faults.map((f) => f.message)).toEqual(['queueing an async render failed']);
    expect(await m.events()).toEqual([
      { type: 'job.failed', data: expect.objectContaining({ id: e.jobId, status: 'failed' }) },
    ]);
    // The queue is back: the next render is accepted.
    expect((await renders.create(ada, command('<p>y</p>'))).job.job.status).toBe('pending');
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 1, inFlight: undefined });
  });

  it('fails the job and gives its unit back when its order cannot be stored; nothing is queued', async () => {
    m = memoryServices();
    const ada = caller();
    vi.spyOn(m.renderOrders, 'put').mockRejectedValueOnce(new Error('S3 refused the write'));
    const e = await rejection(m.services.get(asyncRenders).create(ada, command('<p>x</p>')));
    expect(e.code).toBe('INTERNAL_ERROR');
    expect(await m.jobs.get(ada.accountId, e.jobId as string, true)).toMatchObject({ status: 'failed' });
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 0, inFlight: undefined });
    expect(m.renderQueue.messages()).toEqual([]);
  });

  it('releases its Idempotency-Key when queueing failed by a fault, so a retry is accepted', async () => {
    m = memoryServices();
    const ada = caller();
    const renders = m.services.get(asyncRenders);
    const keyed = command('<p>k</p>', { idempotency: { key: 'k-2', bodyHash: 'h' } });
    vi.spyOn(m.renderQueue, 'send').mockRejectedValueOnce(new Error('SQS is unreachable'));
    const e = await rejection(renders.create(ada, keyed));
    expect(e.code).toBe('INTERNAL_ERROR');
    const retried = await renders.create(ada, keyed);
    expect(retried.replayed).toBe(false);
    expect(retried.job.job.id).not.toBe(e.jobId);
    expect(m.renderQueue.messages()).toHaveLength(1);
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 1, inFlight: undefined });
  });
});

describe('a queue that queues (issue 37)', () => {
  const plans = {
    free: { monthlyRenders: 100, rendersPerMinute: 100, concurrentRenders: 1, queuedRenders: 3 },
  };

  it("queues past the plan's concurrency up to its queue depth; one more is 429 QUEUE_DEPTH_EXCEEDED with nothing held, until one ends", async () => {
    m = memoryServices({ settings: { plans } });
    const ada = caller();
    const renders = m.services.get(asyncRenders);
    const queued = [];
    for (let i = 0; i < 3; i++) queued.push((await renders.create(ada, command(`<p>${i}</p>`))).job.job);
    const refused = await rejection(renders.create(ada, command('<p>past the depth</p>')));
    expect(refused.code).toBe('QUEUE_DEPTH_EXCEEDED');
    expect(refused.retryAfterSeconds).toBeGreaterThan(0);
    expect(refused.jobId).toBeUndefined();
    expect(await m.jobs.list(ada.accountId, { limit: 10, offset: 0 })).toHaveLength(3);
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 3, inFlight: undefined });
    // One renders and completes: its place in the queue is free again.
    const [first] = m.renderQueue.drain();
    expect(await m.services.get(renderWorker).handle(first as never)).toMatchObject({ why: 'completed' });
    expect((await renders.create(ada, command('<p>now</p>'))).job.job.status).toBe('pending');
  });
});

describe('cancelling an async job (issue 37)', () => {
  it('cancels a pending job once: its unit back, job.cancelled told once, and its message renders nothing', async () => {
    m = memoryServices();
    const ada = caller();
    const webhookId = await endpoint(m, ada.accountId);
    const { job } = await m.services.get(asyncRenders).create(ada, command('<p>x</p>', { webhookId }));
    const jobs = m.services.get(pdfJobs);
    const cancelled = await jobs.cancel(ada, job.job.id);
    expect(cancelled.job).toMatchObject({ status: 'cancelled', error: null });
    expect(cancelled.job.completed_at).toBe(cancelled.job.updated_at);
    // Twice is once.
    expect((await jobs.cancel(ada, job.job.id)).job.status).toBe('cancelled');
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 0, inFlight: undefined });
    expect(await m.jobs.get(ada.accountId, job.job.id, true)).not.toHaveProperty('unit');
    const render = vi.spyOn(m.renderer, 'render');
    const [message] = m.renderQueue.drain();
    expect(await m.services.get(renderWorker).handle(message as never)).toMatchObject({
      kind: 'done',
      why: 'already cancelled',
    });
    expect(render).not.toHaveBeenCalled();
    expect(await m.events()).toEqual([
      { type: 'job.cancelled', data: expect.objectContaining({ id: job.job.id, status: 'cancelled' }) },
    ]);
  });

  it('refuses a job that began rendering (it runs to its end), a sync render and an unknown id', async () => {
    m = memoryServices();
    const ada = caller();
    const { job } = await m.services.get(asyncRenders).create(ada, command('<p>x</p>'));
    const claimed = await m.jobs.claim(
      (await m.jobs.get(ada.accountId, job.job.id, true)) as never,
      Date.now() + 60_000,
      Date.now(),
    );
    expect(claimed?.status).toBe('rendering');
    const jobs = m.services.get(pdfJobs);
    const refused = await rejection(jobs.cancel(ada, job.job.id));
    expect(refused.code).toBe('JOB_NOT_CANCELLABLE');
    expect(refused.message).toContain('runs to its end');
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 1, inFlight: undefined });
    const sync = await jobs.create(ada, command('<p>sync</p>', { mode: 'sync' }));
    expect((await rejection(jobs.cancel(ada, sync.job.job.id))).code).toBe('JOB_NOT_CANCELLABLE');
    expect((await rejection(jobs.cancel(ada, 'job_01ARZ3NDEKTSV4RRFFQ69G5FAV'))).code).toBe(
      'PDF_JOB_NOT_FOUND',
    );
  });

  it('may wait past 120 s, up to the async budget (page_load.timeout_ms); a sync render may not, and neither may more than the budget', async () => {
    m = memoryServices({ settings: { asyncRenderBudgetMs: 300_000 } });
    const ada = caller();
    const long = { page_load: { timeout_ms: 300_000 } };
    const { job } = await m.services.get(asyncRenders).create(ada, command('<p>long</p>', { options: long }));
    expect(job.job.status).toBe('pending');
    expect(await m.renderOrders.get(ada.accountId, job.job.id)).toMatchObject({
      options: { pageLoad: { timeoutMs: 300_000 } },
    });
    const over = await rejection(
      m.services
        .get(asyncRenders)
        .create(ada, command('<p>over</p>', { options: { page_load: { timeout_ms: 300_001 } } })),
    );
    expect(over).toMatchObject({
      code: 'INVALID_PAGE_LOAD_OPTIONS',
      details: [
        {
          field: 'page_load.timeout_ms',
          issue: "must be at most 300000, this deployment's async render budget",
        },
      ],
    });
    const sync = await rejection(
      m.services
        .get(pdfJobs)
        .create(
          ada,
          command('<p>sync</p>', { mode: 'sync', options: { page_load: { timeout_ms: 120_001 } } }),
        ),
    );
    expect(sync).toMatchObject({
      code: 'INVALID_PAGE_LOAD_OPTIONS',
      details: [
        {
          field: 'page_load.timeout_ms',
          issue: 'must be at most 120000 for a sync render; render it async (async: true) to wait longer',
        },
      ],
    });
    // Refused before anything was held: the one async render holds its unit, not a running render.
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 1, inFlight: undefined });
  });
});
