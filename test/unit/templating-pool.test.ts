/**
 * The renderer's templating pool without Chromium: the real worker (templating-worker.ts, started
 * from source through tsx as the local stack starts it) for the engine's answers and reuse, and a
 * stand-in worker that misbehaves on request (fixtures/templating-test-worker.mjs) for what the
 * pool does from outside: the memory limit, crashes, the empty environment, closing. The time limit
 * and growth past a runaway template spin a core on purpose and time it: templating-pool-limits
 * (the heavy tier).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defaultWorkerScript, workerOptions } from '../../functions/renderer/templating-pool.js';
import { limits, stub, useTemplatingPools } from '../helpers/templating-pools.js';

const pool = useTemplatingPools();

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
