/**
 * The renderer's templating pool at its time limit, in the heavy tier (vitest.config.ts): runaway
 * templates spin a core on purpose until the limit (the worker's CPU time) ends them, and the
 * tests time that against a same-run control. The real worker (templating-worker.ts, from source
 * through tsx as the local stack starts it) for the engine's loop, and the stand-in worker
 * (fixtures/templating-test-worker.mjs) for the pool from outside. The rest of the pool:
 * templating-pool.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { limits, stub, useTemplatingPools } from '../helpers/templating-pools.js';
import { controlMs, cpuPace, describeBound, type PaceBound, paceBound, since } from '../helpers/timing.js';

const pool = useTemplatingPools();

describe('with the real worker', () => {
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
});

describe('from outside the worker', () => {
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
});
