/**
 * Webhooks over HTTP against the local stack, with a receiver on loopback (allowed by the stack's
 * test allowance, WEBHOOK_EGRESS_ALLOW_HOSTS, only): endpoints (the secret shown once, never
 * again, never stored in clear nor logged), test events signed per Standard Webhooks (verified
 * with the reference package), retries after 500s and timeouts with backoff that stop at the
 * window's bound, every attempt readable, redelivery, no redirect followed, and private addresses
 * refused at creation and at delivery (a name that resolves to loopback by then included).
 *
 * The retry schedule is short here: first retry after 1 s, a window of 3 s (attempts at 0, 1 and
 * 3 s), and a 500 ms timeout.
 */
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createWebhookDeliveryStore,
  createWebhookStore,
} from '../../functions/adapters/dynamodb/webhooks.js';
import { createMemoryQueue } from '../../functions/adapters/memory/queue.js';
import { systemClock } from '../../functions/core/runtime.js';
import { createWebhookJobEvents } from '../../functions/domain/webhooks/webhook-events.js';
import { createWebhookEmitter } from '../../functions/domain/webhooks/webhook-management.js';
import type { WebhookMessage } from '../../functions/domain/webhooks/webhooks.js';
import { errorSchema } from '../../functions/openapi.js';
import { createHandler } from '../../functions/webhook-sender/index.js';
import { type ApiResponse, dynamoDbClient, type Json, useLocalStack } from '../helpers/local-stack.js';
import { inOneRateWindow } from '../helpers/rate-window.js';
import { describeBound, type PaceBound, paceBound } from '../helpers/timing.js';
import { useWebhookReceiver } from '../helpers/webhook-receiver.js';

const env: Record<string, string> = {
  WEBHOOK_FIRST_RETRY_SECONDS: '1',
  WEBHOOK_RETRY_WINDOW_SECONDS: '3',
  WEBHOOK_TIMEOUT_MS: '500',
};
const receiver = useWebhookReceiver(env);

/** Names the tests resolve themselves: one public at creation and loopback after, one private. */
const local = useLocalStack({
  env,
  webhookHosts: {
    'rebind.example.com': [['93.184.216.34'], ['127.0.0.1']],
    'intranet.example.com': [['10.1.2.3']],
    'public.example.com': [['93.184.216.34']],
  },
});

const expectError = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, res.text).toBe(status);
  expect(res.json.error.code).toBe(code);
  expect(() => errorSchema.parse(res.json)).not.toThrow();
};

const createWebhook = (token: string, body: Record<string, unknown>) =>
  local.api('/v1/webhooks', { method: 'POST', token, body });

