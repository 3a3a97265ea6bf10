/**
 * Crash recovery (issues 19 and 20): a local stack in a child process killed (SIGKILL, nothing
 * cleaned up) in the middle of its work, then started again on the same data. Four scenarios,
 * each with a stack and a DATA_DIR of its own (their settings differ, and an assertion depends on
 * each), run side by side: most of each one's time is waiting out a lease, a sweep or a retry
 * window, and the four waits overlap instead of following one another. This file only talks HTTP
 * to its stacks, so it shares a worker with other files (the `integration` project).
 *
 * The bounds on recovery count from when the restarted stack serves (a restart on a loaded
 * machine takes a while of its own) and are worked out from the stack's settings and from
 * controls measured in the same run (recoveryBoundMs), so that they hold on a busy machine while
 * a stack that stops ending jobs still fails.
 */

import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { describe, it, type TestContext } from 'vitest';
import { type StackProcess, startStackProcess } from '../helpers/child-stack.js';
import { type Api, createApi, createTempDataDir, type Json } from '../helpers/local-stack.js';
import { useReachableHost } from '../helpers/reachable-host.js';
import { billedJobIds } from '../helpers/usage-ledger.js';
import { useWebhookReceiver } from '../helpers/webhook-receiver.js';

/** The completed jobs' ids, sorted: what the usage ledger should hold, one for one. */
const completedIds = (jobs: readonly Json[]): string[] =>
  jobs
    .filter((j) => j.status === 'completed')
    .map((j) => j.id as string)
    .sort();

/**
 * Starts (and, after a kill, starts again) a stack process with `env` on a DATA_DIR of the test's
 * own, which outlives a kill; the stack is stopped and its data removed when the test ends. Each
 * start answers the stack and how long it took to serve: a control for how loaded the machine is.
 */
const stackOnOwnData = async (
  env: Readonly<Record<string, string>>,
  onTestFinished: TestContext['onTestFinished'],
) => {
  const dataDir = await createTempDataDir();
  let stack: StackProcess | undefined;
  onTestFinished(async () => {
    await stack?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });
  return async () => {
    const startedAt = Date.now();
    stack = await startStackProcess(env, 90_000, {}, dataDir);
    return { stack, startMs: Date.now() - startedAt };
  };
};

/**
 * How long after the restarted stack serves its recovery may take: `waitMs`, what its settings
 * make it wait (a lease, a sweep interval, a retry delay or window: timers, which keep time
 * whatever the load), then slack for the work, which a loaded machine slows: twice `renders`
 * renders at `paceMs` each (this stack's pace before the kill), the restart's own time (both
 * controls measured in this run), and 10 s.
 */
const recoveryBoundMs = (waitMs: number, restartMs: number, renders = 0, paceMs = 0): number =>
  waitMs + 2 * renders * paceMs + restartMs + 10_000;

/** A page that renders once `ms` passed (its wait_for_selector is `#done`). */
/** The account's jobs once none is pending or rendering; fails once `boundMs` have passed since `since`. */
const jobsOnceEnded = async (
  expect: TestContext['expect'],
  api: Api,
  token: string,
  since: number,
  boundMs: number,
): Promise<Json[]> => {
  for (;;) {
    const jobs: Json[] = (await api('/v1/pdf?limit=100', { token })).json;
    const open = jobs.filter((j: Json) => j.status === 'pending' || j.status === 'rendering');
    if (open.length === 0) return jobs;
    expect(Date.now() - since, `${open.length} jobs still open`).toBeLessThan(boundMs);
    await sleep(500);
  }
};

const pageDoneAfter = (text: string, ms: number | string) =>
  `<p>${text}</p><script>setTimeout(() => document.body.append(Object.assign(document.createElement('i'), { id: 'done' })), ${ms})</script>`;

