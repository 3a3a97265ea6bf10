/**
 * Issue 20: the local stack killed (SIGKILL, nothing cleaned up) while webhook deliveries are
 * pending, then started again on the same data. The webhook queue is the local SQS server's, whose
 * journal survives the kill: every pending delivery is attempted after the restart until it is
 * delivered (its receiver is back) or its retry window ends (then it is marked failed); none stays
 * pending. WEBHOOK_OVERDUE_SECONDS keeps its default (15 min), so what arrives came from the
 * journal, not from the sweeper's overdue pass.
 */

import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { afterAll, expect, it } from 'vitest';
import { type StackProcess, startStackProcess } from '../helpers/child-stack.js';
import { type Api, createApi, createTempDataDir, type Json } from '../helpers/local-stack.js';
import { useWebhookReceiver } from '../helpers/webhook-receiver.js';

const WINDOW_SECONDS = 30;
const env: Record<string, string> = {
  WEBHOOK_FIRST_RETRY_SECONDS: '1',
  WEBHOOK_RETRY_WINDOW_SECONDS: String(WINDOW_SECONDS),
  WEBHOOK_TIMEOUT_MS: '1000',
  SWEEP_INTERVAL_SECONDS: '1',
};
const receiver = useWebhookReceiver(env);
const EVENTS = 5;

let dataDir: string | undefined;
let stack: StackProcess | undefined;
afterAll(async () => {
  await stack?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const deliveriesOf = async (api: Api, token: string, webhookId: string): Promise<Json[]> => {
  const res = await api(`/v1/webhooks/${webhookId}/deliveries?limit=100`, { token });
  expect(res.status, res.text).toBe(200);
  return res.json;
};

it('a stack killed with deliveries pending attempts each after restart: delivered once its receiver is back, failed once its window ends', {
  timeout: 300_000,
}, async () => {
  dataDir = await createTempDataDir();
  stack = await startStackProcess(env, 90_000, {}, dataDir);
  const sub = 'webhooks-crash-account';
  let token = await stack.sessionToken(sub);
  let api = createApi(stack.baseUrl);
  receiver.setDown(true);
  const endpoint = async (path: string) => {
    const res = await api('/v1/webhooks', { method: 'POST', token, body: { url: receiver.url(path) } });
    expect(res.status, res.text).toBe(201);
    return res.json as { id: string; secret: string };
  };
  const down = await endpoint('/down/crash');
  const failing = await endpoint('/fail/crash');
  for (const hook of [down, down, down, down, down, failing]) {
    const res = await api(`/v1/webhooks/${hook.id}/test`, { method: 'POST', token });
    expect(res.status, res.text).toBeLessThan(300);
  }
  // Each has failed once or more, and waits for its next attempt (in the queue, delayed).
  const until = Date.now() + 30_000;
  for (;;) {
    const all = [
      ...(await deliveriesOf(api, token, down.id)),
      ...(await deliveriesOf(api, token, failing.id)),
    ];
    if (all.length === EVENTS + 1 && all.every((d) => d.status === 'pending' && d.attempts.length >= 1))
      break;
    expect(Date.now(), JSON.stringify(all)).toBeLessThan(until);
    await sleep(100);
  }
  await stack.kill();
  const killedAt = Date.now();
  receiver.setDown(false);
  const upAt = Date.now();

  stack = await startStackProcess(env, 90_000, {}, dataDir);
  api = createApi(stack.baseUrl);
  token = await stack.sessionToken(sub);
  let downDeliveries: Json[] = [];
  let failingDeliveries: Json[] = [];
  for (;;) {
    downDeliveries = await deliveriesOf(api, token, down.id);
    failingDeliveries = await deliveriesOf(api, token, failing.id);
    if ([...downDeliveries, ...failingDeliveries].every((d) => d.status !== 'pending')) break;
    expect(Date.now() - killedAt, JSON.stringify(failingDeliveries)).toBeLessThan(
      WINDOW_SECONDS * 1000 + 120_000,
    );
    await sleep(250);
  }
  console.info(
    `webhooks crash: every delivery settled ${Date.now() - killedAt} ms after the kill ` +
      `(attempts: ${downDeliveries.map((d) => d.attempts.length).join(', ')}; failing: ${failingDeliveries[0]?.attempts.length})`,
  );
  // The receiver that came back got each of its deliveries, signed.
  expect(downDeliveries).toHaveLength(EVENTS);
  for (const delivery of downDeliveries) {
    expect(delivery.status).toBe('succeeded');
    const arrived = receiver.received.filter(
      (r) => r.path === '/down/crash' && r.at >= upAt && r.headers['webhook-id'] === delivery.id,
    );
    expect(arrived.length, delivery.id).toBeGreaterThanOrEqual(1);
    const request = arrived[0] as (typeof arrived)[number];
    expect(
      new Webhook(down.secret).verify(request.body, {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      }),
    ).toMatchObject({ type: 'webhook.test', data: { webhook_id: down.id } });
  }
  // The one whose receiver never answers 2xx was tried until its window ended, then failed.
  expect(failingDeliveries).toHaveLength(1);
  const [failed] = failingDeliveries as [Json];
  expect(failed).toMatchObject({ status: 'failed', next_attempt_at: null });
  const lastAttempt = failed.attempts[failed.attempts.length - 1];
  expect(Date.parse(lastAttempt.attempted_at)).toBeGreaterThan(killedAt);
  expect(
    Date.parse(lastAttempt.attempted_at) - Date.parse(failed.attempts[0].attempted_at),
  ).toBeLessThanOrEqual(WINDOW_SECONDS * 1000 + 5_000);
});
