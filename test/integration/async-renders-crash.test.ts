/**
 * Issue 20: a local stack killed (SIGKILL, nothing cleaned up) in the middle of 20 async renders,
 * some waiting in the render queue, some rendering, some done. Restarted on the same data, the
 * queue still holds every message it acknowledged (its journal), the consumer takes them up, and
 * the sweeper re-queues the jobs whose consumer died (their lease ran out, attempts are left):
 * every job ends completed or failed, none is lost, and renders_used equals the completed renders.
 */

import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, expect, it } from 'vitest';
import { type StackProcess, startStackProcess } from '../helpers/child-stack.js';
import { createApi, createTempDataDir, type Json } from '../helpers/local-stack.js';

const LEASE_SECONDS = 10;
const env = {
  JOB_LEASE_SECONDS: String(LEASE_SECONDS),
  SWEEP_INTERVAL_SECONDS: '1',
  ASYNC_QUEUE_LEASE_SECONDS: '20',
  ASYNC_RETRY_BASE_SECONDS: '1',
  PLANS: JSON.stringify({
    free: { monthlyRenders: 1000, rendersPerMinute: 1000, concurrentRenders: 50 },
  }),
};

let dataDir: string | undefined;
let stack: StackProcess | undefined;
afterAll(async () => {
  await stack?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

it('a stack killed during 20 async renders ends every job after restart, none lost, units equal completed renders', {
  timeout: 300_000,
}, async () => {
  dataDir = await createTempDataDir();
  stack = await startStackProcess(env, 90_000, {}, dataDir);
  const sub = 'async-crash-account';
  const token = await stack.sessionToken(sub);
  let api = createApi(stack.baseUrl);
  // Pages that take a moment, so that the kill finds jobs queued, rendering and completed.
  const accepted: string[] = [];
  for (let n = 0; n < 20; n++) {
    const res = await api('/v1/pdf', {
      method: 'POST',
      token,
      body: {
        html: `<p>async ${n}</p><script>setTimeout(() => document.body.append(Object.assign(document.createElement('i'), { id: 'done' })), 700)</script>`,
        page_load: { wait_for_selector: '#done' },
        async: true,
      },
    });
    expect(res.status, res.text).toBe(202);
    accepted.push(res.json.id);
  }
  // Some done, some rendering, most still queued.
  for (;;) {
    const jobs: Json[] = (await api('/v1/pdf?limit=100', { token })).json;
    if (jobs.filter((j) => j.status === 'completed').length >= 2) break;
    await sleep(100);
  }
  const before: Json[] = (await api('/v1/pdf?limit=100', { token })).json;
  await stack.kill();
  const killedAt = Date.now();
  const statusesAtKill = before.reduce<Record<string, number>>(
    (n, j) => Object.assign(n, { [j.status]: (n[j.status] ?? 0) + 1 }),
    {},
  );

  stack = await startStackProcess(env, 90_000, {}, dataDir);
  api = createApi(stack.baseUrl);
  const restarted = await stack.sessionToken(sub);
  // The dead consumers' jobs wait for their lease and a sweep; then 20 renders at most, two at a time.
  const boundMs = 120_000;
  let jobs: Json[] = [];
  for (;;) {
    jobs = (await api('/v1/pdf?limit=100', { token: restarted })).json;
    const open = jobs.filter((j: Json) => j.status === 'pending' || j.status === 'rendering');
    if (open.length === 0) break;
    expect(Date.now() - killedAt, `${open.length} jobs still open`).toBeLessThan(boundMs);
    await sleep(500);
  }
  const resolvedMs = Date.now() - killedAt;
  expect(jobs.map((j) => j.id).sort()).toEqual([...accepted].sort());
  const completed = jobs.filter((j: Json) => j.status === 'completed');
  const retried = jobs.filter((j: Json) => j.attempts > 1).length;
  const usage = (await api('/v1/usage', { token: restarted })).json;
  console.info(
    `async crash: killed with ${JSON.stringify(statusesAtKill)}; after restart ${completed.length} completed, ` +
      `${jobs.length - completed.length} failed, ${retried} rendered again; all ended ${resolvedMs} ms after the kill; ` +
      `renders_used ${usage.renders_used}`,
  );
  expect(jobs.every((j: Json) => j.status === 'completed' || j.status === 'failed')).toBe(true);
  expect(usage.renders_used).toBe(completed.length);
  // No PDF lost: every completed job's file is there.
  for (const job of completed) {
    const pdf = await fetch((await api(`/v1/pdf/${job.id}`, { token: restarted })).json.download_url);
    expect(pdf.status, job.id).toBe(200);
    await pdf.arrayBuffer();
  }
});
