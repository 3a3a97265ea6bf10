/**
 * The renderer's process models (RENDERER_PROCESS_MODEL) against the real Chromium, in-process:
 * multi-process (a browser context per render), single-process (renders take turns in the
 * default context, wiped between them), and auto, proved at launch, falling back to
 * single-process when multi-process cannot open a page. Multi-process is made to fail the way
 * reports from Lambda describe (its renderer processes cannot start, newPage never returns):
 * through CHROME_EXECUTABLE_PATH, a wrapper that gives a multi-process launch
 * --renderer-cmd-prefix=/bin/false. A single-process launch is left alone, its renderer runs in
 * the browser process.
 *
 * In every model, account A's page stores what a page can (cookie, localStorage, IndexedDB, Cache
 * Storage, a service worker, HTTP cache entries) through a frame of a host the test allows
 * (RENDERER_EGRESS_ALLOW_HOSTS), and account B's render, next, finds none of it.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import chromium from '@sparticuz/chromium';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RendererConfig } from '../../functions/core/config.js';
import type { RenderRequest, RenderResult } from '../../functions/renderer/contract.js';
import type { RendererInstance, RendererOptions } from '../../functions/renderer/renderer.js';
import { readPdf } from '../helpers/pdf.js';
import { captureOutput } from '../helpers/process-output.js';
import { renderRequest, startUploadSink, type UploadSink } from '../helpers/render-fixtures.js';
import { FOUND_NOTHING, startTenantFixture, type TenantFixture, WROTE } from '../helpers/tenant-fixture.js';
import { controlMs, describeBound, type PaceBound, paceBound, since } from '../helpers/timing.js';

// Before the renderer's modules load: its INFO lines and its metrics are written, as in Lambda.
process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
process.env.POWERTOOLS_DEV = 'false';

/** The renderer's JSON lines (INFO to stdout, WARN to stderr) are kept for the assertions, and out of the test output. */
const output = captureOutput({ swallowJson: true });

/** The renderer's log lines and metrics written so far, parsed. */
const logged = (): Record<string, unknown>[] => output.json();

let sink: UploadSink;
let fixture: TenantFixture;
let baseConfig: RendererConfig;
let workDir = '';
/** CHROME_EXECUTABLE_PATH for a Chromium whose multi-process renderers cannot start. */
let brokenMultiProcess = '';
/** CHROME_EXECUTABLE_PATH for a Chromium whose multi-process renderers start but never answer. */
let hangingMultiProcess = '';
let inProcess: typeof import('../../functions/renderer/in-process.js');
let renderer: RendererInstance | undefined;
let browserModule: typeof import('../../functions/renderer/browser.js');

beforeAll(async () => {
  sink = await startUploadSink();
  fixture = await startTenantFixture();
  const { readRendererConfig } = await import('../../functions/core/config.js');
  baseConfig = readRendererConfig({ ...process.env, RENDERER_EGRESS_ALLOW_HOSTS: fixture.hostPort });
  inProcess = await import('../../functions/renderer/in-process.js');
  browserModule = await import('../../functions/renderer/browser.js');

  workDir = await mkdtemp(join(tmpdir(), 'renderer-isolation-'));
  const real = baseConfig.chromeExecutablePath ?? (await chromium.executablePath());
  // Chromium runs `--renderer-cmd-prefix` in front of each renderer's command line; a
  // single-process launch has no renderer process to start.
  const wrapper = async (name: string, prefix: string): Promise<string> => {
    const file = join(workDir, name);
    await writeFile(
      file,
      [
        '#!/bin/sh',
        'case " $* " in',
        `  *" --single-process "*) exec ${JSON.stringify(real)} "$@" ;;`,
        `  *) exec ${JSON.stringify(real)} --renderer-cmd-prefix=${prefix} "$@" ;;`,
        'esac',
        '',
      ].join('\n'),
    );
    await chmod(file, 0o755);
    return file;
  };
  brokenMultiProcess = await wrapper('chromium-without-renderers', '/bin/false');
  const hang = join(workDir, 'renderer-that-hangs');
  await writeFile(hang, '#!/bin/sh\nexec sleep 15\n');
  await chmod(hang, 0o755);
  hangingMultiProcess = await wrapper('chromium-with-hanging-renderers', hang);
});

afterAll(async () => {
  await renderer?.close();
  sink?.close();
  fixture?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
  output.stop();
});

/** Starts the renderer afresh with `overrides` (the browser and its process model decided anew). */
const useRenderer = async (
  overrides: Partial<RendererConfig>,
  options: RendererOptions = {},
): Promise<void> => {
  await renderer?.close();
  renderer = inProcess.createInProcessRenderer({ ...baseConfig, ...overrides }, options);
};

/** The renderer useRenderer started last. */
const current = (): RendererInstance => {
  if (!renderer) throw new Error('useRenderer first');
  return renderer;
};

let uploadCount = 0;

const request = (jobId: string, html: string, timeoutMs = 10_000): RenderRequest =>
  renderRequest(`${sink.baseUrl}/job-${++uploadCount}.pdf`, html, {
    jobId,
    pageLoad: { timeoutMs, waitForSelector: '#done' },
  });

