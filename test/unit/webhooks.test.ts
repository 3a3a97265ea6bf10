/**
 * Webhooks without AWS or network: the retry schedule's bound, the sealed secrets (opened only
 * with their own context), the DynamoDB request builders (the fence that records an attempt once),
 * and the sender's client refusing non-public addresses before it connects.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { parsePendingDeliverySortKey } from '../../functions/adapters/dynamodb/keys.js';
import {
  createDeliveryParams,
  postponeDeliveryParams,
  recordAttemptParams,
  restartDeliveryParams,
  takeWebhookSlotParams,
} from '../../functions/adapters/dynamodb/webhooks.js';
import {
  createWebhookClient,
  createWebhookUrlCheck,
  NOT_PUBLIC,
} from '../../functions/adapters/http/webhook-client.js';
import { secretBoxOf } from '../../functions/adapters/secrets-manager/webhook-secret-box.js';
import { eventDeliveryId, WEBHOOK_DELIVERY_ID } from '../../functions/domain/common/ids.js';
import { generateWebhookSecret } from '../../functions/domain/webhooks/webhook-management.js';
import { nextAttemptAt } from '../../functions/domain/webhooks/webhooks.js';
import { controlMs, describeBound, type PaceBound, paceBound, since } from '../helpers/timing.js';

describe('the retry schedule', () => {
  it('doubles each wait and stops once an attempt would start past the window', () => {
    const schedule = { firstRetrySeconds: 30, windowSeconds: 86_400 };
    const due: number[] = [];
    for (let made = 1; ; made++) {
      const at = nextAttemptAt(schedule, 0, made);
      if (at === undefined) break;
      due.push(at / 1000);
    }
    expect(due.slice(0, 4)).toEqual([30, 90, 210, 450]);
    expect(due).toHaveLength(11); // 12 attempts with the first
    expect(due.at(-1)).toBeLessThanOrEqual(86_400);
    expect(nextAttemptAt({ firstRetrySeconds: 1, windowSeconds: 3 }, 1000, 2)).toBe(4000);
    expect(nextAttemptAt({ firstRetrySeconds: 1, windowSeconds: 3 }, 1000, 3)).toBeUndefined();
  });
});

describe('sealed signing secrets', () => {
  const box = secretBoxOf(async () => 'a'.repeat(64));

  it('open with their context only, and never hold the secret in clear', async () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const sealed = await box.seal(secret, 'acct/wh_1');
    expect(sealed).not.toContain(secret.slice(6));
    expect(await box.open(sealed, 'acct/wh_1')).toBe(secret);
    await expect(box.open(sealed, 'acct/wh_2')).rejects.toThrow();
    await expect(secretBoxOf(async () => 'b'.repeat(64)).open(sealed, 'acct/wh_1')).rejects.toThrow();
    expect(await box.seal(secret, 'acct/wh_1')).not.toBe(sealed); // a fresh IV each time
  });

  it('are secrets the reference package signs and verifies with', () => {
    const secret = generateWebhookSecret();
    const wh = new Webhook(secret);
    const at = new Date();
    const signature = wh.sign('msg_1', at, '{"a":1}');
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signature,
    };
    expect(wh.verify('{"a":1}', headers)).toEqual({ a: 1 });
  });
});

describe('DynamoDB requests', () => {
  const delivery = { account_id: 'a', webhook_id: 'wh_1', id: 'msg_1', attempts: [{}, {}] as never[] };

  it('records attempt n only on a pending delivery with n-1 attempts', () => {
    const attempt = {
      attempt: 3,
      attempted_at: '2026-11-25T00:00:00.000Z',
      outcome: 'failed' as const,
      response_status: 500,
      duration_ms: 12,
      error: 'HTTP 500',
    };
    const params = recordAttemptParams(
      't',
      delivery,
      attempt,
      { status: 'pending', nextAttemptAt: null },
      new Date(0),
    );
    expect(params.Key).toEqual({ PK: 'ACCOUNT#a', SK: 'WEBHOOK_DELIVERY#wh_1#msg_1' });
    expect(params.ConditionExpression).toContain('size(attempts) = :before');
    expect(params.ExpressionAttributeValues?.[':before']).toBe(2);
    expect(params.UpdateExpression).toContain('list_append(attempts, :attempt)');
  });

  it('keeps a pending delivery on the overdue index by its next attempt, and takes an ended one off', () => {
    const created = createDeliveryParams('t', {
      ...delivery,
      attempts: [],
      event_type: 'webhook.test',
      status: 'pending',
      created_at: '1970-01-01T00:00:01.000Z',
      updated_at: '1970-01-01T00:00:01.000Z',
      next_attempt_at: '1970-01-01T00:00:01.000Z',
      payload: '{}',
      window_started_at: 1000,
      window_first_attempt: 1,
    });
    expect(created.Item?.GSI1SK).toBe('000000000001000#a#wh_1#msg_1');
    expect(parsePendingDeliverySortKey(String(created.Item?.GSI1SK))).toEqual({
      dueAt: 1000,
      accountId: 'a',
      webhookId: 'wh_1',
      deliveryId: 'msg_1',
    });
    const attempt = {
      attempt: 3,
      attempted_at: '1970-01-01T00:00:02.000Z',
      outcome: 'failed' as const,
      response_status: 500,
      duration_ms: 1,
      error: 'HTTP 500',
    };
    const retrying = recordAttemptParams(
      't',
      delivery,
      attempt,
      { status: 'pending', nextAttemptAt: '1970-01-01T00:00:05.000Z' },
      new Date(2000),
    );
    expect(retrying.ExpressionAttributeValues?.[':gsk']).toBe('000000000005000#a#wh_1#msg_1');
    const failed = recordAttemptParams(
      't',
      delivery,
      attempt,
      { status: 'failed', nextAttemptAt: null },
      new Date(2000),
    );
    expect(failed.UpdateExpression).toContain('REMOVE #gpk, #gsk');
    // Of sweepers racing, only the one that moves the entry from where it read it sends again.
    const postponed = postponeDeliveryParams('t', delivery, 5000, 9000);
    expect(postponed.ConditionExpression).toContain('#gsk = :seen');
    expect(postponed.ExpressionAttributeValues).toMatchObject({
      ':seen': '000000000005000#a#wh_1#msg_1',
      ':gsk': '000000000009000#a#wh_1#msg_1',
      ':made': 2,
    });
  });

  it('names an event that may be told twice with one delivery id: a ULID of its time', () => {
    const id = eventDeliveryId(Date.parse('2026-11-25T10:00:00.000Z'), 'acct', 'job_1', 'job.failed');
    expect(id).toMatch(WEBHOOK_DELIVERY_ID);
    expect(eventDeliveryId(Date.parse('2026-11-25T10:00:00.000Z'), 'acct', 'job_1', 'job.failed')).toBe(id);
    expect(eventDeliveryId(Date.parse('2026-11-25T10:00:00.000Z'), 'acct', 'job_2', 'job.failed')).not.toBe(
      id,
    );
    expect(eventDeliveryId(Date.parse('2026-11-25T10:00:01.000Z'), 'acct', 'job_1', 'job.failed') > id).toBe(
      true,
    );
  });

  it('restarts a window numbered after the attempts made, and caps endpoints with a set', () => {
    const params = restartDeliveryParams('t', delivery, new Date(5000));
    expect(params.ExpressionAttributeValues).toMatchObject({ ':made': 2, ':first': 3, ':started': 5000 });
    const slot = takeWebhookSlotParams('t', 'a', 'wh_1', 10);
    expect(slot.Key).toEqual({ PK: 'ACCOUNT#a', SK: 'WEBHOOK_SLOTS' });
    expect(slot.ConditionExpression).toContain('size(webhook_ids) < :limit');
  });
});

describe('the sender’s client', () => {
  const noLookup = async (): Promise<string[]> => {
    throw new Error('no DNS here');
  };
  const post = createWebhookClient({ timeoutMs: 500, lookup: noLookup });

  it('refuses non-public addresses before connecting, in the same words as a name that does not resolve', async () => {
    for (const url of [
      'https://127.0.0.1/x',
      'https://169.254.169.254/latest',
      'https://[::ffff:10.0.0.1]/x',
      'https://localhost/x',
      'https://0.0.0.0/x',
      'https://no-such-name.example.com/x', // the lookup fails
    ]) {
      const res = await post({ url, headers: {}, body: '{}' });
      expect(res, url).toMatchObject({ status: null, error: `refused: ${NOT_PUBLIC}` });
    }
    expect(await post({ url: 'ftp://example.com/x', headers: {}, body: '' })).toMatchObject({ status: null });
  });

  it('sends over https only, to port 443, 8443 or a dynamic port; plain http only to an allowed host:port', async () => {
    const sent: string[] = [];
    const publicLookup = async (name: string): Promise<string[]> => {
      sent.push(name);
      return ['93.184.216.34'];
    };
    const check = createWebhookUrlCheck({ lookup: publicLookup, allowHosts: ['127.0.0.1:8080'] });
    for (const [url, refusal] of [
      ['http://public.example.com/x', 'scheme must be https'],
      ['http://public.example.com:443/x', 'scheme must be https'],
      ['https://public.example.com:25/x', 'port must be'],
      ['https://public.example.com:22/x', 'port must be'],
      ['https://public.example.com:6379/x', 'port must be'],
      ['https://public.example.com:80/x', 'port must be'],
      ['https://public.example.com:8080/x', 'port must be'],
      ['https://public.example.com:49151/x', 'port must be'],
      ['ws://public.example.com/x', 'scheme must be https'],
    ] as const) {
      expect(await check(new URL(url)), url).toContain(refusal);
    }
    // Refused on the URL alone: no lookup was made for any of them.
    expect(sent).toEqual([]);
    for (const url of [
      'https://public.example.com/x',
      'https://public.example.com:8443/x',
      'https://public.example.com:49152/x',
      'https://public.example.com:65535/x',
      'http://127.0.0.1:8080/x', // the allow list's own host:port (the local stack's receivers)
    ]) {
      expect(await check(new URL(url)), url).toBeUndefined();
    }
    // The sender applies the same rules at every attempt (an endpoint saved before them).
    const res = await createWebhookClient({ timeoutMs: 500, lookup: publicLookup })({
      url: 'https://public.example.com:6379/x',
      headers: {},
      body: '{}',
    });
    expect(res).toMatchObject({ status: null, error: expect.stringContaining('refused: the port must be') });
  });

  it('counts a slow lookup against the attempt’s time', async () => {
    const stalled = createWebhookClient({ timeoutMs: 200, lookup: () => new Promise(() => {}) });
    // The control: the same attempt with a lookup that answers at once (a private address, refused).
    const answered = createWebhookClient({ timeoutMs: 200, lookup: async () => ['10.0.0.1'] });
    const control = await controlMs(async () =>
      expect(await answered({ url: 'https://private.example.com/x', headers: {}, body: '{}' })).toMatchObject(
        {
          error: `refused: ${NOT_PUBLIC}`,
        },
      ),
    );
    const started = performance.now();
    const res = await stalled({ url: 'https://slow-dns.example.com/x', headers: {}, body: '{}' });
    expect(res).toMatchObject({ status: null, error: 'timed out after 200 ms' });
    const ms = since(started);
    const bound: PaceBound = { expectedMs: 200, slackMs: 800, controlMs: control, factor: 50 };
    expect(ms, describeBound(ms, bound)).toBeLessThan(paceBound(bound));
  });

  it('judges a name by every address it resolves to', async () => {
    const check = createWebhookUrlCheck({ lookup: async () => ['93.184.216.34', '10.0.0.1'] });
    expect(await check(new URL('https://mixed.example.com/x'))).toBe(NOT_PUBLIC);
    const ok = createWebhookUrlCheck({ lookup: async () => ['93.184.216.34'] });
    expect(await ok(new URL('https://public.example.com/x'))).toBeUndefined();
    expect(await ok(new URL('https://u:p@public.example.com/x'))).toContain('credentials');
    // A name that does not resolve is refused in the same words as a private one: which it was
    // would tell an account how this network sees names (issue 38).
    const unresolved = createWebhookUrlCheck({ lookup: noLookup });
    expect(await unresolved(new URL('https://not-yet.example.com/x'))).toBe(NOT_PUBLIC);
  });
});
