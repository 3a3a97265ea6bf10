/**
 * Issue 20: one account's batch does not starve another's renders. The render queue delivers
 * fairly across message groups (an account each), so a single async render from another account,
 * submitted while a batch of 40 is being rendered, waits at most for a consumer to come free: it
 * completes in under 3× its latency on an idle queue, measured in the same run (the control).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { waitForJob } from '../helpers/async-jobs.js';
import { useLocalStack } from '../helpers/local-stack.js';
import { reportRatio } from '../helpers/timing.js';

const local = useLocalStack({
  env: {
    ASYNC_CONCURRENCY: '2',
    PLANS: JSON.stringify({ free: { monthlyRenders: 1000, rendersPerMinute: 1000, concurrentRenders: 2 } }),
  },
});

/** A page that takes a moment (as an invoice with a web font would), the same for both accounts. */
const PAGE =
  "<p>{{ n }}</p><script>setTimeout(() => document.body.append(Object.assign(document.createElement('i'), { id: 'done' })), 300)</script>";

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

it("another account's async render submitted mid-batch completes in under 3x its idle latency", {
  timeout: 240_000,
}, async () => {
  const other = await local.sessionToken();
  const renderOnce = async (): Promise<number> => {
    const started = Date.now();
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      token: other,
      body: { html: PAGE, variables: { n: 'other' }, page_load: { wait_for_selector: '#done' }, async: true },
    });
    expect(res.status, res.text).toBe(202);
    const job = await waitForJob(local.api, other, res.json.id, 120_000);
    expect(job.status).toBe('completed');
    return Date.now() - started;
  };
  // The control: the same render on an idle queue (one to warm up, then three).
  await renderOnce();
  const idle = [await renderOnce(), await renderOnce(), await renderOnce()];

  const batchOwner = await local.sessionToken();
  const batch = await local.api('/v1/batches', {
    method: 'POST',
    token: batchOwner,
    body: {
      html: PAGE,
      page_load: { wait_for_selector: '#done' },
      items: Array.from({ length: 40 }, (_, n) => ({ variables: { n } })),
    },
  });
  expect(batch.status, batch.text).toBe(202);
  await sleep(1000);
  const busy: number[] = [];
  for (let i = 0; i < 3; i++) {
    busy.push(await renderOnce());
    const now = (await local.api(`/v1/batches/${batch.json.id}`, { token: batchOwner })).json;
    // Each measurement is made while the batch still has jobs waiting.
    expect(now.counts.pending, `the batch ran out before measurement ${i + 1}`).toBeGreaterThan(0);
  }
  console.info(
    `fairness: idle ${idle.join(', ')} ms (median ${median(idle)}); mid-batch ${busy.join(', ')} ms (median ${median(busy)})`,
  );
  reportRatio(
    "batch fairness: another account's render mid-batch against idle",
    median(busy) / median(idle),
    3,
  );
  expect(median(busy)).toBeLessThan(3 * median(idle));
});
