/**
 * Issue 19: every job ends and every unit is accounted for, even when the stack is killed
 * (SIGKILL, nothing cleaned up) in the middle of 20 concurrent renders. Restarted on the same
 * data, its sweeper (a pass at start-up, then a timer) fails every job left pending or rendering
 * once its lease runs out, and the month's units are worked out again from the jobs:
 * renders_used equals the completed renders, as GET /v1/pdf and GET /v1/usage show them.
 */

import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, expect, it } from 'vitest';
import { type StackProcess, startStackProcess } from '../helpers/child-stack.js';
import { createApi, createTempDataDir, type Json } from '../helpers/local-stack.js';

const LEASE_SECONDS = 10;
const SWEEP_SECONDS = 1;
const env = {
  JOB_LEASE_SECONDS: String(LEASE_SECONDS),
  SWEEP_INTERVAL_SECONDS: String(SWEEP_SECONDS),
  // All 20 render at once (the pages mostly wait), rather than most being refused as busy.
  RENDERER_MAX_CONCURRENT_RENDERS: '24',
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

it('a stack killed during 20 renders ends every job after restart, units equal completed renders, and an idempotent retry renders once', {
  timeout: 240_000,
}, async () => {
  dataDir = await createTempDataDir();
  stack = await startStackProcess(env, 90_000, {}, dataDir);
  const sub = 'crash-account';
  const token = await stack.sessionToken(sub);
  let api = createApi(stack.baseUrl);
  // Pages that take longer and longer, so that the kill comes after some renders completed and
  // finds the others pending and rendering.
  const ok: string[] = [];
  const answers = Array.from({ length: 20 }, (_, n) =>
    api('/v1/pdf', {
      method: 'POST',
      token,
      body: {
        html: `<p>render ${n}</p><script>setTimeout(() => document.body.append(Object.assign(document.createElement('i'), { id: 'done' })), ${200 + n * 400})</script>`,
        page_load: { wait_for_selector: '#done' },
      },
    }).then(
      (a) => {
        if (a.status === 201) ok.push(a.json.id);
        return a;
      },
      () => undefined,
    ),
  );
  // And one with an Idempotency-Key, whose claim dies with the stack.
  const keyed = {
    html: "<p>keyed</p><script>setTimeout(() => document.body.append(Object.assign(document.createElement('i'), { id: 'done' })), 1500)</script>",
    page_load: { wait_for_selector: '#done' },
  };
  const idempotent = { 'Idempotency-Key': 'crash-retry-1' };
  const first = api('/v1/pdf', { method: 'POST', token, body: keyed, headers: idempotent }).catch(
    () => undefined,
  );
  // The kill comes once a few renders answered (or after a while on a very slow machine).
  const waitUntil = Date.now() + 30_000;
  while (ok.length < 3 && Date.now() < waitUntil) await sleep(50);
  await stack.kill();
  const completedBeforeKill = [...ok];
  await first;
  const killedAt = Date.now();
  const answered = (await Promise.all(answers)).filter((a) => a !== undefined);

  stack = await startStackProcess(env, 90_000, {}, dataDir);
  api = createApi(stack.baseUrl);
  const restarted = await stack.sessionToken(sub);
  // Unresolved at most: the lease, one sweep interval and one pass (a few seconds on a loaded machine).
  const boundMs = (LEASE_SECONDS + SWEEP_SECONDS) * 1000 + 10_000;
  let jobs: Json[] = [];
  for (;;) {
    jobs = (await api('/v1/pdf?limit=100', { token: restarted })).json;
    const open = jobs.filter((j: Json) => j.status === 'pending' || j.status === 'rendering');
    if (open.length === 0) break;
    expect(Date.now() - killedAt, `${open.length} jobs still open`).toBeLessThan(boundMs);
    await sleep(500);
  }
  const resolvedMs = Date.now() - killedAt;
  const completed = jobs.filter((j: Json) => j.status === 'completed').length;
  const interrupted = jobs.filter((j: Json) => j.error?.code === 'PDF_RENDERING_INTERRUPTED').length;
  // The units come back in the same pass, or at the next one when a job was mid-write.
  let usage: Json;
  for (;;) {
    usage = (await api('/v1/usage', { token: restarted })).json;
    if (usage.renders_used === completed || Date.now() - killedAt > boundMs) break;
    await sleep(500);
  }
  console.info(
    `crash: ${jobs.length} jobs (${completed} completed, ${interrupted} interrupted, ${answered.length} answered before the kill); ` +
      `all ended ${resolvedMs} ms after the kill; renders_used ${usage.renders_used}`,
  );
  expect(interrupted).toBeGreaterThan(0);
  // Nothing acknowledged is lost: every render answered 201 before the kill is still completed.
  expect(completedBeforeKill.length).toBeGreaterThan(0);
  for (const id of completedBeforeKill) {
    expect(jobs.find((j: Json) => j.id === id)?.status, id).toBe('completed');
  }
  expect(completed).toBeGreaterThanOrEqual(completedBeforeKill.length);
  expect(jobs.every((j: Json) => j.status === 'completed' || j.status === 'failed')).toBe(true);
  expect(usage.renders_used).toBe(completed);
  // An idempotent retry after the crash takes the dead claim over (after its short lease, two
  // thirds of the job's) and renders once; a second retry replays it.
  const retryStarted = Date.now();
  const retry = await api('/v1/pdf', { method: 'POST', token: restarted, body: keyed, headers: idempotent });
  expect(retry.status, retry.text).toBe(201);
  console.info(`idempotent retry after the crash answered in ${Date.now() - retryStarted} ms`);
  const replay = await api('/v1/pdf', { method: 'POST', token: restarted, body: keyed, headers: idempotent });
  expect(replay.status).toBe(201);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(replay.json.id).toBe(retry.json.id);
  const completedNow = completed + 1;
  // And the account renders again at once.
  const next = await api('/v1/pdf', { method: 'POST', token: restarted, body: { html: '<p>after</p>' } });
  expect(next.status, next.text).toBe(201);
  expect((await api('/v1/usage', { token: restarted })).json.renders_used).toBe(completedNow + 1);
  const after: Json[] = (await api('/v1/pdf?limit=100', { token: restarted })).json;
  expect(after.filter((j) => j.status === 'completed')).toHaveLength(completedNow + 1);
});
