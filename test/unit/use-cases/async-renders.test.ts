/**
 * Async submit (domain/renders/async-renders.ts) as the composition root builds it
 * (functions/services.ts), on the memory parts (test/helpers/memory-services.ts): an accepted
 * render is a pending job whose unit is held, whose order is stored and whose message is queued,
 * once however often its Idempotency-Key is sent; a fault in queueing fails the job and gives its
 * unit back, and tells the job's webhook endpoint.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ServiceError } from '../../../functions/domain/common/errors.js';
import { newWebhookId } from '../../../functions/domain/common/ids.js';
import type { RenderCommand } from '../../../functions/domain/renders/render-command.js';
import type { StoredWebhookEndpoint } from '../../../functions/domain/webhooks/webhooks.js';
import { asyncRenders, pdfJobs } from '../../../functions/services.js';
import { readTemplateDataText } from '../../../functions/templating/index.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';

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

const failure = async (p: Promise<unknown>): Promise<ServiceError> => {
  try {
    await p;
  } catch (e) {
    if (e instanceof ServiceError) return e;
    throw e;
  }
  throw new Error('expected a ServiceError');
};

const endpoint = async (m: MemoryServices, accountId: string): Promise<string> => {
  const id = newWebhookId();
  const stored: StoredWebhookEndpoint = {
    id,
    account_id: accountId,
    url: 'https://example.com/hook',
    description: null,
    events: ['job.completed', 'job.failed'],
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
    // Held in the queue with a long lease; its unit counts against the plan's concurrency from
    // acceptance to its end (docs/contract.md), unlike a batch's queued jobs.
    expect(await m.jobs.get(ada.accountId, job.job.id, true)).toMatchObject({
      unit: 'held',
      lease_until: m.clock.now().getTime() + m.settings.asyncQueueLeaseSeconds * 1000,
    });
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 1, inFlight: 1 });
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
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 1, inFlight: 1 });
    const other = command('<p>other</p>', { idempotency: { key: 'k-1', bodyHash: 'h2' } });
    expect((await failure(renders.create(ada, other))).code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('refuses a render past the monthly quota, or a template that does not parse, with nothing held or queued', async () => {
    m = memoryServices({ settings: { plans: { free: { monthlyRenders: 1, rendersPerMinute: 10 } } } });
    const ada = caller();
    const renders = m.services.get(asyncRenders);
    expect((await failure(renders.create(ada, command('<p>{% if %}</p>')))).code).toBe(
      'INVALID_HTML_TEMPLATE',
    );
    await renders.create(ada, command('<p>one</p>'));
    const refused = await failure(renders.create(ada, command('<p>two</p>')));
    expect(refused.code).toBe('PLAN_QUOTA_EXCEEDED');
    expect(refused.jobId).toBeUndefined();
    expect(await m.jobs.list(ada.accountId, { limit: 10, offset: 0 })).toHaveLength(1);
    expect(m.renderQueue.messages()).toHaveLength(1);
    expect(m.renderOrders.size()).toBe(1);
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 1, inFlight: 1 });
  });

  it('fails the job and gives its unit back when its message cannot be sent; the endpoint hears job.failed', async () => {
    m = memoryServices();
    const ada = caller();
    const webhookId = await endpoint(m, ada.accountId);
    vi.spyOn(m.renderQueue, 'send').mockRejectedValueOnce(new Error('SQS is unreachable'));
    const renders = m.services.get(asyncRenders);
    const e = await failure(renders.create(ada, command('<p>x</p>', { webhookId })));
    expect(e.code).toBe('INTERNAL_ERROR');
    expect(e.message).toContain('the render unit was given back');
    const failed = await m.jobs.get(ada.accountId, e.jobId as string, true);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'INTERNAL_ERROR' } });
    expect(failed).not.toHaveProperty('unit');
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 0, inFlight: 0 });
    expect(m.renderQueue.messages()).toEqual([]);
    expect(m.faults.map((f) => f.message)).toEqual(['queueing an async render failed']);
    expect(await m.events()).toEqual([
      { type: 'job.failed', data: expect.objectContaining({ id: e.jobId, status: 'failed' }) },
    ]);
    // The queue is back: the next render is accepted.
    expect((await renders.create(ada, command('<p>y</p>'))).job.job.status).toBe('pending');
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 1, inFlight: 1 });
  });

  it('fails the job and gives its unit back when its order cannot be stored; nothing is queued', async () => {
    m = memoryServices();
    const ada = caller();
    vi.spyOn(m.renderOrders, 'put').mockRejectedValueOnce(new Error('S3 refused the write'));
    const e = await failure(m.services.get(asyncRenders).create(ada, command('<p>x</p>')));
    expect(e.code).toBe('INTERNAL_ERROR');
    expect(await m.jobs.get(ada.accountId, e.jobId as string, true)).toMatchObject({ status: 'failed' });
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 0, inFlight: 0 });
    expect(m.renderQueue.messages()).toEqual([]);
  });

  it('releases its Idempotency-Key when queueing failed by a fault, so a retry is accepted', async () => {
    m = memoryServices();
    const ada = caller();
    const renders = m.services.get(asyncRenders);
    const keyed = command('<p>k</p>', { idempotency: { key: 'k-2', bodyHash: 'h' } });
    vi.spyOn(m.renderQueue, 'send').mockRejectedValueOnce(new Error('SQS is unreachable'));
    const e = await failure(renders.create(ada, keyed));
    expect(e.code).toBe('INTERNAL_ERROR');
    const retried = await renders.create(ada, keyed);
    expect(retried.replayed).toBe(false);
    expect(retried.job.job.id).not.toBe(e.jobId);
    expect(m.renderQueue.messages()).toHaveLength(1);
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 1, inFlight: 1 });
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
    const over = await failure(
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
    const sync = await failure(
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
    // Refused before anything was held.
    expect(await m.usage.readUnits(ada.accountId, MONTH)).toEqual({ rendersUsed: 1, inFlight: 1 });
  });
});
