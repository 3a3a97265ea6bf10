/**
 * Every page-load wait works in every session state the renderer can hand a render (issue 32).
 *
 * The README's own example (`"wait_until": "networkidle0"`) answered 504 whenever it came a few
 * seconds after the last render: Chromium's network-idle event comes once per document load, and a
 * document written into a page that had already gone idle (a spare waiting for its render) never
 * got it (functions/renderer/network-idle.ts). Back-to-back tests never saw it. So this file runs
 * each wait (`load`, `domcontentloaded`, `networkidle0`, `networkidle2`, and `wait_for_selector`)
 * on each kind of page (no subresources, images, a fetch made after load) against sessions with
 * a history: the first renders after the stack started, a spare idle for 0 s and for 3 s (past
 * Chromium's 0.5 s quiet window and 2 s watchdog), a spare whose renderer process was killed, the
 * session after a page flood, and with spare sessions off; sync renders, async renders and batch
 * items. Every cell must complete with 201 (or its job `completed`). A spare idle for longer than
 * any timer of the service's, and a renderer frozen as Lambda freezes it, are in
 * page-load-long-idle.test.ts and lambda-sandbox.test.ts.
 *
 * Each wait has a stack of its own (a child process, spares on, as `npm start` and the renderer
 * Lambda run), so that the waits' idle pauses run side by side; one more stack has spares off.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForBatch, waitForJob } from '../helpers/async-jobs.js';
import { type StackProcess, startStackProcess } from '../helpers/child-stack.js';
import { type Api, createApi } from '../helpers/local-stack.js';
import {
  KINDS,
  type Kind,
  pageLoadOf,
  pageOf,
  seesLateFetch,
  servePageRequests,
  WAITS,
  type Wait,
} from '../helpers/page-load-cells.js';
import { readPdf } from '../helpers/pdf.js';
import { descendantsOf } from '../helpers/process-tree.js';
import { useReachableHost } from '../helpers/reachable-host.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Longer than Chromium's network-quiet window (0.5 s) and its idleness watchdog (2 s). */
const IDLE_MS = 3_000;

const host = useReachableHost(servePageRequests);

/** Renders stay within the plan: every cell and flood of a stack on one account. */
const PLANS = JSON.stringify({
  free: { monthlyRenders: 100_000, rendersPerMinute: 100_000, concurrentRenders: 10 },
});

interface Stack {
  readonly process: StackProcess;
  readonly api: Api;
  readonly token: string;
}

const startStack = async (spareSessions: 0 | 1): Promise<Stack> => {
  const process = await startStackProcess({ ...host.env, PLANS }, 120_000, {}, undefined, {
    rendererSpareSessions: spareSessions,
  });
  return { process, api: createApi(process.baseUrl), token: await process.sessionToken() };
};

/** One cell: a sync render of `kind` with `wait`; expects 201 and, where the wait sees it, the fetch's text. */
const renderCell = async (stack: Stack, wait: Wait, kind: Kind, state: string): Promise<void> => {
  const cell = `${state}-${wait}-${kind}`;
  const res = await stack.api('/v1/pdf', {
    method: 'POST',
    token: stack.token,
    body: { html: pageOf(kind, host.hostPort, cell), variables: { cell }, page_load: pageLoadOf(wait) },
  });
  expect(res.status, `${cell}: ${res.text}`).toBe(201);
  expect(res.json.status).toBe('completed');
  if (kind === 'late-fetch' && seesLateFetch(wait)) {
    const pdf = await fetch(res.json.download_url);
    expect((await readPdf(new Uint8Array(await pdf.arrayBuffer()))).text, cell).toContain('late: fetched');
  }
};

/** Kills every Chromium renderer process of the stack's browser: the spare's page crashes. */
const killRenderers = (stack: Stack): number => {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] ?? '' }));
  const renderers = descendantsOf(stack.process.pid, rows).filter((r) => r.args.includes('--type=renderer'));
  for (const { pid } of renderers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  return renderers.length;
};

/** A page that floods the renderer with console messages until its cap fails it. */
const flood = async (stack: Stack): Promise<void> => {
  const res = await stack.api('/v1/pdf', {
    method: 'POST',
    token: stack.token,
    body: {
      html: '<script>for (let i = 0; ; i++) console.log("flood " + i);</script>',
      page_load: { timeout_ms: 3_000 },
    },
  });
  // The flood fails (its cap, or its deadline): it is the session after it that matters here.
  expect(res.status, res.text).toBeGreaterThanOrEqual(500);
};

