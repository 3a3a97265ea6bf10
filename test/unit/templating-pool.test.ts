/**
 * The renderer's templating pool without Chromium: the real worker (templating-worker.ts, started
 * from source through tsx as the local stack starts it) for the engine's answers and reuse, and a
 * stand-in worker that misbehaves on request (fixtures/templating-test-worker.mjs) for what the
 * pool does from outside: the time limit, memory limit, crashes, the empty environment, growth.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  createTemplatingPool,
  defaultWorkerScript,
  type TemplatingPool,
  workerOptions,
} from '../../functions/renderer/templating-pool.js';
import { controlMs, cpuPace, describeBound, type PaceBound, paceBound, since } from '../helpers/timing.js';

const MiB = 1024 * 1024;
const limits = { maxOutputBytes: 10 * MiB };
const stub = new URL('./fixtures/templating-test-worker.mjs', import.meta.url);

const pools: TemplatingPool[] = [];
const pool = (options: Parameters<typeof createTemplatingPool>[0] = {}): TemplatingPool => {
  const created = createTemplatingPool(options);
  pools.push(created);
  return created;
};
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});

describe('with the real worker', () => {
  const real = pool();

  it('starts from TypeScript source here (there is no bundled worker beside the source)', () => {
    expect(defaultWorkerScript().pathname).toMatch(/functions\/renderer\/templating-worker-tsx\.mjs$/);
  });

  it('renders, escaping as the engine does, and reuses one warm worker for sequential renders', async () => {
    const first = await real.render('<p>{{ who }}</p>', { who: '<Ada & Co>' }, limits);
    expect(first).toEqual({ ok: true, html: '<p>&lt;Ada &amp; Co&gt;</p>' });
    const [thread] = real.stats().threadIds;
    for (let i = 0; i < 20; i++) {
      expect(await real.render('{{ n * 2 }}', { n: i }, limits)).toEqual({ ok: true, html: String(i * 2) });
    }
    expect(real.stats()).toMatchObject({ workers: 1, busy: 0, queued: 0, threadIds: [thread] });
  });

  it('answers runtime and undefined errors with the engine’s message, line and name', async () => {
    const division = await real.render('<p>\n{{ 1 / 0 }}</p>', {}, limits);
    expect(division).toMatchObject({ ok: false, code: 'INVALID_HTML_TEMPLATE', details: { line: 2 } });
    if (division.ok) return;
    expect(division.message).toMatch(/division by zero/i);

    const attribute = await real.render('{{ a.b }}', { a: {} }, limits);
    expect(attribute).toMatchObject({ ok: false, code: 'INVALID_HTML_TEMPLATE', details: { line: 1 } });
    if (attribute.ok) return;
    expect(attribute.message).toMatch(/\bb\b/);

    const variable = await real.render('<p>\n\n{{ missing }}</p>', {}, limits);
    expect(variable).toMatchObject({
      ok: false,
      code: 'INVALID_HTML_TEMPLATE',
      message: "Variable 'missing' is undefined (line 3)",
      details: { line: 3, name: 'missing' },
    });
  });

  it('answers HTML_CONTENT_TOO_LARGE when the output passes the limit', async () => {
    const res = await real.render(
      '{% for i in range(100) %}{{ row }}{% endfor %}',
      { row: 'x'.repeat(100) },
      {
        maxOutputBytes: 5000,
      },
    );
    expect(res).toEqual({
      ok: false,
      code: 'HTML_CONTENT_TOO_LARGE',
      message: 'The HTML is over 5000 bytes after templating',
    });
  });

  it('stops a template at the time limit, naming it', async () => {
    const quick = pool({ timeLimitMs: 300 });
    // The controls: a template that needs no time, through the same pool (its worker started),
    // and the machine's pace for CPU work (the limit is the worker's CPU time).
    const control = await controlMs(() => quick.render('ok', {}, limits));
    const pace = cpuPace();
    const started = performance.now();
    const res = await quick.render(
      '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}',
      {},
      limits,
    );
    expect(res).toMatchObject({
      ok: false,
      code: 'INVALID_HTML_TEMPLATE',
      message: 'Templating exceeded its 300 ms limit',
    });
    const ms = since(started);
    const bound: PaceBound = { expectedMs: 300 * pace, slackMs: 9_700, controlMs: control, factor: 50 };
    expect(ms, describeBound(ms, bound)).toBeLessThan(paceBound(bound));
    expect(await quick.render('ok', {}, limits)).toEqual({ ok: true, html: 'ok' });
  });

  it('shows a template nothing of the process environment', async () => {
    process.env.TEMPLATING_POOL_TEST_SECRET = 'hunter2';
    try {
      const res = await real.render('{{ TEMPLATING_POOL_TEST_SECRET }}', {}, limits);
      expect(res).toMatchObject({ ok: false, code: 'INVALID_HTML_TEMPLATE' });
      expect(JSON.stringify(res)).not.toContain('hunter2');
    } finally {
      delete process.env.TEMPLATING_POOL_TEST_SECRET;
    }
  });
});

describe('from outside the worker', () => {
  afterEach(() => {
    delete process.env.TEMPLATING_POOL_TEST_SECRET;
  });

  it('starts workers with an empty environment, no Node flags and memory limits', async () => {
    const options = workerOptions();
    expect(options.env).toEqual({});
    expect(options.execArgv).toEqual([]);
    expect(options.resourceLimits?.maxOldGenerationSizeMb).toBeGreaterThan(0);

    process.env.TEMPLATING_POOL_TEST_SECRET = 'hunter2';
    const res = await pool({ script: stub }).render('env', {}, limits);
    expect(res).toEqual({ ok: true, html: '{}' });
  });

  it('terminates a worker that outlives the limit, answers naming it, and carries on with a fresh one', async () => {
    const p = pool({ script: stub, timeLimitMs: 200, marginMs: 100 });
    // The controls: an answer at once from the same worker, and the machine's pace for CPU work
    // (the limit is the worker's CPU time: at load 30 on 2 cores, 300 ms of it took 5 s).
    const control = await controlMs(() => p.render('thread', {}, limits));
    const pace = cpuPace();
    const before = await p.render('thread', {}, limits);
    const started = performance.now();
    const spun = await p.render('spin', {}, limits);
    const elapsed = performance.now() - started;
    expect(spun).toEqual({
      ok: false,
      code: 'INVALID_HTML_TEMPLATE',
      message: 'Templating exceeded its 200 ms limit',
    });
    // Not before the limit and its margin (a lower bound a busy machine cannot break), and not
    // long after.
    expect(elapsed).toBeGreaterThanOrEqual(290);
    const bound: PaceBound = { expectedMs: 300 * pace, slackMs: 4_700, controlMs: control, factor: 50 };
    expect(elapsed, describeBound(elapsed, bound)).toBeLessThan(paceBound(bound));
    const after = await p.render('thread', {}, limits);
    expect(after.ok && before.ok && after.html !== before.html).toBe(true);
    expect(p.stats().workers).toBe(1);
  });

  it('counts the worker’s CPU time, not the wall clock: a worker the machine is too busy to run is not blamed', async () => {
    const p = pool({ script: stub, timeLimitMs: 200, marginMs: 100 });
    const started = performance.now();
    const idle = await p.render('idle', {}, limits);
    expect(performance.now() - started).toBeGreaterThan(2 * 200 + 100);
    expect(idle).toEqual({ ok: true, html: 'idle' });
    expect(p.stats().workers).toBe(1);
  });

  it('answers a worker that runs out of memory, and starts a fresh one', async () => {
    const p = pool({
      script: stub,
      timeLimitMs: 20_000,
      resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8 },
    });
    const res = await p.render('oom', {}, limits);
    expect(res).toEqual({
      ok: false,
      code: 'INVALID_HTML_TEMPLATE',
      message: 'Templating ran out of memory',
    });
    expect(await p.render('echo', { a: 1 }, limits)).toEqual({ ok: true, html: '{"a":1}' });
  });

  it('answers a worker that crashes or exits as a failed render, and starts a fresh one', async () => {
    const p = pool({ script: stub });
    for (const command of ['exit', 'throw']) {
      const res = await p.render(command, {}, limits);
      expect(res).toEqual({
        ok: false,
        code: 'PDF_RENDERING_FAILED',
        message: 'Templating failed in the renderer.',
      });
      expect(await p.render('echo', { command }, limits)).toEqual({
        ok: true,
        html: JSON.stringify({ command }),
      });
    }
  });

  it('fails the render when a worker cannot start, and does not start workers in a loop', async () => {
    const p = pool({ script: new URL('data:text/javascript,throw new Error("no engine here")') });
    const res = await p.render('echo', {}, limits);
    expect(res).toMatchObject({ ok: false, code: 'PDF_RENDERING_FAILED' });
    await new Promise((r) => setTimeout(r, 200));
    expect(p.stats()).toMatchObject({ workers: 0, queued: 0 });
  });

  it('grows on demand up to its cap, so a runaway template does not hold up others; queues beyond', async () => {
    const p = pool({ script: stub, maxWorkers: 2, timeLimitMs: 1500, marginMs: 0 });
    const spinning = p.render('spin', {}, limits);
    let spinDone = false;
    void spinning.then(() => {
      spinDone = true;
    });
    // Another render finishes while the first is still spinning: it got a worker of its own.
    expect(await p.render('echo', { n: 1 }, limits)).toEqual({ ok: true, html: '{"n":1}' });
    expect(spinDone).toBe(false);
    expect(p.stats().workers).toBe(2);

    // Both workers busy: the third waits for one of them.
    const second = p.render('spin', {}, limits);
    let secondDone = false;
    void second.then(() => {
      secondDone = true;
    });
    const queued = p.render('echo', { n: 2 }, limits);
    expect(p.stats()).toMatchObject({ workers: 2, busy: 2, queued: 1 });
    expect(await queued).toEqual({ ok: true, html: '{"n":2}' });
    // It ran once a spinning render gave its worker up: which one first is the CPU's to say (the
    // limit is each thread's CPU time, and a busy machine shares it unevenly).
    expect(spinDone || secondDone).toBe(true);
    expect(await spinning).toMatchObject({ code: 'INVALID_HTML_TEMPLATE' });
    expect(await second).toMatchObject({ code: 'INVALID_HTML_TEMPLATE' });
  });

  it('fails renders in flight on close, and starts again afterwards', async () => {
    const p = pool({ script: stub, timeLimitMs: 20_000 });
    const spinning = p.render('spin', {}, limits);
    await new Promise((r) => setTimeout(r, 100));
    await p.close();
    expect(await spinning).toMatchObject({ ok: false, code: 'PDF_RENDERING_FAILED' });
    expect(p.stats().workers).toBe(0);
    expect(await p.render('echo', {}, limits)).toEqual({ ok: true, html: '{}' });
  });
});