const render = async (jobId: string, html: string): Promise<{ result: RenderResult; text: string }> => {
  const req = request(jobId, html);
  const result = await current().render(req);
  const stored = sink.uploadOf(req.upload.url)?.body;
  // One line of text, as PDF readers break lines where the layout did.
  return { result, text: stored ? (await readPdf(stored)).text.replace(/\s+/g, ' ') : '' };
};

const lastModelReport = (): Record<string, unknown> | undefined =>
  logged()
    .filter((l) => l.message === 'browser-process-model')
    .at(-1);

describe.each([
  {
    name: 'multi',
    model: 'multi' as const,
    overrides: (): Partial<RendererConfig> => ({ processModel: 'multi' }),
  },
  {
    name: 'single',
    model: 'single' as const,
    overrides: (): Partial<RendererConfig> => ({ processModel: 'single' }),
  },
  {
    name: 'auto, where multi-process cannot start a renderer',
    model: 'single' as const,
    overrides: (): Partial<RendererConfig> => ({
      processModel: 'auto',
      chromeExecutablePath: brokenMultiProcess,
    }),
  },
])('process model: $name', ({ model, overrides }) => {
  beforeAll(async () => {
    await useRenderer(overrides());
  });

  it(`renders, and runs ${model}-process`, async () => {
    const { result, text } = await render('job_hello', '<p>hello</p><p id="done"></p>');
    expect(result).toMatchObject({ ok: true, pageCount: 1 });
    expect(text).toContain('hello');
    expect(current().browser.processModel()).toBe(model);
    const args = (await current().browser.getBrowser()).process()?.spawnargs ?? [];
    expect(args.includes('--single-process')).toBe(model === 'single');
    expect(lastModelReport()).toMatchObject({ processModel: model });
  });

  it("gives account B's render nothing that account A's page stored", async () => {
    const { seen, hits } = fixture;
    const before = { ...hits };
    seen.length = 0;
    const a = await render('job_account_a', fixture.page('/write'));
    expect(a.result).toMatchObject({ ok: true });
    // What A's page could store, it did (so B finding nothing means something), and its cookie
    // went out with its next request.
    expect(a.text).toContain(WROTE);
    expect(seen).toContain('/cached cookie=tenant=a');

    seen.length = 0;
    const b = await render('job_account_b', fixture.page('/read'));
    expect(b.result).toMatchObject({ ok: true });
    expect(b.text).toContain(FOUND_NOTHING);
    // B's requests all reached the host (nothing came from a cache), none with A's cookie.
    expect(hits).toEqual({ cached: before.cached + 2, image: before.image + 2 });
    expect(seen).toEqual(expect.arrayContaining(['/read cookie=', '/cached cookie=', '/img.gif cookie=']));
    expect(seen.filter((l) => l.includes('tenant='))).toEqual([]);
  });

  it('serves concurrent renders, each with its own content', async () => {
    const results = await Promise.all(
      [1, 2, 3].map((n) => render(`job_concurrent_${n}`, `<h1>Concurrent ${n}</h1><p id="done"></p>`)),
    );
    results.forEach(({ result, text }, i) => {
      expect(result).toMatchObject({ ok: true });
      expect(text).toContain(`Concurrent ${i + 1}`);
      for (const other of [1, 2, 3].filter((n) => n !== i + 1))
        expect(text).not.toContain(`Concurrent ${other}`);
    });
  });

  it('times out a page that never yields, and serves the next render', async () => {
    // The control: an ordinary render of the same renderer.
    const control = await controlMs(async () => {
      expect((await render('job_control_spin', '<p>control</p><p id="done"></p>')).result).toMatchObject({
        ok: true,
      });
    }, 1);
    const started = performance.now();
    const result = await current().render(request('job_spin', '<script>while (true) {}</script>', 1000));
    expect(result).toMatchObject({ ok: false, code: 'PDF_RENDERING_TIMEOUT' });
    // The 1 s budget and the page's close, with room for a load of 8 on 2 cores (4 s), or for 10
    // ordinary renders of this run: a page that is not timed out never answers.
    const ms = since(started);
    const bound: PaceBound = { expectedMs: 1_000, slackMs: 4_000, controlMs: control, factor: 10 };
    expect(ms, describeBound(ms, bound)).toBeLessThan(paceBound(bound));
    const after = await render('job_after_spin', '<p>after the spin</p><p id="done"></p>');
    expect(after.result).toMatchObject({ ok: true });
    expect(after.text).toContain('after the spin');
  });
});