const WINDOW_SECONDS = 30;
const webhooksEnv: Record<string, string> = {
  WEBHOOK_FIRST_RETRY_SECONDS: '1',
  WEBHOOK_RETRY_WINDOW_SECONDS: String(WINDOW_SECONDS),
  WEBHOOK_TIMEOUT_MS: '1000',
  SWEEP_INTERVAL_SECONDS: '1',
};
// Before the stacks start: it adds its address to webhooksEnv (WEBHOOK_EGRESS_ALLOW_HOSTS).
const receiver = useWebhookReceiver(webhooksEnv);

/**
 * A host whose stylesheets hold a page's load until the gate opens (issue 37's slots): the renders
 * it holds are still rendering when their stack is killed, and render at once after it.
 */
const gate = { open: false, waiting: 0, held: [] as (() => void)[] };
const gateHost = useReachableHost((_req, res) => {
  const answer = () => res.writeHead(200, { 'content-type': 'text/css' }).end('p { color: #123; }');
  if (gate.open) return answer();
  gate.waiting++;
  gate.held.push(answer);
});

describe.concurrent('a stack killed mid-work and restarted on the same data', () => {
  /**
   * Issue 19: every job ends and every unit is accounted for, even when the stack is killed in
   * the middle of 20 concurrent renders. Restarted on the same data, its sweeper (a pass at
   * start-up, then a timer) fails every job left pending or rendering once its lease runs out,
   * and the month's units are worked out again from the jobs: renders_used equals the completed
   * renders, as GET /v1/pdf and GET /v1/usage show them.
   */
  it('a stack killed during 20 renders ends every job after restart, units equal completed renders, and an idempotent retry renders once', {
    timeout: 240_000,
  }, async ({ expect, onTestFinished }) => {
    const LEASE_SECONDS = 10;
    const SWEEP_SECONDS = 1;
    const start = await stackOnOwnData(
      {
        JOB_LEASE_SECONDS: String(LEASE_SECONDS),
        SWEEP_INTERVAL_SECONDS: String(SWEEP_SECONDS),
        // All 20 render at once (the pages mostly wait), rather than most being refused as busy.
        RENDERER_MAX_CONCURRENT_RENDERS: '24',
        PLANS: JSON.stringify({
          free: { monthlyRenders: 1000, rendersPerMinute: 1000, concurrentRenders: 50 },
        }),
      },
      onTestFinished,
    );
    let { stack } = await start();
    const sub = 'crash-account';
    const token = await stack.sessionToken(sub);
    let api = createApi(stack.baseUrl);
    // Pages that take longer and longer, so that the kill comes after some renders completed and
    // finds the others pending and rendering.
    const ok: string[] = [];
    let settled = 0;
    const answers = Array.from({ length: 20 }, (_, n) =>
      api('/v1/pdf', {
        method: 'POST',
        token,
        body: {
          html: pageDoneAfter(`render ${n}`, 200 + n * 400),
          page_load: { wait_for_selector: '#done' },
        },
      }).then(
        (a) => {
          settled++;
          if (a.status === 201) ok.push(a.json.id);
          return a;
        },
        () => {
          settled++;
          return undefined;
        },
      ),
    );
    // And one with an Idempotency-Key, whose claim dies with the stack: its page waits longer than
    // any of the 20, so that it is still rendering at the kill however a loaded machine orders the
    // renders (one that completed before the kill would be replayed after it, not rendered again).
    const keyed = { html: pageDoneAfter('keyed', 200 + 20 * 400), page_load: { wait_for_selector: '#done' } };
    const idempotent = { 'Idempotency-Key': 'crash-retry-1' };
    const first = api('/v1/pdf', { method: 'POST', token, body: keyed, headers: idempotent }).catch(
      () => undefined,
    );
    // The kill comes once a few renders answered (or once one did and a while passed, on a very
    // slow machine); never before one answered, however slow the machine.
    const sentAt = Date.now();
    while (ok.length < 3 && !(ok.length > 0 && Date.now() - sentAt > 30_000) && settled < answers.length)
      await sleep(50);
    await stack.kill();
    const completedBeforeKill = [...ok];
    expect((await first)?.status, 'the keyed render answered before the kill').not.toBe(201);
    const killedAt = Date.now();
    const answered = (await Promise.all(answers)).filter((a) => a !== undefined);

    const restart = await start();
    stack = restart.stack;
    const restartedAt = Date.now();
    api = createApi(stack.baseUrl);
    const restarted = await stack.sessionToken(sub);
    // Unresolved at most: the lease (which began before the kill) and one sweep interval, then a pass.
    const boundMs = recoveryBoundMs((LEASE_SECONDS + SWEEP_SECONDS) * 1000, restart.startMs);
    const jobs = await jobsOnceEnded(expect, api, restarted, restartedAt, boundMs);
    const resolvedMs = Date.now() - killedAt;
    const completed = jobs.filter((j: Json) => j.status === 'completed').length;
    const interrupted = jobs.filter((j: Json) => j.error?.code === 'PDF_RENDERING_INTERRUPTED').length;
    // The units come back in the same pass, or at the next one when a job was mid-write.
    let usage: Json;
    for (;;) {
      usage = (await api('/v1/usage', { token: restarted })).json;
      if (usage.renders_used === completed || Date.now() - restartedAt > boundMs) break;
      await sleep(500);
    }
    console.info(
      `crash: ${jobs.length} jobs (${completed} completed, ${interrupted} interrupted, ${answered.length} answered before the kill); ` +
        `all ended ${resolvedMs} ms after the kill (restart ${restart.startMs} ms, bound ${boundMs} ms after it); renders_used ${usage.renders_used}`,
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
    // The usage ledger (issue 39): one entry per completed job, as many as the month's units.
    expect(await billedJobIds(stack, sub)).toEqual(completedIds(jobs));
    // An idempotent retry after the crash takes the dead claim over (after its short lease, two
    // thirds of the job's) and renders once; a second retry replays it.
    const retryStarted = Date.now();
    const retry = await api('/v1/pdf', {
      method: 'POST',
      token: restarted,
      body: keyed,
      headers: idempotent,
    });
    expect(retry.status, retry.text).toBe(201);
    console.info(`idempotent retry after the crash answered in ${Date.now() - retryStarted} ms`);
    const replay = await api('/v1/pdf', {
      method: 'POST',
      token: restarted,
      body: keyed,
      headers: idempotent,
    });
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
    expect(await billedJobIds(stack, sub)).toEqual(completedIds(after));
  });

  /**
   * Issue 20: a stack killed in the middle of 20 async renders, some waiting in the render queue,
   * some rendering, some done. Restarted on the same data, the queue still holds every message it
   * acknowledged (its journal), the consumer takes them up, and the sweeper re-queues the jobs
   * whose consumer died (their lease ran out, attempts are left): every job ends completed or
   * failed, none is lost, and renders_used equals the completed renders.
   */
  it('a stack killed during 20 async renders ends every job after restart, none lost, units equal completed renders', {
    timeout: 300_000,
  }, async ({ expect, onTestFinished }) => {
    const LEASE_SECONDS = 10;
    const SWEEP_SECONDS = 1;
    const QUEUE_LEASE_SECONDS = 20;
    const RETRY_BASE_SECONDS = 1;
    const start = await stackOnOwnData(
      {
        JOB_LEASE_SECONDS: String(LEASE_SECONDS),
        SWEEP_INTERVAL_SECONDS: String(SWEEP_SECONDS),
        ASYNC_QUEUE_LEASE_SECONDS: String(QUEUE_LEASE_SECONDS),
        ASYNC_RETRY_BASE_SECONDS: String(RETRY_BASE_SECONDS),
        PLANS: JSON.stringify({
          free: { monthlyRenders: 1000, rendersPerMinute: 1000, concurrentRenders: 50 },
        }),
      },
      onTestFinished,
    );
    let { stack } = await start();
    const sub = 'async-crash-account';
    const token = await stack.sessionToken(sub);
    let api = createApi(stack.baseUrl);
    // Pages that take a moment, so that the kill finds jobs queued, rendering and completed.
    const sentAt = Date.now();
    const accepted: string[] = [];
    for (let n = 0; n < 20; n++) {
      const res = await api('/v1/pdf', {
        method: 'POST',
        token,
        body: {
          html: pageDoneAfter(`async ${n}`, 700),
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
    // This stack's time per render before the kill (a control: two render at a time).
    const paceMs = (killedAt - sentAt) / (statusesAtKill.completed ?? 1);

    const restart = await start();
    stack = restart.stack;
    const restartedAt = Date.now();
    api = createApi(stack.baseUrl);
    const restarted = await stack.sessionToken(sub);
    // The dead consumers' jobs wait for their lease (the queue's, at most) and a sweep, a re-queued
    // one for its retry delay; then 20 renders at most, two at a time.
    const boundMs = recoveryBoundMs(
      (QUEUE_LEASE_SECONDS + SWEEP_SECONDS + RETRY_BASE_SECONDS) * 1000,
      restart.startMs,
      accepted.length,
      paceMs,
    );
    const jobs = await jobsOnceEnded(expect, api, restarted, restartedAt, boundMs);
    const resolvedMs = Date.now() - killedAt;
    expect(jobs.map((j) => j.id).sort()).toEqual([...accepted].sort());
    const completed = jobs.filter((j: Json) => j.status === 'completed');
    const retried = jobs.filter((j: Json) => j.attempts > 1).length;
    const usage = (await api('/v1/usage', { token: restarted })).json;
    console.info(
      `async crash: killed with ${JSON.stringify(statusesAtKill)}; after restart ${completed.length} completed, ` +
        `${jobs.length - completed.length} failed, ${retried} rendered again; all ended ${resolvedMs} ms after the kill ` +
        `(restart ${restart.startMs} ms, pace ${Math.round(paceMs)} ms, bound ${Math.round(boundMs)} ms after the restart); ` +
        `renders_used ${usage.renders_used}`,
    );
    expect(jobs.every((j: Json) => j.status === 'completed' || j.status === 'failed')).toBe(true);
    expect(usage.renders_used).toBe(completed.length);
    expect(await billedJobIds(stack, sub)).toEqual(completedIds(jobs));
    // No PDF lost: every completed job's file is there.
    for (const job of completed) {
      const pdf = await fetch((await api(`/v1/pdf/${job.id}`, { token: restarted })).json.download_url);
      expect(pdf.status, job.id).toBe(200);
      await pdf.arrayBuffer();
    }
  });

  /**
   * Issue 20: a stack killed in the middle of a batch, then started again on the same data: the
   * queue's journal, the consumer and the sweeper (which re-queues an async job whose lease ran
   * out) finish it. Every job ends completed or failed, none stays pending, renders_used equals
   * the completed renders, and no job record or PDF that was completed before the kill is lost.
   */
  it('a stack killed mid-batch finishes the batch after restart: every job ended, units equal completed renders, nothing lost', {
    timeout: 300_000,
  }, async ({ expect, onTestFinished }) => {
    const LEASE_SECONDS = 10;
    const SWEEP_SECONDS = 1;
    const RETRY_BASE_SECONDS = 1;
    const ITEMS = 30;
    const start = await stackOnOwnData(
      {
        JOB_LEASE_SECONDS: String(LEASE_SECONDS),
        SWEEP_INTERVAL_SECONDS: String(SWEEP_SECONDS),
        ASYNC_RETRY_BASE_SECONDS: String(RETRY_BASE_SECONDS),
        PLANS: JSON.stringify({
          free: { monthlyRenders: 1000, rendersPerMinute: 1000, concurrentRenders: 2 },
        }),
      },
      onTestFinished,
    );
    let { stack } = await start();
    const sub = 'batch-crash-account';
    const token = await stack.sessionToken(sub);
    let api = createApi(stack.baseUrl);
    // Pages that wait a little, so that the kill finds jobs completed, rendering and queued.
    const sentAt = Date.now();
    const accepted = await api('/v1/batches', {
      method: 'POST',
      token,
      body: {
        html: pageDoneAfter('item {{ n }}', 400),
        page_load: { wait_for_selector: '#done' },
        items: Array.from({ length: ITEMS }, (_, n) => ({ variables: { n } })),
      },
    });
    expect(accepted.status, accepted.text).toBe(202);
    const batchId = accepted.json.id;

    // The kill comes once a few items completed (or once one did and a while passed, on a very
    // slow machine); never before one did, however slow the machine.
    let before: Json[] = [];
    for (;;) {
      before = (await api(`/v1/batches/${batchId}/jobs?limit=100`, { token })).json;
      const done = before.filter((j: Json) => j.status === 'completed').length;
      if (done >= 3 || (done > 0 && Date.now() - sentAt > 60_000)) break;
      if (
        before.length === ITEMS &&
        before.every((j: Json) => j.status === 'completed' || j.status === 'failed')
      )
        break;
      await sleep(100);
    }
    await stack.kill();
    const killedAt = Date.now();
    const completedBeforeKill: string[] = before
      .filter((j: Json) => j.status === 'completed')
      .map((j: Json) => j.id);
    expect(completedBeforeKill.length).toBeGreaterThan(0);
    expect(completedBeforeKill.length).toBeLessThan(ITEMS);
    // This stack's time per item before the kill (a control: two render at a time).
    const paceMs = (killedAt - sentAt) / completedBeforeKill.length;

    const restart = await start();
    stack = restart.stack;
    const restartedAt = Date.now();
    api = createApi(stack.baseUrl);
    const restarted = await stack.sessionToken(sub);
    // The dead consumer's jobs wait for their lease, a sweep and their retry delay; then the items
    // left, two at a time.
    const boundMs = recoveryBoundMs(
      (LEASE_SECONDS + SWEEP_SECONDS + RETRY_BASE_SECONDS) * 1000,
      restart.startMs,
      ITEMS - completedBeforeKill.length,
      paceMs,
    );
    let batch: Json;
    for (;;) {
      batch = (await api(`/v1/batches/${batchId}`, { token: restarted })).json;
      if (batch.status === 'completed') break;
      expect(Date.now() - restartedAt, JSON.stringify(batch.counts)).toBeLessThan(boundMs);
      await sleep(500);
    }
    const batchCompletedAt = Date.now();
    const jobs: Json[] = (await api(`/v1/batches/${batchId}/jobs?limit=100`, { token: restarted })).json;
    const completed = jobs.filter((j) => j.status === 'completed');
    const failed = jobs.filter((j) => j.status === 'failed');
    console.info(
      `batch crash: ${completedBeforeKill.length} completed before the kill; after restart ${completed.length} completed, ` +
        `${failed.length} failed, batch completed ${batchCompletedAt - killedAt} ms after the kill ` +
        `(restart ${restart.startMs} ms, pace ${Math.round(paceMs)} ms, bound ${Math.round(boundMs)} ms after the restart)`,
    );
    // No job record lost, none left open, the counts as the jobs say.
    expect(jobs).toHaveLength(ITEMS);
    expect(completed.length + failed.length).toBe(ITEMS);
    expect(batch.counts).toEqual({
      pending: 0,
      rendering: 0,
      completed: completed.length,
      failed: failed.length,
      cancelled: 0,
    });
    // Nothing completed is lost: every job completed before the kill still is, with its PDF.
    for (const id of completedBeforeKill) {
      const job = jobs.find((j) => j.id === id);
      expect(job?.status, id).toBe('completed');
      const pdf = await fetch(job.download_url);
      expect(pdf.status, id).toBe(200);
    }
    // Units equal renders done (the sweeper reconciles a month within a pass or two).
    const usageBoundMs = recoveryBoundMs(2 * SWEEP_SECONDS * 1000, restart.startMs);
    let usage: Json;
    for (;;) {
      usage = (await api('/v1/usage', { token: restarted })).json;
      if (usage.renders_used === completed.length || Date.now() - batchCompletedAt > usageBoundMs) break;
      await sleep(500);
    }
    expect(usage.renders_used).toBe(completed.length);
    expect(await billedJobIds(stack, sub)).toEqual(completedIds(jobs));
  });

  /**
   * Issue 20: a stack killed while webhook deliveries are pending, then started again on the same
   * data. The webhook queue is the local SQS server's, whose journal survives the kill: every
   * pending delivery is attempted after the restart until it is delivered (its receiver is back)
   * or its retry window ends (then it is marked failed); none stays pending.
   * WEBHOOK_OVERDUE_SECONDS keeps its default (15 min), so what arrives came from the journal, not
   * from the sweeper's overdue pass.
   */
  it('a stack killed with deliveries pending attempts each after restart: delivered once its receiver is back, failed once its window ends', {
    timeout: 300_000,
  }, async ({ expect, onTestFinished }) => {
    const EVENTS = 5;
    const deliveriesOf = async (api: Api, token: string, webhookId: string): Promise<Json[]> => {
      const res = await api(`/v1/webhooks/${webhookId}/deliveries?limit=100`, { token });
      expect(res.status, res.text).toBe(200);
      return res.json;
    };
    const start = await stackOnOwnData(webhooksEnv, onTestFinished);
    let { stack } = await start();
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
    const sentAt = Date.now();
    // Each has failed once or more, and waits for its next attempt (in the queue, delayed); after
    // the window that can no longer be.
    for (;;) {
      const all = [
        ...(await deliveriesOf(api, token, down.id)),
        ...(await deliveriesOf(api, token, failing.id)),
      ];
      if (all.length === EVENTS + 1 && all.every((d) => d.status === 'pending' && d.attempts.length >= 1))
        break;
      expect(Date.now() - sentAt, JSON.stringify(all)).toBeLessThan(WINDOW_SECONDS * 1000);
      await sleep(100);
    }
    await stack.kill();
    const killedAt = Date.now();
    receiver.setDown(false);
    const upAt = Date.now();

    const restart = await start();
    stack = restart.stack;
    const restartedAt = Date.now();
    api = createApi(stack.baseUrl);
    token = await stack.sessionToken(sub);
    // Every attempt is due within the window, which opened before the kill.
    const boundMs = recoveryBoundMs(WINDOW_SECONDS * 1000, restart.startMs);
    let downDeliveries: Json[] = [];
    let failingDeliveries: Json[] = [];
    for (;;) {
      downDeliveries = await deliveriesOf(api, token, down.id);
      failingDeliveries = await deliveriesOf(api, token, failing.id);
      if ([...downDeliveries, ...failingDeliveries].every((d) => d.status !== 'pending')) break;
      expect(Date.now() - restartedAt, JSON.stringify(failingDeliveries)).toBeLessThan(boundMs);
      await sleep(250);
    }
    console.info(
      `webhooks crash: every delivery settled ${Date.now() - killedAt} ms after the kill ` +
        `(restart ${restart.startMs} ms, bound ${boundMs} ms after it; ` +
        `attempts: ${downDeliveries.map((d) => d.attempts.length).join(', ')}; failing: ${failingDeliveries[0]?.attempts.length})`,
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
    // The one whose receiver never answers 2xx was tried until its window ended, then failed: its
    // last attempt started within the window, or at once after the restart had the restart outlasted
    // it (give or take 5 s, and the restart's own time for a loaded machine).
    expect(failingDeliveries).toHaveLength(1);
    const [failed] = failingDeliveries as [Json];
    expect(failed).toMatchObject({ status: 'failed', next_attempt_at: null });
    const firstAttemptAt = Date.parse(failed.attempts[0].attempted_at);
    const lastAttemptAt = Date.parse(failed.attempts[failed.attempts.length - 1].attempted_at);
    expect(lastAttemptAt).toBeGreaterThan(killedAt);
    expect(lastAttemptAt - firstAttemptAt).toBeLessThanOrEqual(
      Math.max(WINDOW_SECONDS * 1000, restartedAt - firstAttemptAt) + 5_000 + restart.startMs,
    );
  });

  /**
   * Issue 37: slots follow their owners. A stack killed while its plan's renders all ran knows, at
   * its restart, that every render it held was its previous process's: its pass at start frees
   * their concurrent slots at once, not when their leases run out (60 s here, and no pass on the
   * timer for 10 minutes). Retries of the lost idempotent renders take their dead claims over
   * (after the claims' own lease, 40 s; until then the service answers 503 SERVICE_BUSY with
   * Retry-After) and render; none is refused with CONCURRENCY_LIMIT_EXCEEDED, which, before, every
   * retry was from the claims' takeover to the slots' leases' end and the next pass.
   */
  it('a stack killed with all its plan’s renders running frees their slots at restart: retries of the lost idempotent renders render', {
    timeout: 240_000,
  }, async ({ expect, onTestFinished }) => {
    const CONCURRENT = 3;
    const start = await stackOnOwnData(
      {
        ...gateHost.env,
        JOB_LEASE_SECONDS: '60',
        SWEEP_INTERVAL_SECONDS: '600',
        PLANS: JSON.stringify({
          free: { monthlyRenders: 100, rendersPerMinute: 100, concurrentRenders: CONCURRENT },
        }),
      },
      onTestFinished,
    );
    let { stack } = await start();
    const sub = 'slots-account';
    const token = await stack.sessionToken(sub);
    let api = createApi(stack.baseUrl);
    const lost = Array.from({ length: CONCURRENT }, (_, n) => ({
      body: { html: `<link rel="stylesheet" href="http://${gateHost.hostPort}/gate/${n}"><p>lost ${n}</p>` },
      headers: { 'Idempotency-Key': `lost-${n}` },
    }));
    const answers = lost.map(({ body, headers }) =>
      api('/v1/pdf', { method: 'POST', token, body, headers }).catch(() => undefined),
    );
    // Every slot held: each page waits at the gate.
    const sentAt = Date.now();
    while (gate.waiting < CONCURRENT) {
      expect(Date.now() - sentAt, 'the renders reached the gate').toBeLessThan(60_000);
      await sleep(100);
    }
    const refused = await api('/v1/pdf', { method: 'POST', token, body: { html: '<p>one more</p>' } });
    expect(refused.json.error?.code, refused.text).toBe('CONCURRENCY_LIMIT_EXCEEDED');
    await stack.kill();
    expect((await Promise.all(answers)).every((a) => a === undefined || a.status !== 201)).toBe(true);
    gate.open = true;
    for (const answer of gate.held.splice(0)) answer();

    const restart = await start();
    stack = restart.stack;
    api = createApi(stack.baseUrl);
    const restarted = await stack.sessionToken(sub);
    // Each retry as a client sends it: again after Retry-After while the service says it is busy
    // (a twin waits for a dead claim only so long; the claim's own lease is 40 s here). Every
    // answer is recorded: none may be CONCURRENCY_LIMIT_EXCEEDED.
    const retriedAt = Date.now();
    const seen: string[] = [];
    const retries = await Promise.all(
      lost.map(async ({ body, headers }) => {
        for (;;) {
          const res = await api('/v1/pdf', { method: 'POST', token: restarted, body, headers });
          seen.push(`${res.status} ${res.json.error?.code ?? ''}`.trim());
          if (res.status !== 503 || Date.now() - retriedAt > 120_000) return res;
          await sleep(Number(res.headers.get('retry-after') ?? 2) * 1000);
        }
      }),
    );
    console.info(
      `slots at restart: ${seen.join(', ')}; all answered within ${Date.now() - retriedAt} ms (restart ${restart.startMs} ms)`,
    );
    expect(seen.filter((s) => s.includes('CONCURRENCY_LIMIT_EXCEEDED'))).toEqual([]);
    for (const retry of retries) expect(retry.status, retry.text).toBe(201);
    const jobs: Json[] = (await api('/v1/pdf?limit=100', { token: restarted })).json;
    expect(jobs.filter((j) => j.error?.code === 'PDF_RENDERING_INTERRUPTED')).toHaveLength(CONCURRENT);
    expect((await api('/v1/usage', { token: restarted })).json.renders_used).toBe(CONCURRENT);
  });
});
