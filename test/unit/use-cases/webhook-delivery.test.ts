/**
 * Events as an endpoint receives them, end to end on the memory parts, every use case built by
 * the composition root (functions/services.ts; test/helpers/memory-services.ts): an endpoint made
 * through the API's use case, an async render and a batch rendered by the render queue's consumer,
 * their events taken from the webhook queue by the sender and posted, signed with the endpoint's
 * secret, to a receiver on loopback. Each end is received once.
 */
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../../functions/domain/common/principal.js';
import type { RenderCommand } from '../../../functions/domain/renders/render-command.js';
import {
  asyncRenders,
  batches,
  renderWorker,
  webhookManagement,
  webhookSender,
} from '../../../functions/services.js';
import { parseTemplateData, readTemplateDataText } from '../../../functions/templating/index.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';
import { useWebhookReceiver } from '../../helpers/webhook-receiver.js';

const receiver = useWebhookReceiver();

let m: MemoryServices;
afterEach(async () => {
  await m?.close();
});

const setup = () =>
  memoryServices({
    // A receiver refuses a signature whose timestamp is far from its own time.
    at: new Date().toISOString(),
    webhookAllowHosts: [receiver.hostPort],
    webhookLookup: async () => ['93.184.216.34'],
  });

/** The render queue's consumer, then the webhook sender, until both queues are empty. */
const deliver = async (): Promise<string[]> => {
  const worker = m.services.get(renderWorker);
  const sender = m.services.get(webhookSender);
  const outcomes: string[] = [];
  for (const message of m.renderQueue.drain()) await worker.handle(message);
  for (const message of m.webhookQueue.drain()) outcomes.push(await sender.handle(message));
  return outcomes;
};

const received = async (path: string, secret: string) => {
  const [request, ...more] = await receiver.waitFor(path, 1);
  expect(more).toEqual([]);
  return new Webhook(secret).verify(request?.body ?? '', request?.headers as Record<string, string>) as {
    type: string;
    data: Record<string, unknown>;
  };
};

describe('an endpoint', () => {
  it('receives an async render’s job.completed once, signed with its secret, with the PDF’s link', async () => {
    m = setup();
    const ada: Principal = caller();
    const endpoint = await m.services
      .get(webhookManagement)
      .create(ada, { url: receiver.url('/ok/async-job'), description: null, events: ['job.completed'] });
    const command: RenderCommand = {
      source: { kind: 'inline', html: '<p>Invoice {{ n }}</p>', headerHtml: null, footerHtml: null },
      variables: readTemplateDataText('{"n": 7}'),
      options: {},
      idempotency: null,
      mode: 'async',
      webhookId: endpoint.id,
    };
    const { job } = await m.services.get(asyncRenders).create(ada, command);
    expect(await deliver()).toEqual(['succeeded']);
    const event = await received('/ok/async-job', endpoint.secret);
    expect(event).toMatchObject({ type: 'job.completed', data: { id: job.job.id, status: 'completed' } });
    const download = await fetch(event.data.download_url as string);
    expect(download.status).toBe(200);
    expect((await download.arrayBuffer()).byteLength).toBe(event.data.file_size_bytes);
    // Nothing more to send.
    expect(await deliver()).toEqual([]);
    expect(m.faults).toEqual([]);
  });

  it('receives a batch’s batch.completed once, with its counts, and none of its jobs’ own events when it subscribed to batch.completed only', async () => {
    m = setup();
    const ada: Principal = caller();
    const endpoint = await m.services
      .get(webhookManagement)
      .create(ada, { url: receiver.url('/ok/batch'), description: null, events: ['batch.completed'] });
    const { batch } = await m.services.get(batches).create(ada, {
      source: { kind: 'inline', html: '<p>{{ 10 / d }}</p>', headerHtml: null, footerHtml: null },
      options: {},
      items: ['{"d": 1}', '{"d": 0}', '{"d": 2}'].map((v) => ({ variables: parseTemplateData(v) })),
      webhookId: endpoint.id,
    });
    expect(await deliver()).toEqual(['succeeded']);
    const event = await received('/ok/batch', endpoint.secret);
    expect(event).toMatchObject({
      type: 'batch.completed',
      data: {
        id: batch.id,
        status: 'completed',
        counts: { pending: 0, rendering: 0, completed: 2, failed: 1 },
      },
    });
    expect(await m.ledger(ada.accountId)).toMatchObject({ open: 0, completed: 2, failed: 1, rendersUsed: 2 });
  });

  it('receives each batch item’s job.completed or job.failed, with its reference and item_index, when it subscribed to them (issue 37)', async () => {
    m = setup();
    const ada: Principal = caller();
    const endpoint = await m.services
      .get(webhookManagement)
      .create(ada, { url: receiver.url('/ok/items'), description: null, events: null });
    await m.services.get(batches).create(ada, {
      source: { kind: 'inline', html: '<p>{{ 10 / d }}</p>', headerHtml: null, footerHtml: null },
      options: {},
      items: ['{"d": 1}', '{"d": 0}'].map((v, i) => ({
        variables: parseTemplateData(v),
        reference: `invoice-${i}`,
      })),
      webhookId: endpoint.id,
    });
    expect(await deliver()).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const requests = await receiver.waitFor('/ok/items', 3);
    const events = requests.map(
      (r) =>
        new Webhook(endpoint.secret).verify(r.body ?? '', r.headers as Record<string, string>) as {
          type: string;
          data: Record<string, unknown>;
        },
    );
    const byType = (type: string) => events.filter((e) => e.type === type).map((e) => e.data);
    expect(byType('job.completed')).toEqual([
      expect.objectContaining({ reference: 'invoice-0', item_index: 0, status: 'completed' }),
    ]);
    expect(byType('job.failed')).toEqual([
      expect.objectContaining({ reference: 'invoice-1', item_index: 1, status: 'failed' }),
    ]);
    expect(byType('batch.completed')).toHaveLength(1);
  });
});