/** The delivery once it is no longer pending. */
const settled = async (
  token: string,
  webhookId: string,
  deliveryId: string,
  timeoutMs = 15_000,
): Promise<Json> => {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await local.api(`/v1/webhooks/${webhookId}/deliveries`, { token });
    expect(res.status, res.text).toBe(200);
    const delivery = res.json.find((d: Json) => d.id === deliveryId);
    if (delivery && delivery.status !== 'pending') return delivery;
    if (Date.now() > until)
      throw new Error(`delivery ${deliveryId} still pending: ${JSON.stringify(delivery)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe('webhook endpoints', () => {
  it('answers 201 with the secret shown this once: never listed, read, stored in clear or logged', async () => {
    const output = local.captureOutput();
    onTestFinished(() => output.stop());
    const token = await local.sessionToken();
    const res = await createWebhook(token, { url: receiver.url('/ok/created'), description: ' billing ' });
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.json).sort()).toEqual([
      'created_at',
      'description',
      'events',
      'id',
      'secret',
      'url',
    ]);
    const { id, secret } = res.json;
    expect(id).toMatch(/^wh_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(res.json.description).toBe('billing');
    expect(res.json.events).toEqual([
      'job.completed',
      'job.failed',
      'batch.completed',
      'job.cancelled',
      'job.delivered',
      'job.delivery_failed',
    ]);

    const listed = await local.api('/v1/webhooks', { token });
    expect(listed.json).toEqual([
      {
        id,
        url: receiver.url('/ok/created'),
        description: 'billing',
        events: res.json.events,
        created_at: res.json.created_at,
      },
    ]);
    const read = await local.api(`/v1/webhooks/${id}`, { token });
    expect(read.json).toEqual(listed.json[0]);
    const key = secret.slice('whsec_'.length);
    for (const text of [listed.text, read.text]) expect(text).not.toContain(key);

    const items = await DynamoDBDocumentClient.from(dynamoDbClient(local.stack)).send(
      new ScanCommand({ TableName: local.stack.tableName }),
    );
    expect(JSON.stringify(items.Items)).not.toContain(key);
    expect(JSON.stringify(items.Items)).not.toContain(Buffer.from(key, 'base64').toString('hex'));

    // Sending a signed event uses the secret: it is not logged then either.
    const test = await local.api(`/v1/webhooks/${id}/test`, { method: 'POST', token });
    await settled(token, id, test.json.id);
    expect(output.chunks.join('')).not.toContain(key);
  });

  it('refuses malformed bodies with 422 VALIDATION_ERROR', async () => {
    const token = await local.sessionToken();
    for (const body of [
      {},
      { url: 'not a url' },
      { url: 'ftp://example.com/hook' },
      { url: receiver.url('/ok/x'), events: [] },
      { url: receiver.url('/ok/x'), events: ['job.started'] },
      { url: receiver.url('/ok/x'), events: ['job.failed', 'job.failed'] },
      { url: receiver.url('/ok/x'), description: 'd'.repeat(201) },
      { url: receiver.url('/ok/x'), secret: 'whsec_mine' },
    ]) {
      expectError(await createWebhook(token, body), 422, 'VALIDATION_ERROR');
    }
  });

  it('refuses private, loopback, link-local and metadata addresses at creation with 422 WEBHOOK_URL_NOT_ALLOWED', async () => {
    const token = await local.sessionToken();
    const port = Number(receiver.hostPort.split(':')[1]);
    const notPublic = 'the host must resolve to public addresses only';
    for (const [url, issue] of [
      [`http://127.0.0.1:${port + 1}/hook`, 'the scheme must be https'], // loopback, not the allowance's port
      ['https://localhost/hook', notPublic],
      ['https://10.0.0.1/hook', notPublic],
      ['https://192.168.1.10/hook', notPublic],
      ['https://100.64.0.1/hook', notPublic],
      ['https://169.254.169.254/latest/meta-data/', notPublic],
      ['https://[::1]/hook', notPublic],
      ['https://[fd00::1]/hook', notPublic],
      ['https://[::ffff:127.0.0.1]/hook', notPublic],
      ['https://intranet.example.com/hook', notPublic], // a name that resolves to a private address
      ['https://no-such-name.invalid/hook', notPublic], // a name that does not resolve: the same words
      ['https://user:pass@public.example.com/hook', 'credentials in the URL are not accepted'],
      // Issue 38: plain http, and ports where internal services listen, on a public host.
      ['http://public.example.com/hook', 'the scheme must be https'],
      ['https://public.example.com:25/hook', 'the port must be'],
      ['https://public.example.com:22/hook', 'the port must be'],
      ['https://public.example.com:6379/hook', 'the port must be'],
    ] as const) {
      const res = await createWebhook(token, { url });
      expectError(res, 422, 'WEBHOOK_URL_NOT_ALLOWED');
      expect(res.json.error.details[0].field).toBe('url');
      expect(res.json.error.details[0].issue, url).toContain(issue);
    }
    expect((await local.api('/v1/webhooks', { token })).json).toEqual([]);
    for (const url of ['https://public.example.com/hook', 'https://public.example.com:8443/hook']) {
      expect((await createWebhook(token, { url })).status, url).toBe(201);
    }
  });

  it('deletes an endpoint (404 WEBHOOK_ENDPOINT_NOT_FOUND after), and keeps accounts apart', async () => {
    const owner = await local.sessionToken();
    const { id } = (await createWebhook(owner, { url: receiver.url('/ok/deleted') })).json;
    const stranger = await local.sessionToken();
    for (const [method, path] of [
      ['GET', `/v1/webhooks/${id}`],
      ['DELETE', `/v1/webhooks/${id}`],
      ['POST', `/v1/webhooks/${id}/test`],
      ['GET', `/v1/webhooks/${id}/deliveries`],
      ['GET', '/v1/webhooks/wh_01ARZ3NDEKTSV4RRFFQ69G5FAV'],
      ['GET', '/v1/webhooks/nope'],
    ] as const) {
      expectError(await local.api(path, { method, token: stranger }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
    }
    const deleted = await local.api(`/v1/webhooks/${id}`, { method: 'DELETE', token: owner });
    expect(deleted.status).toBe(200);
    expect(deleted.json.id).toBe(id);
    expect(deleted.json).not.toHaveProperty('secret');
    expectError(await local.api(`/v1/webhooks/${id}`, { token: owner }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
    expect((await local.api('/v1/webhooks', { token: owner })).json).toEqual([]);
  });

  it('allows 10 endpoints per account: 409 WEBHOOK_LIMIT_REACHED past them, a slot back after a delete', async () => {
    const token = await local.sessionToken();
    const answers = await Promise.all(
      Array.from({ length: 14 }, (_, i) => createWebhook(token, { url: receiver.url(`/ok/limit-${i}`) })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(10);
    for (const refused of answers.filter((r) => r.status !== 201))
      expectError(refused, 409, 'WEBHOOK_LIMIT_REACHED');
    const created = answers.find((r) => r.status === 201)?.json;
    await local.api(`/v1/webhooks/${created.id}`, { method: 'DELETE', token });
    expect((await createWebhook(token, { url: receiver.url('/ok/limit-again') })).status).toBe(201);
  });

  it('answers 401 without a session and 403 SESSION_REQUIRED for an API key', async () => {
    expectError(await local.api('/v1/webhooks'), 401, 'UNAUTHENTICATED');
    const token = await local.sessionToken();
    const key = (await local.api('/v1/api-keys', { method: 'POST', token, body: { name: 'hooks' } })).json
      .key;
    expectError(await local.api('/v1/webhooks', { token: key }), 403, 'SESSION_REQUIRED');
  });
});

// The deliveries wait on the retry schedule (1 s, then 2 s, to a 3 s window) and on the bounds
// after it: run side by side, each with its own account, endpoint and receiver path, they wait
// together instead of one after another.
describe.concurrent('delivery', () => {
  it('sends the test event signed per Standard Webhooks, verified with the reference package', async () => {
    const token = await local.sessionToken();
    const { id, secret } = (await createWebhook(token, { url: receiver.url('/ok/test-event') })).json;
    const test = await local.api(`/v1/webhooks/${id}/test`, { method: 'POST', token });
    expect(test.status, test.text).toBe(201);
    expect(test.json).toMatchObject({
      webhook_id: id,
      event_type: 'webhook.test',
      status: 'pending',
      attempts: [],
    });
    expect(test.json.id).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/);

    const [request] = await receiver.waitFor('/ok/test-event', 1);
    const headers = request?.headers as Record<string, string>;
    expect(headers['webhook-id']).toBe(test.json.id);
    expect(headers['content-type']).toBe('application/json');
    const payload = new Webhook(secret).verify(request?.body as string, headers) as Json;
    expect(payload).toEqual({
      type: 'webhook.test',
      timestamp: expect.any(String),
      data: { webhook_id: id, message: expect.any(String) },
    });
    // Another secret does not verify it.
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(request?.body as string, headers),
    ).toThrow();

    const delivery = await settled(token, id, test.json.id);
    expect(delivery).toMatchObject({ status: 'succeeded', next_attempt_at: null });
    // The delivery shows the event it sent: the very payload the receiver verified.
    expect(delivery.payload).toEqual(payload);
    expect(delivery.attempts).toEqual([
      {
        attempt: 1,
        attempted_at: expect.any(String),
        outcome: 'succeeded',
        response_status: 204,
        duration_ms: expect.any(Number),
        error: null,
      },
    ]);
  });

  it('retries after 500s with growing waits, and stops at the window’s bound with every attempt recorded', async () => {
    const token = await local.sessionToken();
    const { id } = (await createWebhook(token, { url: receiver.url('/fail/retries') })).json;
    const test = await local.api(`/v1/webhooks/${id}/test`, { method: 'POST', token });
    const delivery = await settled(token, id, test.json.id);
    expect(delivery.status).toBe('failed');
    expect(delivery.next_attempt_at).toBeNull();
    expect(delivery.attempts.map((a: Json) => [a.attempt, a.outcome, a.response_status])).toEqual([
      [1, 'failed', 500],
      [2, 'failed', 500],
      [3, 'failed', 500],
    ]);
    for (const a of delivery.attempts) expect(a.error).toContain('500');
    const requests = receiver.received.filter((r) => r.path === '/fail/retries');
    expect(requests).toHaveLength(3);
    // One message id on every attempt; a fresh timestamp and signature on each.
    expect(new Set(requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([test.json.id]));
    // Each retry is due at the window's start + 1 s × (2^n - 1): 1 s, then 3 s (waits of 1 s, then
    // 2 s, when each attempt is on time). Measured from the window's start, as the schedule is: a
    // retry that ran late on a loaded machine shortened the wait before the next (1.2 s seen).
    const windowStart = Date.parse(delivery.created_at);
    const offsets = requests.map((r) => r.at - windowStart);
    expect(offsets[1]).toBeGreaterThanOrEqual(990);
    expect(offsets[2]).toBeGreaterThanOrEqual(2990);
    // Nothing after the bound.
    await new Promise((r) => setTimeout(r, 2500));
    expect(receiver.received.filter((r) => r.path === '/fail/retries')).toHaveLength(3);
  });

  it('counts a receiver that does not answer in time as a failed attempt, and retries it', async () => {
    const token = await local.sessionToken();
    // The control: an attempt the receiver answers at once, as the sender measured it.
    const control = (await createWebhook(token, { url: receiver.url('/ok/control') })).json;
    const sent = await local.api(`/v1/webhooks/${control.id}/test`, { method: 'POST', token });
    const answered = await settled(token, control.id, sent.json.id);
    expect(answered.attempts).toMatchObject([{ outcome: 'succeeded' }]);
    const controlMs = answered.attempts[0].duration_ms as number;

    const { id } = (await createWebhook(token, { url: receiver.url('/slow/timeouts') })).json;
    const test = await local.api(`/v1/webhooks/${id}/test`, { method: 'POST', token });
    const delivery = await settled(token, id, test.json.id);
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts).toHaveLength(3);
    // Ended by the sender's timeout (500 ms): not before it, and not long after it.
    const bound: PaceBound = { expectedMs: 500, slackMs: 1_500, controlMs, factor: 50 };
    for (const a of delivery.attempts) {
      expect(a).toMatchObject({ outcome: 'failed', response_status: null, error: 'timed out after 500 ms' });
      expect(a.duration_ms).toBeGreaterThanOrEqual(450);
      expect(a.duration_ms, describeBound(a.duration_ms, bound)).toBeLessThan(paceBound(bound));
    }
  });

  it('does not follow redirects: a 302 is a failed attempt and its target is never requested', async () => {
    const token = await local.sessionToken();
    const { id } = (await createWebhook(token, { url: receiver.url('/redirect/hop') })).json;
    const test = await local.api(`/v1/webhooks/${id}/test`, { method: 'POST', token });
    const delivery = await settled(token, id, test.json.id);
    expect(delivery.attempts[0]).toMatchObject({ response_status: 302, outcome: 'failed' });
    expect(delivery.attempts[0].error).toContain('redirect');
    expect(receiver.received.filter((r) => r.path.startsWith('/redirected/'))).toEqual([]);
  });

  it('redelivers: the same message id and payload again, its new attempts after the old ones', async () => {
    const token = await local.sessionToken();
    const { id, secret } = (await createWebhook(token, { url: receiver.url('/ok/redeliver') })).json;
    const test = await local.api(`/v1/webhooks/${id}/test`, { method: 'POST', token });
    await settled(token, id, test.json.id);
    const again = await local.api(`/v1/webhooks/${id}/deliveries/${test.json.id}/redeliver`, {
      method: 'POST',
      token,
    });
    expect(again.status, again.text).toBe(200);
    expect(again.json).toMatchObject({ id: test.json.id, status: 'pending' });
    const requests = await receiver.waitFor('/ok/redeliver', 2);
    expect(requests.map((r) => r.headers['webhook-id'])).toEqual([test.json.id, test.json.id]);
    expect(requests[1]?.body).toBe(requests[0]?.body);
    new Webhook(secret).verify(requests[1]?.body as string, requests[1]?.headers as Record<string, string>);
    const delivery = await settled(token, id, test.json.id);
    expect(delivery.attempts.map((a: Json) => [a.attempt, a.response_status])).toEqual([
      [1, 204],
      [2, 204],
    ]);

    expectError(
      await local.api(`/v1/webhooks/${id}/deliveries/msg_01ARZ3NDEKTSV4RRFFQ69G5FAV/redeliver`, {
        method: 'POST',
        token,
      }),
      404,
      'WEBHOOK_DELIVERY_NOT_FOUND',
    );
  });

  it('refuses at delivery a name that resolves to loopback by then (DNS rebinding): nothing reaches it', async () => {
    const token = await local.sessionToken();
    const created = await createWebhook(token, { url: 'https://rebind.example.com:8443/ok/rebound' });
    expect(created.status, created.text).toBe(201);
    const test = await local.api(`/v1/webhooks/${created.json.id}/test`, { method: 'POST', token });
    const delivery = await settled(token, created.json.id, test.json.id);
    expect(delivery.status).toBe('failed');
    for (const a of delivery.attempts) {
      expect(a).toMatchObject({
        response_status: null,
        error: 'refused: the host must resolve to public addresses only',
      });
    }
    expect(receiver.received.filter((r) => r.path === '/ok/rebound')).toEqual([]);
  });

  // Every send of one attempt in one minute's window, or the attempt is tried again.
  it('limits test events and redeliveries: 5 a minute to an endpoint, 20 from an account (429 with Retry-After)', () =>
    inOneRateWindow(async () => {
      const token = await local.sessionToken();
      const endpoint = async (name: string) =>
        (await createWebhook(token, { url: receiver.url(`/ok/limit-${name}`) })).json.id as string;
      const first = await endpoint('first');
      const send = (id: string) => local.api(`/v1/webhooks/${id}/test`, { method: 'POST', token });
      const sent = [];
      for (let i = 0; i < 5; i++) sent.push(await send(first));
      for (const res of sent) expect(res.status, res.text).toBe(sent[0]?.status);
      expect(sent[0]?.status).toBeLessThan(300);
      const over = await send(first);
      expectError(over, 429, 'USAGE_LIMIT_EXCEEDED');
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      // A redelivery to that endpoint is a send too.
      const redeliver = await local.api(`/v1/webhooks/${first}/deliveries/${sent[0]?.json.id}/redeliver`, {
        method: 'POST',
        token,
      });
      expectError(redeliver, 429, 'USAGE_LIMIT_EXCEEDED');
      // The account's other endpoints have windows of their own, up to the account's 20.
      const others = await Promise.all(['a', 'b', 'c'].map(endpoint));
      const statuses: number[] = [];
      for (const id of others) for (let i = 0; i < 5; i++) statuses.push((await send(id)).status);
      expect(statuses.filter((status) => status >= 300)).toEqual([]);
      expectError(await send(await endpoint('d')), 429, 'USAGE_LIMIT_EXCEEDED');
      // Another account is not held back.
      const other = await local.sessionToken();
      const theirs = (await createWebhook(other, { url: receiver.url('/ok/limit-other') })).json.id;
      expect(
        (await local.api(`/v1/webhooks/${theirs}/test`, { method: 'POST', token: other })).status,
      ).toBeLessThan(300);
    }));

  it('fails the pending attempts of a deleted endpoint without sending', async () => {
    const token = await local.sessionToken();
    const { id } = (await createWebhook(token, { url: receiver.url('/fail/then-deleted') })).json;
    await local.api(`/v1/webhooks/${id}/test`, { method: 'POST', token });
    await receiver.waitFor('/fail/then-deleted', 1);
    await local.api(`/v1/webhooks/${id}`, { method: 'DELETE', token });
    await new Promise((r) => setTimeout(r, 4000));
    expect(receiver.received.filter((r) => r.path === '/fail/then-deleted')).toHaveLength(1);
  });
});

describe('job events', () => {
  /**
   * The JobEvents port as the pdf resource wires it (functions/pdf/index.ts), made here against the
   * stack's table with a queue and sender of the test's own: a render naming `webhook_id` comes
   * with async renders, so the job is rendered through the API and then told to the port.
   */
  it('sends job.completed and job.failed with the job as GET /v1/pdf/{id} shows it, signed', async () => {
    const sub = `acct-events-${Date.now()}`;
    const token = await local.sessionToken(sub);
    const { id: webhookId, secret } = (await createWebhook(token, { url: receiver.url('/ok/job-events') }))
      .json;
    const queue = createMemoryQueue<WebhookMessage>({ name: 'job-events-test' });
    queue.consumeWith(createHandler({ ...local.stack.handlerEnv, ...env }, { webhookQueue: queue }));
    const db = DynamoDBDocumentClient.from(dynamoDbClient(local.stack));
    const events = createWebhookJobEvents({
      endpoints: createWebhookStore(db, local.stack.tableName, () => {}),
      emitter: createWebhookEmitter({
        deliveries: createWebhookDeliveryStore(db, local.stack.tableName, systemClock),
        queue,
        clock: systemClock,
      }),
      describe: async (job) => (await local.api(`/v1/pdf/${job.id}`, { token })).json,
      onFault: (message, error) => {
        throw new Error(`${message}: ${String(error)}`);
      },
    });
    try {
      const completed = await local.api('/v1/pdf', { method: 'POST', token, body: { html: '<p>ok</p>' } });
      expect(completed.status, completed.text).toBe(201);
      const failed = await local.api('/v1/pdf', {
        method: 'POST',
        token,
        body: { html: '<p>{{ 1 / 0 }}</p>' },
      });
      expect(failed.status, failed.text).toBe(422);
      const failedJob = (await local.api(`/v1/pdf/${failed.json.error.job_id}`, { token })).json;
      expect(failedJob.status).toBe('failed');
      for (const job of [completed.json, failedJob]) {
        await events.ended({ ...job, account_id: sub, webhook_id: webhookId });
      }
      // A job naming no endpoint tells nobody.
      await events.ended({ ...completed.json, account_id: sub });

      const requests = await receiver.waitFor('/ok/job-events', 2);
      const payloads = requests.map(
        (r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Json,
      );
      const byType = Object.fromEntries(payloads.map((p) => [p.type, p.data]));
      expect(Object.keys(byType).sort()).toEqual(['job.completed', 'job.failed']);
      expect(byType['job.completed']).toMatchObject({
        id: completed.json.id,
        status: 'completed',
        page_count: 1,
        download_url: expect.stringContaining(completed.json.id),
      });
      expect(byType['job.failed']).toMatchObject({
        id: failedJob.id,
        status: 'failed',
        error: failedJob.error,
      });
      await new Promise((r) => setTimeout(r, 500));
      expect(receiver.received.filter((r) => r.path === '/ok/job-events')).toHaveLength(2);
    } finally {
      await queue.close();
    }
  });
});

describe('renders that name an endpoint', () => {
  const waitForJob = async (token: string, id: string): Promise<Json> => {
    const until = Date.now() + 60_000;
    for (;;) {
      const job = (await local.api(`/v1/pdf/${id}`, { token })).json;
      if (job.status === 'completed' || job.status === 'failed') return job;
      if (Date.now() > until) throw new Error(`job ${id} still ${job.status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it('tells the endpoint when a sync or an async render ends (job.completed, job.failed), signed; an unknown endpoint is refused', async () => {
    const token = await local.sessionToken();
    const { id: webhookId, secret } = (await createWebhook(token, { url: receiver.url('/ok/renders') })).json;
    const sync = await local.api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: '<p>sync</p>', webhook_id: webhookId },
    });
    expect(sync.status, sync.text).toBe(201);
    const queued = await local.api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: '<p>async</p>', async: true, webhook_id: webhookId },
    });
    expect(queued.status, queued.text).toBe(202);
    const failing = await local.api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: '<p>{{ 1 / 0 }}</p>', async: true, webhook_id: webhookId },
    });
    expect(failing.status, failing.text).toBe(202);
    const asyncJob = await waitForJob(token, queued.json.id);
    expect(asyncJob.status).toBe('completed');
    expect((await waitForJob(token, failing.json.id)).status).toBe('failed');

    const requests = await receiver.waitFor('/ok/renders', 3, 30_000);
    const payloads = requests.map(
      (r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Json,
    );
    const byJob = Object.fromEntries(payloads.map((p) => [p.data.id, p]));
    expect(byJob[sync.json.id]).toMatchObject({ type: 'job.completed', data: { status: 'completed' } });
    expect(byJob[queued.json.id]).toMatchObject({
      type: 'job.completed',
      data: { status: 'completed', mode: 'async', download_url: expect.stringContaining(queued.json.id) },
    });
    expect(byJob[failing.json.id]).toMatchObject({ type: 'job.failed', data: { status: 'failed' } });

    // Another account's endpoint, or none at all, is not the caller's to name.
    const other = await local.sessionToken();
    for (const body of [
      { html: '<p>x</p>', webhook_id: webhookId },
      { html: '<p>x</p>', async: true, webhook_id: 'wh_00000000000000000000000000' },
    ]) {
      expectError(
        await local.api('/v1/pdf', { method: 'POST', token: other, body }),
        404,
        'WEBHOOK_ENDPOINT_NOT_FOUND',
      );
    }
  });

  it('tells the endpoint batch.completed once the batch’s last job ended, signed, with the batch as GET /v1/batches/{id} shows it', async () => {
    const token = await local.sessionToken();
    // Subscribed to batch.completed only: the batch's items' own events (issue 37) are not sent.
    const { id: webhookId, secret } = (
      await createWebhook(token, { url: receiver.url('/ok/batches'), events: ['batch.completed'] })
    ).json;
    const accepted = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: {
        html: '<p>Invoice {{ n }}</p>',
        items: [{ variables: { n: 1 } }, { variables: { n: 2 } }],
        webhook_id: webhookId,
      },
    });
    expect(accepted.status, accepted.text).toBe(202);
    const [request] = await receiver.waitFor('/ok/batches', 1, 60_000);
    const payload = new Webhook(secret).verify(
      request?.body as string,
      request?.headers as Record<string, string>,
    ) as Json;
    expect(payload).toMatchObject({
      type: 'batch.completed',
      data: { id: accepted.json.id, status: 'completed', counts: { completed: 2, failed: 0 } },
    });
    // Told once.
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received.filter((r) => r.path === '/ok/batches')).toHaveLength(1);
    // Another account's endpoint is not the caller's to name.
    const other = await local.sessionToken();
    expectError(
      await local.api('/v1/batches', {
        method: 'POST',
        token: other,
        body: { html: '<p>x</p>', items: [{ variables: {} }], webhook_id: webhookId },
      }),
      404,
      'WEBHOOK_ENDPOINT_NOT_FOUND',
    );
  });

  it('tells batch.completed from the batches function for a batch its acceptance completes (every item an earlier job again), once, signed', async () => {
    const token = await local.sessionToken();
    const { id: webhookId, secret } = (await createWebhook(token, { url: receiver.url('/ok/replayed') }))
      .json;
    const body = {
      html: '<p>Invoice {{ n }}</p>',
      items: [
        { variables: { n: 1 }, idempotency_key: 'replayed-1' },
        { variables: { n: 2 }, idempotency_key: 'replayed-2' },
      ],
    };
    const first = await local.api('/v1/batches', { method: 'POST', token, body });
    expect(first.status, first.text).toBe(202);
    for (let i = 0; ; i++) {
      const batch = (await local.api(`/v1/batches/${first.json.id}`, { token })).json;
      if (batch.status === 'completed') break;
      expect(i, JSON.stringify(batch.counts)).toBeLessThan(300);
      await new Promise((r) => setTimeout(r, 200));
    }
    // The same items again, naming the endpoint: no job is rendered, the 202 is the completed
    // batch, and only the batches function (the API) can tell it.
    const again = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: { ...body, webhook_id: webhookId },
    });
    expect(again.status, again.text).toBe(202);
    expect(again.json).toMatchObject({ status: 'completed', counts: { completed: 2, failed: 0 } });
    const [request] = await receiver.waitFor('/ok/replayed', 1, 15_000);
    const payload = new Webhook(secret).verify(
      request?.body as string,
      request?.headers as Record<string, string>,
    ) as Json;
    expect(payload).toMatchObject({
      type: 'batch.completed',
      data: { id: again.json.id, status: 'completed', counts: { completed: 2, failed: 0 } },
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received.filter((r) => r.path === '/ok/replayed')).toHaveLength(1);
  });
});

describe('webhook delivery isolated per endpoint (issue 38)', () => {
  it('an endpoint has at most 2 attempts in flight: a third waits for a slot (later, not lost); another account’s delivery goes meanwhile', async () => {
    const ada = await local.sessionToken();
    const bob = await local.sessionToken();
    const silent = (await createWebhook(ada, { url: receiver.url('/slow/capped') })).json;
    const healthy = (await createWebhook(bob, { url: receiver.url('/ok/beside-capped') })).json;
    // Three test events at once to the silent endpoint (each attempt holds its slot for the 500 ms timeout).
    const sent = await Promise.all(
      [1, 2, 3].map(() => local.api(`/v1/webhooks/${silent.id}/test`, { method: 'POST', token: ada })),
    );
    for (const res of sent) expect(res.status, res.text).toBe(201);
    const bobs = await local.api(`/v1/webhooks/${healthy.id}/test`, { method: 'POST', token: bob });
    expect(bobs.status, bobs.text).toBe(201);
    expect((await settled(bob, healthy.id, bobs.json.id)).status).toBe('succeeded');

    // Every first attempt is made (the third later: not lost), however long the window.
    const arrivals = async () => receiver.received.filter((r) => r.path === '/slow/capped');
    const until = Date.now() + 15_000;
    while ((await arrivals()).length < 3 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    const at = (await arrivals()).map((r) => r.at).sort((a, b) => a - b);
    expect(at.length).toBeGreaterThanOrEqual(3);
    // Never three in flight: any three attempts span at least one attempt's timeout (500 ms, less
    // the scheduler's jitter), since the third waited for a slot that one of the others gave back.
    for (let i = 0; i + 2 < at.length; i++) {
      expect(
        (at[i + 2] as number) - (at[i] as number),
        JSON.stringify(at.map((t) => t - (at[0] as number))),
      ).toBeGreaterThanOrEqual(450);
    }
    for (const res of sent) await settled(ada, silent.id, res.json.id, 30_000);
    const attempts = await Promise.all(
      sent.map(async (res) => (await settled(ada, silent.id, res.json.id)).attempts.length as number),
    );
    expect(Math.min(...attempts)).toBeGreaterThanOrEqual(1);
  });
});
