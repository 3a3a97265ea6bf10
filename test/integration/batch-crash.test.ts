/**
 * Issue 20: the local stack killed (SIGKILL, nothing cleaned up) in the middle of a batch, then
 * started again on the same data: the queue's journal, the consumer and the sweeper (which
 * re-queues an async job whose lease ran out) finish it. Every job ends completed or failed, none
 * stays pending, renders_used equals the completed renders, and no job record or PDF that was
 * completed before the kill is lost.
 */

import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, expect, it } from 'vitest';
import { type StackProcess, startStackProcess } from '../helpers/child-stack.js';
import { createApi, createTempDataDir, type Json } from '../helpers/local-stack.js';

const LEASE_SECONDS = 10;
const SWEEP_SECONDS = 1;
const ITEMS = 30;
const env = {
  JOB_LEASE_SECONDS: String(LEASE_SECONDS),
  SWEEP_INTERVAL_SECONDS: String(SWEEP_SECONDS),
  ASYNC_RETRY_BASE_SECONDS: '1',
  PLANS: JSON.stringify({ free: { monthlyRenders: 1000, rendersPerMinute: 1000, concurrentRenders: 2 } }),
};

let dataDir: string | undefined;
let stack: StackProcess | undefined;
afterAll(async () => {
  await stack?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

it('a stack killed mid-batch finishes the batch after restart: every job ended, units equal completed renders, nothing lost', {
  timeout: 300_000,
}, async () => {
  dataDir = await createTempDataDir();
  stack = await startStackProcess(env, 90_000, {}, dataDir);
  const sub = 'batch-crash-account';
  const token = await stack.sessionToken(sub);
  let api = createApi(stack.baseUrl);
  // Pages that wait a little, so that the kill finds jobs completed, rendering and queued.
  const accepted = await api('/v1/batches', {
    method: 'POST',
    token,
    body: {
      html: "<p>item {{ n }}</p><script>setTimeout(() => document.body.append(Object.assign(document.createElement('i'), { id: 'done' })), 400)</script>",
      page_load: { wait_for_selector: '#done' },
      items: Array.from({ length: ITEMS }, (_, n) => ({ variables: { n } })),
    },
  });
  expect(accepted.status, accepted.text).toBe(202);
  const batchId = accepted.json.id;

  let before: Json[] = [];
  const waitUntil = Date.now() + 60_000;
  while (Date.now() < waitUntil) {
    before = (await api(`/v1/batches/${batchId}/jobs?limit=100`, { token })).json;
    if (before.filter((j: Json) => j.status === 'completed').length >= 3) break;
    await sleep(100);
  }
  await stack.kill();
  const killedAt = Date.now();
  const completedBeforeKill: string[] = before
    .filter((j: Json) => j.status === 'completed')
    .map((j: Json) => j.id);
  expect(completedBeforeKill.length).toBeGreaterThan(0);
  expect(completedBeforeKill.length).toBeLessThan(ITEMS);

  stack = await startStackProcess(env, 90_000, {}, dataDir);
  api = createApi(stack.baseUrl);
  const restarted = await stack.sessionToken(sub);
  let batch: Json;
  for (;;) {
    batch = (await api(`/v1/batches/${batchId}`, { token: restarted })).json;
    if (batch.status === 'completed') break;
    expect(Date.now() - killedAt, JSON.stringify(batch.counts)).toBeLessThan(180_000);
    await sleep(500);
  }
  const jobs: Json[] = (await api(`/v1/batches/${batchId}/jobs?limit=100`, { token: restarted })).json;
  const completed = jobs.filter((j) => j.status === 'completed');
  const failed = jobs.filter((j) => j.status === 'failed');
  console.info(
    `batch crash: ${completedBeforeKill.length} completed before the kill; after restart ${completed.length} completed, ` +
      `${failed.length} failed, batch completed ${Date.now() - killedAt} ms after the kill`,
  );
  // No job record lost, none left open, the counts as the jobs say.
  expect(jobs).toHaveLength(ITEMS);
  expect(completed.length + failed.length).toBe(ITEMS);
  expect(batch.counts).toEqual({
    pending: 0,
    rendering: 0,
    completed: completed.length,
    failed: failed.length,
  });
  // Nothing completed is lost: every job completed before the kill still is, with its PDF.
  for (const id of completedBeforeKill) {
    const job = jobs.find((j) => j.id === id);
    expect(job?.status, id).toBe('completed');
    const pdf = await fetch(job.download_url);
    expect(pdf.status, id).toBe(200);
  }
  // Units equal renders done (the sweeper reconciles a month within a pass or two).
  let usage: Json;
  for (;;) {
    usage = (await api('/v1/usage', { token: restarted })).json;
    if (usage.renders_used === completed.length || Date.now() - killedAt > 200_000) break;
    await sleep(500);
  }
  expect(usage.renders_used).toBe(completed.length);
});
