/**
 * The render queue's consumer (domain/renders/render-worker.ts) as the composition root builds it
 * (functions/services.ts), on the memory parts (test/helpers/memory-services.ts), fed by async
 * submit: each job is rendered once whatever the queue does (a message delivered twice, a holder
 * that died); a renderer failure is retried with a backoff while attempts remain, a final one
 * fails the job at once; a fault of a store is another attempt. Whatever happens, every job ends
 * completed or failed, every unit is consumed by a completed render or given back, and the job's
 * webhook endpoint hears its end once.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { newWebhookId } from '../../../functions/domain/common/ids.js';
import type { Principal } from '../../../functions/domain/common/principal.js';
import type { RenderMessage } from '../../../functions/domain/renders/async-renders.js';
import type { RenderCommand } from '../../../functions/domain/renders/render-command.js';
import { asyncRenders, renderWorker } from '../../../functions/services.js';
import { readTemplateDataText } from '../../../functions/templating/index.js';
import {
  caller,
  consumeRenderQueue,
  type MemoryServices,
  memoryServices,
} from '../../helpers/memory-services.js';
import { readPdf } from '../../helpers/pdf.js';

const command = (html: string, webhookId: string | null = null): RenderCommand => ({
  source: { kind: 'inline', html, headerHtml: null, footerHtml: null },
  variables: readTemplateDataText('{"n": 7}'),
  options: {},
  idempotency: null,
  mode: 'async',
  webhookId,
});

const PDF_RENDERING_FAILED = {
  ok: false as const,
  code: 'PDF_RENDERING_FAILED' as const,
  message: 'The browser crashed',
};

let m: MemoryServices;
afterEach(async () => {
  vi.restoreAllMocks();
  await m?.close();
});

/** An account with a webhook endpoint for job events, and an async job of it in the queue. */
const submitted = async (html = '<p>Invoice {{ n }}</p>') => {
  const principal: Principal = caller();
  const webhookId = newWebhookId();
  await m.endpoints.create(
    {
      id: webhookId,
      account_id: principal.accountId,
      url: 'https://example.com/hook',
      description: null,
      events: ['job.completed', 'job.failed'],
      created_at: '2026-11-28T10:00:00.000Z',
      sealed_secret: 'sealed',
    },
    10,
  );
  const { job } = await m.services.get(asyncRenders).create(principal, command(html, webhookId));
  return { principal, job: job.job };
};

