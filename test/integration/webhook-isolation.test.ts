/**
 * Issue 38, class 3: one account's slow or silent webhook receiver delays nobody else's
 * deliveries. A stack of its own (a 10 s POST timeout, retries far off) and a receiver on
 * loopback: Ada's endpoint never answers, Carol's answers after 9 s, each sent five test events
 * at once; meanwhile Bob's test deliveries go out as they do when the sender is idle. Before
 * issue 38 the sender took ten messages a run, two runs at once locally, and each run waited for
 * its slowest attempt: Bob's delivery waited 7.5-8.2 s (102 ms idle).
 *
 * The test asserts the mechanism: Bob's deliveries arrive while Ada's and Carol's attempts are
 * still in flight (before any of them could have ended), and neither endpoint ever has more than
 * its cap (2) of attempts in flight. The ratio of Bob's delivery time beside them to his idle
 * time (the same run's control) is reported for the bench (target ≤ 1.5×).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { type Json, useLocalStack } from '../helpers/local-stack.js';
import { reportRatio } from '../helpers/timing.js';
import { useWebhookReceiver } from '../helpers/webhook-receiver.js';

const TIMEOUT_MS = 10_000;
const SLOW_MS = 9000;
const env: Record<string, string> = {
  WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  WEBHOOK_FIRST_RETRY_SECONDS: '300',
  WEBHOOK_RETRY_WINDOW_SECONDS: '600',
};
const receiver = useWebhookReceiver(env);
const local = useLocalStack({ env });

const arrivals = (path: string) => receiver.received.filter((r) => r.path === path).map((r) => r.at);

const endpoint = async (token: string, path: string): Promise<string> => {
  const res = await local.api('/v1/webhooks', { method: 'POST', token, body: { url: receiver.url(path) } });
  expect(res.status, res.text).toBe(201);
  return res.json.id;
};

const sendTest = async (token: string, webhookId: string): Promise<Json> => {
  const res = await local.api(`/v1/webhooks/${webhookId}/test`, { method: 'POST', token });
  expect(res.status, res.text).toBe(201);
  return res.json;
};

/** Milliseconds from asking for a test event to its arrival at `path` (its `n`th request there). */
const deliveryMs = async (token: string, webhookId: string, path: string, n: number): Promise<number> => {
  const started = Date.now();
  await sendTest(token, webhookId);
  await receiver.waitFor(path, n, 30_000);
  const at = arrivals(path)[n - 1] as number;
  return at - started;
};

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

describe('webhook delivery isolated per endpoint', () => {
  it('another account’s deliveries go beside a 9 s and a silent receiver, each held to 2 attempts in flight', async () => {
    const [ada, bob, carol] = await Promise.all([
      local.sessionToken(),
      local.sessionToken(),
      local.sessionToken(),
    ]);
    const bobIdle = await endpoint(bob, '/ok/bob-idle');
    const bobBeside = await endpoint(bob, '/ok/bob-beside');
    const silent = await endpoint(ada, '/slow/ada');
    const slow = await endpoint(carol, `/sleep/${SLOW_MS}/carol`);

    // The control: Bob's delivery with the sender idle (five, one after another).
    const idle: number[] = [];
    for (let n = 1; n <= 5; n++) idle.push(await deliveryMs(bob, bobIdle, '/ok/bob-idle', n));

    // Five test events each to the silent and the 9 s receiver, at once; their first attempts under way.
    await Promise.all([
      ...Array.from({ length: 5 }, () => sendTest(ada, silent)),
      ...Array.from({ length: 5 }, () => sendTest(carol, slow)),
    ]);
    await receiver.waitFor('/slow/ada', 2, 30_000);
    await receiver.waitFor(`/sleep/${SLOW_MS}/carol`, 2, 30_000);
    const stalledAt = Math.min(...arrivals('/slow/ada'), ...arrivals(`/sleep/${SLOW_MS}/carol`));

    const beside: number[] = [];
    for (let n = 1; n <= 5; n++) beside.push(await deliveryMs(bob, bobBeside, '/ok/bob-beside', n));
    const lastBob = Math.max(...arrivals('/ok/bob-beside'));
    const detail = `Bob's delivery ${median(beside)} ms beside them (${beside.join(', ')}), ${median(idle)} ms idle (${idle.join(', ')})`;
    reportRatio(
      'webhook delivery beside a 9 s and a silent receiver / idle',
      median(beside) / median(idle),
      1.5,
      detail,
    );

    // Bob's were all delivered before any attempt to the stalled receivers could have ended.
    expect(lastBob - stalledAt, detail).toBeLessThan(SLOW_MS);
    // Each stalled endpoint had its cap of attempts in flight, and no more, all the while.
    await sleep(500);
    expect(arrivals('/slow/ada').filter((at) => at < lastBob)).toHaveLength(2);
    expect(arrivals(`/sleep/${SLOW_MS}/carol`).filter((at) => at < lastBob)).toHaveLength(2);
  });
});