const stacks = new Map<Wait | 'spares-off', Stack>();
const stackFor = (key: Wait | 'spares-off'): Stack => {
  const stack = stacks.get(key);
  if (!stack) throw new Error(`no stack for ${key}`);
  return stack;
};

beforeAll(async () => {
  const keys = [...WAITS, 'spares-off'] as const;
  const started = await Promise.all(keys.map((key) => startStack(key === 'spares-off' ? 0 : 1)));
  for (const [i, key] of keys.entries()) stacks.set(key, started[i] as Stack);
}, 240_000);

afterAll(async () => {
  await Promise.all([...stacks.values()].map((s) => s.process.stop()));
});

/**
 * The states a wait's stack goes through, in order, each cell after its own setup. Run for every
 * wait side by side (describe.concurrent), each on its own stack.
 */
describe.concurrent('sync renders: each wait × each page × each session state', () => {
  it.each(WAITS)(
    '%s',
    async (wait) => {
      const stack = stackFor(wait);
      // The first renders after the stack started: all three at once (one takes the spare opened
      // at start, the others open theirs).
      await Promise.all(KINDS.map((kind) => renderCell(stack, wait, kind, 'first')));
      // A spare idle for 0 s: back to back.
      for (const kind of KINDS) await renderCell(stack, wait, kind, 'idle0');
      // A spare idle for 3 s.
      for (const kind of KINDS) {
        await sleep(IDLE_MS);
        await renderCell(stack, wait, kind, 'idle3');
      }
      // A spare whose renderer process was killed while it waited.
      for (const kind of KINDS) {
        await sleep(300);
        expect(killRenderers(stack)).toBeGreaterThan(0);
        await renderCell(stack, wait, kind, 'crashed');
      }
      // The session after a page flood.
      for (const kind of KINDS) {
        await flood(stack);
        await renderCell(stack, wait, kind, 'flooded');
      }
    },
    180_000,
  );

  it('spares off: every wait on every page opens its page at its render, back to back and after 3 s idle', async () => {
    const stack = stackFor('spares-off');
    for (const kind of KINDS) {
      for (const wait of WAITS) await renderCell(stack, wait, kind, 'nospare');
      await sleep(IDLE_MS);
      for (const wait of WAITS) await renderCell(stack, wait, kind, 'nospare-idle3');
    }
  }, 180_000);
});

/** Submits an async render of `kind` with `wait` and expects its job to complete. */
const asyncCell = async (stack: Stack, wait: Wait, kind: Kind, state: string): Promise<void> => {
  const cell = `${state}-${wait}-${kind}`;
  const res = await stack.api('/v1/pdf', {
    method: 'POST',
    token: stack.token,
    body: {
      html: pageOf(kind, host.hostPort, cell),
      variables: { cell },
      page_load: pageLoadOf(wait),
      async: true,
    },
  });
  expect(res.status, `${cell}: ${res.text}`).toBe(202);
  const job = await waitForJob(stack.api, stack.token, res.json.id, 60_000);
  expect(job.status, `${cell}: ${JSON.stringify(job.error)}`).toBe('completed');
};

/** A batch of two items of `kind` with `wait`; expects both jobs completed. */
const batchCell = async (stack: Stack, wait: Wait, kind: Kind, state: string): Promise<void> => {
  const cell = `${state}-${wait}-${kind}`;
  const res = await stack.api('/v1/batches', {
    method: 'POST',
    token: stack.token,
    body: {
      html: pageOf(kind, host.hostPort, cell),
      page_load: pageLoadOf(wait),
      items: [{ variables: { cell: `${cell}-1` } }, { variables: { cell: `${cell}-2` } }],
    },
  });
  expect(res.status, `${cell}: ${res.text}`).toBe(202);
  const batch = await waitForBatch(stack.api, stack.token, res.json.id, 90_000);
  expect(batch.counts, `${cell}: ${JSON.stringify(batch)}`).toMatchObject({ completed: 2, failed: 0 });
};

describe.concurrent('async renders and batch items after the renderer was idle', () => {
  it.each(WAITS)(
    '%s',
    async (wait) => {
      const stack = stackFor(wait);
      for (const kind of KINDS) {
        await sleep(IDLE_MS);
        await asyncCell(stack, wait, kind, 'async-idle3');
        await sleep(IDLE_MS);
        await batchCell(stack, wait, kind, 'batch-idle3');
      }
    },
    240_000,
  );
});
