/**
 * The webhook use cases (domain/webhooks/webhook-management.ts, webhook-sender.ts) as the
 * composition root builds them (functions/services.ts: webhookManagement, webhookSender, the
 * sweeper's overdue deliveries), on the memory parts (test/helpers/memory-services.ts: the memory
 * endpoint and delivery stores and the memory webhook queue, each passing its port's contract in
 * test/contract), the real secret box and webhook client, a receiver on loopback, and a test
 * clock the test moves. The test plays the queue's consumer: it drains what is due and hands it
 * to the sender.
 */
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../../functions/domain/common/errors.js';
import type { Principal } from '../../../functions/domain/common/principal.js';
import { MAX_WEBHOOK_ENDPOINTS } from '../../../functions/domain/webhooks/webhook-management.js';
import type { AttemptOutcome } from '../../../functions/domain/webhooks/webhook-sender.js';
import type { WebhookMessage } from '../../../functions/domain/webhooks/webhooks.js';
import { createServices, sweeper, webhookManagement, webhookSender } from '../../../functions/services.js';
import { webhookPayloads } from '../../../functions/webhook-payloads.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';
import { useWebhookReceiver } from '../../helpers/webhook-receiver.js';

const receiver = useWebhookReceiver();
const ADA: Principal = caller();
/** Webhook hosts resolve to a public address (no DNS here); the receiver's host:port is allowed. */
const lookup = async () => ['93.184.216.34'];

let m: MemoryServices;
afterEach(async () => {
  await m?.close();
});

const setup = (start = '2026-11-28T10:00:00.000Z') => {
  m = memoryServices({
    at: start,
    settings: {
      webhookFirstRetrySeconds: 10,
      webhookRetryWindowSeconds: 30,
      webhookTimeoutMs: 2000,
      webhookOverdueSeconds: 60,
    },
    webhookAllowHosts: [receiver.hostPort],
    webhookLookup: lookup,
  });
  const { clock, endpoints, deliveries, webhookQueue: queue } = m;
  const management = m.services.get(webhookManagement);
  const sender = m.services.get(webhookSender);
  /** Hands every message due now to the sender; the outcomes. */
  const consume = async (): Promise<AttemptOutcome[]> => {
    const outcomes: AttemptOutcome[] = [];
    for (const message of queue.drain()) outcomes.push(await sender.handle(message));
    return outcomes;
  };
  return { clock, endpoints, deliveries, queue, management, sender, consume };
};

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (e: unknown) => (e instanceof ServiceError ? e.code : String(e)),
  );

describe('webhook endpoints', () => {
  it('shows the signing secret once; lists, reads and deletes the account’s own endpoints', async () => {
    const { management } = setup();
    const created = await management.create(ADA, {
      url: receiver.url('/ok/a'),
      description: 'ci',
      events: null,
    });
    expect(created.secret).toMatch(/^whsec_/);
    expect(created.events).toEqual([
      'job.completed',
      'job.failed',
      'batch.completed',
      'job.cancelled',
      'job.delivered',
      'job.delivery_failed',
    ]);
    const listed = await management.list(ADA);
    expect(listed).toEqual([
      {
        id: created.id,
        url: created.url,
        description: 'ci',
        events: created.events,
        created_at: '2026-11-28T10:00:00.000Z',
      },
    ]);
    expect(JSON.stringify(listed)).not.toContain(created.secret.slice(6));
    // The secret is stored sealed, never in clear.
    const stored = await m.endpoints.get(ADA.accountId, created.id);
    expect(stored?.sealed_secret).toBeTruthy();
    expect(JSON.stringify(stored)).not.toContain(created.secret.slice(6));
    const other: Principal = { ...ADA, accountId: 'acct-other' };
    expect(await codeOf(management.get(other, created.id))).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
    await management.delete(ADA, created.id);
    expect(await codeOf(management.get(ADA, created.id))).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
    expect(await codeOf(management.delete(ADA, created.id))).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
  });

  it('refuses a private address and an account over its limit of endpoints', async () => {
    const { management } = setup();
    expect(
      await codeOf(management.create(ADA, { url: 'https://10.0.0.7/hook', description: null, events: null })),
    ).toBe('WEBHOOK_URL_NOT_ALLOWED');
    for (let i = 0; i < MAX_WEBHOOK_ENDPOINTS; i++) {
      await management.create(ADA, { url: receiver.url(`/ok/b${i}`), description: null, events: null });
    }
    expect(
      await codeOf(management.create(ADA, { url: receiver.url('/ok/c'), description: null, events: null })),
    ).toBe('WEBHOOK_LIMIT_REACHED');
    expect(await management.list(ADA)).toHaveLength(MAX_WEBHOOK_ENDPOINTS);
  });
});

