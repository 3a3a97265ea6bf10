/**
 * What an ended job tells its webhook endpoint (domain/webhooks/webhook-events.ts), as the
 * composition root wires it (functions/services.ts: the job lifecycle's events, the webhook
 * emitter, the job's API view as the payload), on the memory parts
 * (test/helpers/memory-services.ts: the memory endpoint and delivery stores and the memory webhook
 * queue, each passing its port's contract in test/contract). A job's end is one event, recorded
 * once and queued once, even when the render queue delivers its message twice; nobody is told of
 * a job that names no endpoint or whose endpoint does not subscribe to its event.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { newWebhookId } from '../../../functions/domain/common/ids.js';
import type { Principal } from '../../../functions/domain/common/principal.js';
import type { RenderMessage } from '../../../functions/domain/renders/async-renders.js';
import type { RenderCommand } from '../../../functions/domain/renders/render-command.js';
import type { SubscribableEventType } from '../../../functions/domain/webhooks/webhooks.js';
import { asyncRenders, pdfJobs, renderWorker } from '../../../functions/services.js';
import { readTemplateDataText } from '../../../functions/templating/index.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';

let m: MemoryServices;
afterEach(async () => {
  vi.restoreAllMocks();
  await m?.close();
});

const render = (html: string, webhookId: string | null, mode: 'sync' | 'async' = 'sync'): RenderCommand => ({
  source: { kind: 'inline', html, headerHtml: null, footerHtml: null },
  variables: readTemplateDataText('{"n": 7}'),
  options: {},
  idempotency: null,
  mode,
  webhookId,
});

const endpoint = async (principal: Principal, events: readonly SubscribableEventType[]): Promise<string> => {
  const id = newWebhookId();
  await m.endpoints.create(
    {
      id,
      account_id: principal.accountId,
      url: 'https://example.com/hook',
      description: null,
      events: [...events],
      created_at: '2026-11-28T10:00:00.000Z',
      sealed_secret: 'sealed',
    },
    10,
  );
  return id;
};

/** A sync render: its job's id, whether it completed or failed. */
const renderSync = async (principal: Principal, command: RenderCommand): Promise<string> =>
  m.services
    .get(pdfJobs)
    .create(principal, command)
    .then(
      (v) => v.job.job.id,
      (e: { jobId?: string }) => e.jobId as string,
    );

describe('job events to webhooks', () => {
  it("records and queues a job's end once, its payload the job as the API shows it", async () => {
    m = memoryServices();
    const ada = caller();
    const webhookId = await endpoint(ada, ['job.completed', 'job.failed']);
    const jobId = await renderSync(ada, render('<p>Invoice {{ n }}</p>', webhookId));
    const messages = m.webhookQueue.messages();
    expect(messages.map((q) => [q.body.account_id, q.body.webhook_id])).toEqual([[ada.accountId, webhookId]]);
    const delivery = await m.deliveries.get(
      ada.accountId,
      webhookId,
      messages[0]?.body.delivery_id as string,
    );
    expect(delivery).toMatchObject({ event_type: 'job.completed', status: 'pending', attempts: [] });
    const payload = JSON.parse(delivery?.payload ?? '{}');
    expect(payload).toMatchObject({
      type: 'job.completed',
      timestamp: m.clock.now().toISOString(),
      data: { id: jobId, status: 'completed', page_count: 1, webhook_id: webhookId },
    });
    // The payload's link is the one a GET of the job gives: it downloads the PDF.
    const link = await fetch(payload.data.download_url);
    expect(link.status).toBe(200);
    expect(
      Buffer.from(await link.arrayBuffer())
        .subarray(0, 5)
        .toString('latin1'),
    ).toBe('%PDF-');
  });

  it('tells job.failed with the error, and tells it once when the render queue delivers a message twice', async () => {
    m = memoryServices();
    const ada = caller();
    const webhookId = await endpoint(ada, ['job.completed', 'job.failed']);
    const failedId = await renderSync(ada, render('<p>{{ 1 / 0 }}</p>', webhookId));
    const accepted = await m.services
      .get(asyncRenders)
      .create(ada, render('<p>later</p>', webhookId, 'async'));
    const [message] = m.renderQueue.drain();
    const worker = m.services.get(renderWorker);
    await worker.handle(message as RenderMessage);
    await worker.handle(message as RenderMessage);
    expect(await m.events()).toEqual([
      {
        type: 'job.failed',
        data: expect.objectContaining({
          id: failedId,
          status: 'failed',
          error: expect.objectContaining({ code: 'INVALID_HTML_TEMPLATE' }),
        }),
      },
      {
        type: 'job.completed',
        data: expect.objectContaining({ id: accepted.job.job.id, status: 'completed' }),
      },
    ]);
  });

  it('tells nobody of a job that names no endpoint, or whose endpoint does not subscribe to its event', async () => {
    m = memoryServices();
    const ada = caller();
    const completedOnly = await endpoint(ada, ['job.completed']);
    await renderSync(ada, render('<p>no endpoint</p>', null));
    await renderSync(ada, render('<p>{{ 1 / 0 }}</p>', completedOnly));
    expect(m.webhookQueue.messages()).toEqual([]);
    expect(await m.deliveries.list(ada.accountId, completedOnly, { limit: 10, offset: 0 })).toEqual([]);
    expect(m.faults).toEqual([]);
  });

  it('queues again what it recorded after a queue fault (injected), and reports the fault; the render is not failed by it', async () => {
    m = memoryServices();
    const ada = caller();
    const webhookId = await endpoint(ada, ['job.completed']);
    vi.spyOn(m.webhookQueue, 'send').mockRejectedValueOnce(new Error('the queue is unreachable'));
    const jobId = await renderSync(ada, render('<p>x</p>', webhookId));
    expect((await m.jobs.get(ada.accountId, jobId))?.status).toBe('completed');
    expect(m.webhookQueue.messages()).toHaveLength(1);
    expect(m.faults.map((f) => f.message)).toEqual([`sending job.completed to webhook ${webhookId} failed`]);
  });
});