describe('the render queue’s consumer', () => {
  it('renders a queued job once: completed, its PDF stored, its unit consumed, its order gone, its endpoint told', async () => {
    m = memoryServices();
    const { principal, job } = await submitted();
    const [message] = m.renderQueue.messages().map((q) => q.body);
    const outcomes = await consumeRenderQueue(m);
    expect(outcomes.map((o) => [o.kind, o.kind === 'done' && o.why])).toEqual([['done', 'completed']]);
    const completed = await m.jobs.get(principal.accountId, job.id, true);
    expect(completed).toMatchObject({ status: 'completed', attempts: 1, page_count: 1 });
    const stored = m.storage.object(job.object_key);
    expect(stored?.body.byteLength).toBe(completed?.file_size_bytes);
    expect((await readPdf(stored?.body as Uint8Array)).text).toContain('Invoice 7');
    expect(await m.renderOrders.get(principal.accountId, job.id)).toBeUndefined();
    expect(await m.usage.readMonth(principal.accountId, '2026-11')).toEqual({
      rendersUsed: 1,
      pdfBytes: completed?.file_size_bytes,
      renderMs: completed?.render_duration_ms,
    });
    expect(await m.ledger(principal.accountId)).toMatchObject({
      open: 0,
      completed: 1,
      unsettled: 0,
      rendersUsed: 1,
      inFlight: 0,
    });
    expect(await m.events()).toEqual([
      { type: 'job.completed', data: expect.objectContaining({ id: job.id, status: 'completed' }) },
    ]);
    expect(m.faults).toEqual([]);

    // Delivered again (SQS is at least once): acknowledged, nothing rendered or counted again.
    const again = await m.services.get(renderWorker).handle(message as RenderMessage);
    expect(again).toMatchObject({ kind: 'done', why: 'already completed' });
    expect(await m.ledger(principal.accountId)).toMatchObject({ completed: 1, rendersUsed: 1 });
    expect(await m.events()).toHaveLength(1);
  });

  it('retries a renderer failure after a backoff while attempts remain, then renders; one unit consumed', async () => {
    m = memoryServices();
    const render = vi.spyOn(m.renderer, 'render').mockResolvedValueOnce(PDF_RENDERING_FAILED);
    const { principal, job } = await submitted();
    const start = m.clock.now().getTime();
    const outcomes = await consumeRenderQueue(m);
    expect(outcomes.map((o) => o.kind)).toEqual(['retry', 'done']);
    expect(outcomes[0]).toMatchObject({
      delaySeconds: m.settings.asyncRetryBaseSeconds,
      job: { status: 'pending', attempts: 1 },
    });
    // It came back after its backoff, not before.
    expect(m.clock.now().getTime() - start).toBe(m.settings.asyncRetryBaseSeconds * 1000);
    expect(render).toHaveBeenCalledTimes(2);
    expect(m.faults.map((f) => f.message)).toEqual([
      'async render attempt 1 failed (PDF_RENDERING_FAILED): retrying',
    ]);
    expect(await m.jobs.get(principal.accountId, job.id, true)).toMatchObject({
      status: 'completed',
      attempts: 2,
    });
    expect(await m.ledger(principal.accountId)).toMatchObject({
      open: 0,
      completed: 1,
      unsettled: 0,
      rendersUsed: 1,
      inFlight: 0,
    });
    expect((await m.events()).map((e) => e.type)).toEqual(['job.completed']);
  });

  it('fails the job after its last attempt, gives its unit back, and tells job.failed once', async () => {
    m = memoryServices({ settings: { asyncMaxAttempts: 2 } });
    vi.spyOn(m.renderer, 'render').mockResolvedValue(PDF_RENDERING_FAILED);
    const { principal, job } = await submitted();
    const outcomes = await consumeRenderQueue(m);
    expect(outcomes.map((o) => o.kind)).toEqual(['retry', 'done']);
    expect(await m.jobs.get(principal.accountId, job.id, true)).toMatchObject({
      status: 'failed',
      attempts: 2,
      error: { code: 'PDF_RENDERING_FAILED' },
    });
    expect(m.storage.keys()).toEqual([]);
    expect(await m.renderOrders.get(principal.accountId, job.id)).toBeUndefined();
    expect(await m.ledger(principal.accountId)).toMatchObject({
      open: 0,
      failed: 1,
      unsettled: 0,
      rendersUsed: 0,
      inFlight: 0,
    });
    expect(await m.events()).toEqual([
      { type: 'job.failed', data: expect.objectContaining({ id: job.id, status: 'failed' }) },
    ]);
  });

  it('fails a job whose template fails as it runs at once, saying where, with its unit given back', async () => {
    m = memoryServices();
    const render = vi.spyOn(m.renderer, 'render');
    const { principal, job } = await submitted('<p>{{ 1 / 0 }}</p>');
    const outcomes = await consumeRenderQueue(m);
    expect(outcomes).toMatchObject([{ kind: 'done', why: 'failed' }]);
    expect(render).toHaveBeenCalledTimes(1);
    const failed = await m.jobs.get(principal.accountId, job.id, true);
    expect(failed).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'INVALID_HTML_TEMPLATE' } });
    expect(failed?.error?.message).toBe('Template error (line 1): ZeroDivisionError: division by zero');
    expect(await m.ledger(principal.accountId)).toMatchObject({
      failed: 1,
      unsettled: 0,
      rendersUsed: 0,
      inFlight: 0,
    });
  });

  it('takes a store fault while completing as another attempt, and consumes the unit once', async () => {
    m = memoryServices();
    vi.spyOn(m.jobs, 'complete').mockRejectedValueOnce(new Error('DynamoDB timed out'));
    const { principal, job } = await submitted();
    const outcomes = await consumeRenderQueue(m);
    expect(outcomes.map((o) => o.kind)).toEqual(['retry', 'done']);
    const completed = await m.jobs.get(principal.accountId, job.id, true);
    expect(completed).toMatchObject({ status: 'completed', attempts: 2 });
    expect(await m.ledger(principal.accountId)).toMatchObject({
      open: 0,
      completed: 1,
      unsettled: 0,
      rendersUsed: 1,
      inFlight: 0,
    });
    expect(await m.usage.readMonth(principal.accountId, '2026-11')).toMatchObject({
      pdfBytes: completed?.file_size_bytes,
    });
    expect(m.faults.map((f) => f.message)).toEqual([`async render of ${job.id} failed`]);
    expect((await m.events()).map((e) => e.type)).toEqual(['job.completed']);
  });

  it('fails a job whose order is gone, with its unit given back', async () => {
    m = memoryServices();
    const { principal, job } = await submitted();
    await m.renderOrders.delete(principal.accountId, job.id);
    expect(await consumeRenderQueue(m)).toMatchObject([{ kind: 'done', why: 'order missing' }]);
    expect(await m.jobs.get(principal.accountId, job.id, true)).toMatchObject({
      status: 'failed',
      error: { code: 'INTERNAL_ERROR' },
    });
    expect(await m.ledger(principal.accountId)).toMatchObject({
      failed: 1,
      unsettled: 0,
      rendersUsed: 0,
      inFlight: 0,
    });
    expect((await m.events()).map((e) => e.type)).toEqual(['job.failed']);
  });

  it('leaves a job its holder renders, and renders it again once the holder’s lease ran out; the stale holder is refused', async () => {
    m = memoryServices();
    const { principal, job } = await submitted();
    const [message] = m.renderQueue.drain();
    // A consumer claimed it, then died before rendering.
    const queued = await m.jobs.get(principal.accountId, job.id, true);
    const dead = await m.jobs.claim(
      queued as NonNullable<typeof queued>,
      m.clock.now().getTime() + m.settings.jobLeaseSeconds * 1000,
      m.clock.now().getTime(),
    );
    expect(dead).toMatchObject({ status: 'rendering', attempts: 1 });
    const worker = m.services.get(renderWorker);
    // Delivered again while the holder's lease runs: acknowledged, not rendered.
    expect(await worker.handle(message as RenderMessage)).toMatchObject({
      kind: 'done',
      why: 'rendering elsewhere',
    });
    m.clock.advance(m.settings.jobLeaseSeconds * 1000 + 1);
    expect(await worker.handle(message as RenderMessage)).toMatchObject({ kind: 'done', why: 'completed' });
    expect(await m.jobs.get(principal.accountId, job.id, true)).toMatchObject({
      status: 'completed',
      attempts: 2,
    });
    // The holder of attempt 1 cannot complete it again.
    const stale = m.jobs.complete(dead as NonNullable<typeof dead>, {
      fileSizeBytes: 1,
      pageCount: 1,
      renderDurationMs: 1,
    });
    await expect(stale).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect(await m.ledger(principal.accountId)).toMatchObject({
      completed: 1,
      unsettled: 0,
      rendersUsed: 1,
      inFlight: 0,
    });
    expect((await m.events()).map((e) => e.type)).toEqual(['job.completed']);
  });

  it('decides nothing when the job cannot be read (the message comes back), and renders it when it can', async () => {
    m = memoryServices();
    const { principal, job } = await submitted();
    const [message] = m.renderQueue.drain();
    vi.spyOn(m.jobs, 'get').mockRejectedValueOnce(new Error('DynamoDB is unreachable'));
    const worker = m.services.get(renderWorker);
    await expect(worker.handle(message as RenderMessage)).rejects.toThrow('DynamoDB is unreachable');
    expect(await m.jobs.get(principal.accountId, job.id, true)).toMatchObject({
      status: 'pending',
      attempts: 0,
    });
    expect(await worker.handle(message as RenderMessage)).toMatchObject({ kind: 'done', why: 'completed' });
    expect(await m.ledger(principal.accountId)).toMatchObject({ completed: 1, rendersUsed: 1, inFlight: 0 });
  });
});