describe('webhook deliveries', () => {
  it('sends a test event signed with the endpoint’s secret, and records the attempt once', async () => {
    // Now: a receiver refuses a signature timestamp far from its own time.
    const { management, consume, queue } = setup(new Date().toISOString());
    const endpoint = await management.create(ADA, {
      url: receiver.url('/ok/signed'),
      description: null,
      events: null,
    });
    const delivery = await management.test(ADA, endpoint.id);
    expect(delivery).toMatchObject({ status: 'pending', event_type: 'webhook.test', attempts: [] });
    const [message] = queue.messages();
    expect(message).toMatchObject({ body: { delivery_id: delivery.id, attempt: 1 }, groupId: ADA.accountId });
    expect(await consume()).toEqual(['succeeded']);
    const [request] = await receiver.waitFor('/ok/signed', 1);
    const payload = new Webhook(endpoint.secret).verify(
      request?.body ?? '',
      request?.headers as Record<string, string>,
    );
    expect(payload).toMatchObject({ type: 'webhook.test', data: { webhook_id: endpoint.id } });
    expect(request?.headers['webhook-id']).toBe(delivery.id);
    // The same message again (at least once): no second attempt.
    await queue.send(message?.body as WebhookMessage);
    expect(await consume()).toEqual(['duplicate']);
    const [shown] = await management.deliveries(ADA, endpoint.id, { limit: 10, offset: 0 });
    expect(shown).toMatchObject({ status: 'succeeded', next_attempt_at: null });
    expect(shown?.attempts).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'succeeded', response_status: 204, error: null }),
    ]);
  });

  it('retries a failing receiver with backoff while the window is open, then fails; a redelivery opens a new window', async () => {
    const { management, consume, queue, clock } = setup();
    const endpoint = await management.create(ADA, {
      url: receiver.url('/down/retries'),
      description: null,
      events: null,
    });
    receiver.setDown(true);
    try {
      const { id } = await management.test(ADA, endpoint.id);
      const outcomes: AttemptOutcome[] = [];
      const delays: number[] = [];
      for (let i = 0; i < 5 && queue.messages().length > 0; i++) {
        const [next] = queue.messages();
        delays.push(((next?.visibleAt ?? 0) - clock.now().getTime()) / 1000);
        clock.set(new Date(next?.visibleAt ?? 0).toISOString());
        outcomes.push(...(await consume()));
      }
      // Due at 0, 10 and 30 s into a 30 s window: three attempts.
      expect(outcomes).toEqual(['retrying', 'retrying', 'failed']);
      expect(delays).toEqual([0, 10, 20]);
      const [failed] = await management.deliveries(ADA, endpoint.id, { limit: 10, offset: 0 });
      expect(failed).toMatchObject({ id, status: 'failed' });
      expect(failed?.attempts.map((a) => [a.attempt, a.response_status, a.error])).toEqual([
        [1, 503, 'HTTP 503: the receiver did not answer 2xx'],
        [2, 503, 'HTTP 503: the receiver did not answer 2xx'],
        [3, 503, 'HTTP 503: the receiver did not answer 2xx'],
      ]);
      receiver.setDown(false);
      clock.advance(3_600_000);
      expect(await management.redeliver(ADA, endpoint.id, id)).toMatchObject({ status: 'pending' });
      expect(await consume()).toEqual(['succeeded']);
      const [again] = await management.deliveries(ADA, endpoint.id, { limit: 10, offset: 0 });
      expect(again?.attempts.map((a) => a.outcome)).toEqual(['failed', 'failed', 'failed', 'succeeded']);
    } finally {
      receiver.setDown(false);
    }
  });

  it('fails a pending delivery at its next attempt once its endpoint is deleted', async () => {
    const { management, consume, deliveries } = setup();
    const endpoint = await management.create(ADA, {
      url: receiver.url('/ok/deleted'),
      description: null,
      events: null,
    });
    const { id } = await management.test(ADA, endpoint.id);
    await management.delete(ADA, endpoint.id);
    expect(await consume()).toEqual(['failed']);
    expect((await deliveries.get(ADA.accountId, endpoint.id, id))?.attempts).toEqual([
      expect.objectContaining({
        outcome: 'failed',
        response_status: null,
        error: 'the endpoint was deleted',
      }),
    ]);
  });

  it('queues again a delivery whose message never came, once it is overdue, and only once per pass of sweepers', async () => {
    const { management, consume, queue, clock } = setup();
    const endpoint = await management.create(ADA, {
      url: receiver.url('/ok/overdue'),
      description: null,
      events: null,
    });
    await management.test(ADA, endpoint.id);
    queue.drain(); // the message is lost
    // Two sweepers, as two invocations of the sweeper's function on the same parts would be.
    const sweepers = [
      m.services.get(sweeper),
      createServices(m.services.config, m.services.parts, webhookPayloads).get(sweeper),
    ];
    expect((await sweepers[0]?.sweep())?.redelivered).toBe(0); // not overdue yet
    clock.advance(61_000);
    const passes = await Promise.all(sweepers.map((s) => s.sweep()));
    expect(passes.map((p) => p.redelivered)).toEqual(expect.arrayContaining([0, 1]));
    expect(queue.messages()).toHaveLength(1);
    expect(await consume()).toEqual(['succeeded']);
    expect(m.faults).toEqual([]);
  });
});

