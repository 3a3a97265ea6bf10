/**
 * Job events to webhooks (domain/webhook-events.ts) on the memory endpoint and delivery stores and
 * the memory queue (each passing its port's contract, test/contract): a job's end is one event,
 * recorded once and queued once however often it is told.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryQueue } from '../../../functions/adapters/memory/queue.js';
import {
  createMemoryWebhookDeliveryStore,
  createMemoryWebhookStore,
} from '../../../functions/adapters/memory/webhooks.js';
import type { MessageQueue } from '../../../functions/domain/common/ports.js';
import type { Job } from '../../../functions/domain/jobs/jobs.js';
import { createWebhookJobEvents } from '../../../functions/domain/webhooks/webhook-events.js';
import { createWebhookEmitter } from '../../../functions/domain/webhooks/webhook-management.js';
import type { StoredWebhookEndpoint, WebhookMessage } from '../../../functions/domain/webhooks/webhooks.js';
import { testClock } from '../../helpers/dynalite.js';

const ACCOUNT = 'acct-events';

const endpoint = (id: string, events: StoredWebhookEndpoint['events']): StoredWebhookEndpoint => ({
  id,
  url: 'https://example.com/hook',
  description: null,
  events,
  created_at: '2026-11-28T10:00:00.000Z',
  account_id: ACCOUNT,
  sealed_secret: 'sealed',
});

const job = (over: Partial<Job>): Job => ({
  id: 'job_01JBQ5Y8S1W8M3ZT6YDV1KQ0XE',
  account_id: ACCOUNT,
  status: 'completed',
  template_id: null,
  template_version: null,
  object_key: 'pdf/x.pdf',
  file_size_bytes: 10,
  page_count: 1,
  render_duration_ms: 5,
  error: null,
  created_at: '2026-11-28T10:00:00.000Z',
  updated_at: '2026-11-28T10:00:01.000Z',
  completed_at: '2026-11-28T10:00:01.000Z',
  webhook_id: 'wh_01JBQ5Y8S1W8M3ZT6YDV1KQ0XE',
  ...over,
});

const setup = async (
  queueOf: (q: MessageQueue<WebhookMessage>) => MessageQueue<WebhookMessage> = (q) => q,
) => {
  const clock = testClock('2026-11-28T10:00:02.000Z');
  const endpoints = createMemoryWebhookStore();
  const deliveries = createMemoryWebhookDeliveryStore(clock);
  const queue = createMemoryQueue<WebhookMessage>({ name: 'webhooks', clock });
  await endpoints.create(endpoint('wh_01JBQ5Y8S1W8M3ZT6YDV1KQ0XE', ['job.completed', 'job.failed']), 10);
  await endpoints.create(endpoint('wh_01JBQ5Y8S1W8M3ZT6YDV1KQ0XF', ['job.completed']), 10);
  const faults: string[] = [];
  const events = createWebhookJobEvents({
    endpoints,
    emitter: createWebhookEmitter({ deliveries, queue: queueOf(queue), clock }),
    describe: async (j) => ({ id: j.id, status: j.status }),
    onFault: (message) => faults.push(message),
  });
  return { events, deliveries, queue, faults };
};

describe('job events to webhooks', () => {
  it("records and queues a job's end once, however often it is told", async () => {
    const { events, deliveries, queue } = await setup();
    await events.ended(job({}));
    await events.ended(job({}));
    const messages = queue.drain();
    expect(messages).toHaveLength(1);
    const delivery = await deliveries.get(
      ACCOUNT,
      'wh_01JBQ5Y8S1W8M3ZT6YDV1KQ0XE',
      messages[0]?.delivery_id as string,
    );
    expect(delivery).toMatchObject({ event_type: 'job.completed', status: 'pending', attempts: [] });
    expect(JSON.parse(delivery?.payload ?? '{}')).toEqual({
      type: 'job.completed',
      timestamp: '2026-11-28T10:00:02.000Z',
      data: { id: 'job_01JBQ5Y8S1W8M3ZT6YDV1KQ0XE', status: 'completed' },
    });
  });

  it('tells nobody of a job that names no endpoint, is still open, or whose endpoint does not subscribe', async () => {
    const { events, queue } = await setup();
    await events.ended(job({ webhook_id: null }));
    await events.ended(job({ status: 'rendering' }));
    await events.ended(job({ status: 'failed', webhook_id: 'wh_01JBQ5Y8S1W8M3ZT6YDV1KQ0XF' }));
    await events.ended(job({ webhook_id: 'wh_01JBQ5Y8S1W8M3ZT6YDV1KQ0XZ' })); // deleted
    expect(queue.messages()).toEqual([]);
  });

  it('queues again what it recorded after a queue fault (injected), and reports the fault', async () => {
    let failures = 1;
    const { events, queue, faults } = await setup((q) => ({
      send: async (body, options) => {
        if (failures-- > 0) throw new Error('the queue is unreachable');
        return q.send(body, options);
      },
    }));
    await events.ended(job({ status: 'failed' }));
    expect(queue.drain()).toHaveLength(1);
    expect(faults).toEqual(['sending job.failed to webhook wh_01JBQ5Y8S1W8M3ZT6YDV1KQ0XE failed']);
  });
});