describe('auto', () => {
  it('keeps multi-process where it works, and says so in a log line and a metric', async () => {
    output.clear();
    await useRenderer({ processModel: 'auto' });
    const { result } = await render('job_auto', '<p>auto</p><p id="done"></p>');
    expect(result).toMatchObject({ ok: true });
    expect(current().browser.processModel()).toBe('multi');
    expect(lastModelReport()).toMatchObject({
      processModel: 'multi',
      setting: 'auto',
      level: 'INFO',
      probeMs: expect.any(Number),
    });
    // The embedded metric (CloudWatch EMF) with the model as its dimension.
    const metric = logged().find((l) => 'BrowserProcessModel' in l);
    expect(metric).toMatchObject({ BrowserProcessModel: 1, ProcessModel: 'multi' });
    expect(logged().some((l) => l.message === 'browser-multi-process-failed')).toBe(false);
  });

  it('falls back to single-process at once when multi-process cannot start a renderer', async () => {
    output.clear();
    await useRenderer({ processModel: 'auto', chromeExecutablePath: brokenMultiProcess });
    const started = performance.now();
    const { result } = await render('job_fallback', '<p>fallback</p><p id="done"></p>');
    const elapsed = performance.now() - started;
    expect(result).toMatchObject({ ok: true });
    const failed = logged().find((l) => l.message === 'browser-multi-process-failed');
    expect(failed).toMatchObject({ level: 'WARN' });
    const report = lastModelReport();
    expect(report).toMatchObject({
      processModel: 'single',
      setting: 'auto',
      fallbackReason: expect.any(String),
    });
    // The crashed first page fails the proof at once, not at its deadline.
    expect(failed?.probeMs).toBeLessThan(browserModule.PROBE_TIMEOUT_MS / 2);
    expect(elapsed).toBeLessThan(browserModule.PROBE_TIMEOUT_MS);
    expect(logged().find((l) => 'BrowserProcessModel' in l)).toMatchObject({ ProcessModel: 'single' });
  });

  it('with spare sessions, renders in multi-process on the spare opened beside the proof, and the next on a new one', async () => {
    output.clear();
    await useRenderer({ processModel: 'auto' }, { spareSessions: 1 });
    const first = await render('job_spare_first', '<p>first</p><p id="done"></p>');
    const second = await render('job_spare_second', '<p>second</p><p id="done"></p>');
    expect(first.result).toMatchObject({ ok: true });
    expect(first.text).toContain('first');
    expect(second.result).toMatchObject({ ok: true });
    expect(second.text).toContain('second');
    expect(second.text).not.toContain('first');
    expect(current().browser.processModel()).toBe('multi');
    expect(lastModelReport()).toMatchObject({ processModel: 'multi', setting: 'auto' });
  });

  it('with spare sessions, drops the spare opened beside a failed proof and renders in single-process', async () => {
    output.clear();
    await useRenderer(
      { processModel: 'auto', chromeExecutablePath: brokenMultiProcess },
      { spareSessions: 1 },
    );
    const { result, text } = await render(
      'job_spare_fallback',
      '<p>fallback with spares</p><p id="done"></p>',
    );
    expect(result).toMatchObject({ ok: true });
    expect(text).toContain('fallback with spares');
    expect(current().browser.processModel()).toBe('single');
    expect(lastModelReport()).toMatchObject({ processModel: 'single', fallbackReason: expect.any(String) });
  });

  it('falls back at the probe deadline when multi-process hangs instead (its page never opens)', async () => {
    // What a fallback costs after the deadline, measured now: starting single-process Chromium and
    // rendering on it (a fixed 2 s was too little beside another npm test).
    await useRenderer({ processModel: 'single' });
    const controlStarted = performance.now();
    expect((await render('job_single_control', '<p>control</p><p id="done"></p>')).result).toMatchObject({
      ok: true,
    });
    const controlMs = performance.now() - controlStarted;
    output.clear();
    await useRenderer({ processModel: 'auto', chromeExecutablePath: hangingMultiProcess });
    const started = performance.now();
    const { result } = await render('job_hanging', '<p>after the hang</p><p id="done"></p>');
    const elapsed = performance.now() - started;
    expect(result).toMatchObject({ ok: true });
    expect(current().browser.processModel()).toBe('single');
    const failed = logged().find((l) => l.message === 'browser-multi-process-failed');
    expect(failed).toMatchObject({ error: `no PDF within ${browserModule.PROBE_TIMEOUT_MS} ms` });
    expect(elapsed).toBeGreaterThanOrEqual(browserModule.PROBE_TIMEOUT_MS);
    expect(elapsed).toBeLessThan(browserModule.PROBE_TIMEOUT_MS + 2000 + 2 * controlMs);
  });

  it('proves each model with its own page: a second context kills a single-process Chromium', async () => {
    // Why single-process has no context per render (measured here, not assumed).
    const browser = await puppeteer.launch({
      executablePath: baseConfig.chromeExecutablePath ?? (await chromium.executablePath()),
      args: browserModule.chromiumArgs(chromium.args, 'http://127.0.0.1:9', 'single'),
      headless: 'shell',
      pipe: true,
      waitForInitialPage: false,
    });
    try {
      const context = await browser.createBrowserContext();
      await expect(context.newPage()).rejects.toThrow();
      await expect.poll(() => browser.connected, { timeout: 5000 }).toBe(false);
    } finally {
      browser.process()?.kill('SIGKILL');
    }
  });
});