describe('webhook delivery isolated per endpoint (issue 38)', () => {
  it('a silent endpoint holds at most its cap of attempts; one past it is deferred, not lost; another account’s message completes meanwhile', async () => {
    const { management, sender, queue, deliveries, clock } = setup();
    const BOB: Principal = { ...ADA, accountId: 'acct-bob' };
    const silent = await management.create(ADA, {
      url: receiver.url('/slow/cap'),
      description: null,
      events: null,
    });
    const healthy = await management.create(BOB, {
      url: receiver.url('/ok/beside'),
      description: null,
      events: null,
    });
    const tests = [];
    for (let i = 0; i < 3; i++) tests.push(await management.test(ADA, silent.id));
    const adas = queue.drain();
    await management.test(BOB, healthy.id);
    const [bobs] = queue.drain();
    expect(adas).toHaveLength(3);

    // Senders take Ada's three messages at once, then Bob's.
    const ended: string[] = [];
    const handled = adas.map((m, i) =>
      sender.handle(m).then((outcome) => {
        ended.push(`ada ${i}: ${outcome}`);
        return outcome;
      }),
    );
    // Two are in flight to the silent endpoint: the third is refused a slot at once, queued again.
    expect(await handled[2]).toBe('deferred');
    expect(await sender.handle(bobs as WebhookMessage)).toBe('succeeded');
    // Bob's delivery completed while Ada's two attempts still wait on the silent receiver.
    expect(ended).toEqual(['ada 2: deferred']);
    expect(receiver.received.filter((r) => r.path === '/ok/beside')).toHaveLength(1);
    expect(await Promise.all(handled.slice(0, 2))).toEqual(['retrying', 'retrying']);

    // The deferred attempt was not made (nothing recorded) and waits in the queue for a slot.
    const thirdId = tests[2]?.id as string;
    expect((await deliveries.get(ADA.accountId, silent.id, thirdId))?.attempts).toEqual([]);
    clock.advance(2000);
    const again = queue.drain().filter((m) => m.delivery_id === thirdId);
    expect(again.map((m) => m.attempt)).toEqual([1]);
    expect(await sender.handle(again[0] as WebhookMessage)).toBe('retrying');
    expect((await deliveries.get(ADA.accountId, silent.id, thirdId))?.attempts.map((t) => t.attempt)).toEqual(
      [1],
    );
  });

  it('an account with many silent endpoints holds at most its cap of attempts across them; another account still delivers', async () => {
    const { management, sender, queue, deliveries, clock } = setup();
    const BOB: Principal = { ...ADA, accountId: 'acct-bob' };
    // Three silent endpoints, two attempts each: six would fit their caps, the account's is four.
    const silent = [];
    for (let i = 0; i < 3; i++)
      silent.push(
        await management.create(ADA, {
          url: receiver.url(`/slow/many-${i}`),
          description: null,
          events: null,
        }),
      );
    for (const endpoint of silent) for (let i = 0; i < 2; i++) await management.test(ADA, endpoint.id);
    const adas = queue.drain();
    expect(adas).toHaveLength(6);
    const healthy = await management.create(BOB, {
      url: receiver.url('/ok/beside-many'),
      description: null,
      events: null,
    });
    await management.test(BOB, healthy.id);
    const [bobs] = queue.drain();

    const handled = adas.map((m) => sender.handle(m));
    const settled = await Promise.all(
      handled.map((p) => Promise.race([p, new Promise((r) => setTimeout(() => r('in flight'), 300))])),
    );
    // Four are in flight (the account's cap), the last two deferred at once, not made.
    expect(settled.filter((o) => o === 'deferred')).toHaveLength(2);
    expect(settled.filter((o) => o === 'in flight')).toHaveLength(4);
    expect(await sender.handle(bobs as WebhookMessage)).toBe('succeeded');
    const deferred = adas.filter((_, i) => settled[i] === 'deferred');
    for (const m of deferred)
      expect((await deliveries.get(ADA.accountId, m.webhook_id, m.delivery_id))?.attempts).toEqual([]);
    // They wait in the queue for a slot: due again once the POST's timeout has passed.
    clock.advance(2000);
    const again = queue.drain().filter((m) => deferred.some((d) => d.delivery_id === m.delivery_id));
    expect(again.map((m) => m.attempt)).toEqual([1, 1]);
    expect(await Promise.all(handled.filter((_, i) => settled[i] === 'in flight'))).toEqual([
      'retrying',
      'retrying',
      'retrying',
      'retrying',
    ]);
  });
});
