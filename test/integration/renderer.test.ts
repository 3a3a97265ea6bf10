/**
 * The renderer unit against the real Chromium, called in-process as the local stack does. The
 * PDF goes to a small HTTP server standing in for the presigned S3 PUT. Two more local servers:
 * one the test allows pages to reach (RENDERER_EGRESS_ALLOW_HOSTS), to show that what the policy
 * refuses would otherwise have worked, and one that nothing may reach.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RenderRequest, RenderResult } from '../../functions/renderer/contract.js';
import type { RendererInstance } from '../../functions/renderer/renderer.js';
import { PAPER_SIZES_PT, type PdfInfo, readFillColors, readPdf } from '../helpers/pdf.js';
import { descendantsOf } from '../helpers/process-tree.js';
import {
  listenOnFreePort as listen,
  type RenderRequestOverrides,
  renderRequest,
  startUploadSink,
  type Upload,
  type UploadSink,
} from '../helpers/render-fixtures.js';
import { controlMs, describeBound, type PaceBound, paceBound } from '../helpers/timing.js';

interface Recorder {
  readonly server: Server;
  readonly port: number;
  /** Request lines (`GET /path`), WebSocket upgrades (`UPGRADE /path`) with their Cookie header. */
  readonly seen: string[];
  /** TCP connections accepted. */
  connections: number;
}

/** Chromium renderer processes descended from `root` (the browser process), by their /proc entries. */
const rendererPids = (root: number): number[] => {
  const rows = readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .flatMap((p) => {
      try {
        const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        const args = readFileSync(`/proc/${p}/cmdline`, 'utf8');
        return [{ pid: Number(p), ppid, renderer: args.includes('--type=renderer') }];
      } catch {
        return []; // gone meanwhile
      }
    });
  return descendantsOf(root, rows)
    .filter((r) => r.renderer)
    .map((r) => r.pid);
};

/** Waits without yielding to the event loop (so puppeteer cannot move on meanwhile). */
const blockFor = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

/** A server that records what reaches it; /hang never answers, /state sets a cookie. */
const startRecorder = async (): Promise<Recorder> => {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}${req.headers.cookie ? ` cookie=${req.headers.cookie}` : ''}`);
    if (req.url?.startsWith('/hang')) return; // never answered: the network never goes idle
    if (req.url === '/state') {
      res.writeHead(200, {
        'content-type': 'text/html',
        'set-cookie': 'sid=render-1; SameSite=None; Secure; Path=/',
      });
      res.end('<p>STATE FRAME</p>');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('ok');
  });
  server.on('upgrade', (req, socket: Socket) => {
    seen.push(`UPGRADE ${req.url}`);
    socket.destroy();
  });
  const recorder: Recorder = { server, port: 0, seen, connections: 0 };
  server.on('connection', () => recorder.connections++);
  return Object.assign(recorder, { port: await listen(server) });
};

let sink: UploadSink;
let uploads: Map<string, Upload>;
let uploadBase = '';
let allowed: Recorder;
let forbidden: Recorder;
let renderer: RendererInstance;
let egress: typeof import('../../functions/renderer/egress.js');
let countPdfPages: (pdf: Uint8Array) => number;

beforeAll(async () => {
  sink = await startUploadSink();
  uploads = sink.uploads;
  uploadBase = sink.baseUrl;
  allowed = await startRecorder();
  forbidden = await startRecorder();
  const { readRendererConfig } = await import('../../functions/core/config.js');
  const inProcess = await import('../../functions/renderer/in-process.js');
  renderer = inProcess.createInProcessRenderer(
    readRendererConfig({ ...process.env, RENDERER_EGRESS_ALLOW_HOSTS: `127.0.0.1:${allowed.port}` }),
  );
  egress = await import('../../functions/renderer/egress.js');
  countPdfPages = (await import('../../functions/renderer/pdf-pages.js')).countPdfPages;
});

afterAll(async () => {
  await renderer?.close();
  sink?.close();
  for (const server of [allowed?.server, forbidden?.server]) {
    server?.closeAllConnections();
    server?.close();
  }
});

let uploadCount = 0;

type Overrides = Omit<RenderRequestOverrides, 'jobId'>;

const request = (html: string, o: Overrides = {}): RenderRequest =>
  renderRequest(`${uploadBase}/bucket/job-${++uploadCount}.pdf?X-Amz-Signature=abc`, html, {
    ...o,
    upload: o.upload ?? {
      url: `${uploadBase}/bucket/job-${uploadCount}.pdf?X-Amz-Signature=abc`,
      headers: { 'Content-Type': 'application/pdf' },
    },
  });

/** Renders, expects success, and reads back the PDF that was PUT. */
const renderOk = async (
  html: string,
  o: Overrides = {},
): Promise<{ result: RenderResult; pdf: PdfInfo; bytes: Buffer }> => {
  const req = request(html, o);
  const result = await renderer.render(req);
  expect(result).toMatchObject({ ok: true });
  const stored = sink.uploadOf(req.upload.url);
  if (!stored) throw new Error('the PDF was not uploaded');
  return { result, pdf: await readPdf(stored.body), bytes: stored.body };
};

const sections = (n: number): string =>
  Array.from(
    { length: n },
    (_, i) => `<section style="break-after: page"><h2>Section ${i + 1}</h2></section>`,
  ).join('');

describe('renderer', () => {
  it('prints an A4 portrait page and PUTs it with exactly the given headers', async () => {
    const req = request('<h1>Invoice INV-1</h1><p>Bill to: <b>Ada</b> &amp; Co &lt;Ltd&gt;</p>', {
      upload: {
        url: `${uploadBase}/bucket/headers.pdf`,
        headers: { 'Content-Type': 'application/pdf', 'x-amz-meta-job': 'job_1' },
      },
    });
    const result = await renderer.render(req);
    expect(result).toMatchObject({ ok: true, pageCount: 1 });
    if (!result.ok) return;
    const stored = uploads.get('/bucket/headers.pdf');
    expect(stored?.headers['content-type']).toBe('application/pdf');
    expect(stored?.headers['x-amz-meta-job']).toBe('job_1');
    expect(stored?.body.length).toBe(result.fileSizeBytes);
    expect(Number.isInteger(result.renderDurationMs) && result.renderDurationMs >= 0).toBe(true);

    const pdf = await readPdf(stored?.body ?? new Uint8Array());
    expect(pdf.pageCount).toBe(1);
    expect(Math.abs((pdf.pages[0]?.widthPt ?? 0) - 595)).toBeLessThanOrEqual(1);
    expect(Math.abs((pdf.pages[0]?.heightPt ?? 0) - 842)).toBeLessThanOrEqual(1);
    expect(pdf.text).toContain('Invoice INV-1');
    expect(pdf.text).toContain('Bill to: Ada & Co <Ltd>');
  });

  it('swaps width and height in landscape', async () => {
    const { pdf } = await renderOk('<p>wide</p>', { pdf: { landscape: true } });
    expect(Math.abs((pdf.pages[0]?.widthPt ?? 0) - 842)).toBeLessThanOrEqual(1);
    expect(Math.abs((pdf.pages[0]?.heightPt ?? 0) - 595)).toBeLessThanOrEqual(1);
  });

  it.each(['LETTER', 'LEGAL', 'A3', 'A5'] as const)('prints %s paper', async (format) => {
    const { pdf } = await renderOk(`<p>${format}</p>`, { pdf: { format } });
    expect(Math.abs((pdf.pages[0]?.widthPt ?? 0) - PAPER_SIZES_PT[format].widthPt)).toBeLessThanOrEqual(1);
    expect(Math.abs((pdf.pages[0]?.heightPt ?? 0) - PAPER_SIZES_PT[format].heightPt)).toBeLessThanOrEqual(1);
    expect(pdf.text).toContain(format);
  });

  it('counts pages the way a PDF reader does', async () => {
    const { result, pdf, bytes } = await renderOk(sections(3));
    expect(pdf.pageCount).toBe(3);
    expect(result).toMatchObject({ pageCount: 3 });
    expect(pdf.pages[2]?.text).toContain('Section 3');
    // The fallback for PDFs without a classic trailer counts page objects instead.
    expect(countPdfPages(bytes.subarray(0, bytes.length - 200))).toBe(3);
  });

  it('lays out within the margins', async () => {
    const html = Array.from({ length: 60 }, (_, i) => `<p>Paragraph ${i + 1}</p>`).join('');
    const narrow = await renderOk(html, {
      pdf: { margins: { top: 0.4, right: 0.4, bottom: 0.4, left: 0.4 } },
    });
    const wide = await renderOk(html, { pdf: { margins: { top: 3, right: 1, bottom: 3, left: 1 } } });
    expect(wide.pdf.pageCount).toBeGreaterThan(narrow.pdf.pageCount);
    expect(wide.result).toMatchObject({ pageCount: wide.pdf.pageCount });
  });

  it('prints backgrounds only when print_background is set', async () => {
    const html = '<body style="background: #123456; color: white"><p>dark</p></body>';
    const withBackground = await renderOk(html, { pdf: { printBackground: true } });
    const without = await renderOk(html, { pdf: { printBackground: false } });
    expect(await readFillColors(withBackground.bytes)).toContain('#123456');
    expect(await readFillColors(without.bytes)).not.toContain('#123456');
  });

  it('waits for wait_for_selector before printing', async () => {
    const html = `<p>early</p><script>
      setTimeout(() => { const p = document.createElement('p'); p.id = 'late'; p.textContent = 'Loaded late'; document.body.append(p); }, 400);
    </script>`;
    const { pdf } = await renderOk(html, { pageLoad: { waitForSelector: '#late' } });
    expect(pdf.text).toContain('Loaded late');
  });

  describe('the deadline (page_load.timeout_ms)', () => {
    it('times out when the selector never appears', async () => {
      const before = uploads.size;
      const result = await renderer.render(
        request('<p>no such element</p>', { pageLoad: { waitForSelector: '#never', timeoutMs: 1000 } }),
      );
      expect(result).toEqual({
        ok: false,
        code: 'PDF_RENDERING_TIMEOUT',
        message: 'The selector "#never" did not appear within 1000 ms.',
        diagnostics: { entries: [], truncated: false },
      });
      expect(uploads.size).toBe(before);
    });

    it('times out when networkidle0 is never reached, and honours networkidle2', async () => {
      const html = `<p>busy</p><img src="http://127.0.0.1:${allowed.port}/hang.png">`;
      const result = await renderer.render(
        request(html, { pageLoad: { waitUntil: 'networkidle0', timeoutMs: 1500 } }),
      );
      expect(result).toMatchObject({ ok: false, code: 'PDF_RENDERING_TIMEOUT' });
      expect(result.ok ? '' : result.message).toContain('networkidle0');
      expect(allowed.seen).toContain('GET /hang.png');
      // One open connection is idle enough for networkidle2.
      await renderOk(html, { pageLoad: { waitUntil: 'networkidle2', timeoutMs: 5000 } });
    });

    it('times out on a page whose script never yields, and the next render works', async () => {
      const result = await renderer.render(
        request('<p>spin</p><script>while (true) {}</script>', { pageLoad: { timeoutMs: 1000 } }),
      );
      expect(result).toEqual({
        ok: false,
        code: 'PDF_RENDERING_TIMEOUT',
        message: 'The page did not reach "load" within 1000 ms.',
        diagnostics: expect.any(Object),
      });
      const { pdf } = await renderOk('<p>after the spin</p>');
      expect(pdf.text).toContain('after the spin');
    });
  });

  describe('limits and storage', () => {
    it('refuses more pages than limits.maxPages, without uploading', async () => {
      const before = uploads.size;
      const result = await renderer.render(request(sections(3), { limits: { maxPages: 2 } }));
      expect(result).toEqual({
        ok: false,
        code: 'PDF_TOO_MANY_PAGES',
        message:
          'The PDF has more than 2 pages, the limit; split it into several documents (a batch, then a merge).',
        diagnostics: { entries: [], truncated: false },
      });
      expect(uploads.size).toBe(before);
    });

    it('refuses a PDF over limits.maxPdfBytes, without uploading', async () => {
      const before = uploads.size;
      const result = await renderer.render(
        request('<p>small, but not that small</p>', { limits: { maxPdfBytes: 2000 } }),
      );
      expect(result).toMatchObject({ ok: false, code: 'PDF_TOO_LARGE' });
      expect(uploads.size).toBe(before);
    });

    it('reports PDF_STORAGE_FAILED when the PUT is refused or cannot be sent', async () => {
      const refused = await renderer.render(
        request('<p>x</p>', {
          upload: { url: `${uploadBase}/fail/job.pdf?X-Amz-Signature=secret`, headers: {} },
        }),
      );
      expect(refused).toMatchObject({ ok: false, code: 'PDF_STORAGE_FAILED' });
      expect(refused.ok ? '' : refused.message).toContain('403');
      expect(refused.ok ? '' : refused.message).not.toContain('secret');

      const closed = createServer();
      const port = await listen(closed);
      await new Promise((r) => closed.close(r));
      const unreachable = await renderer.render(
        request('<p>x</p>', { upload: { url: `http://127.0.0.1:${port}/job.pdf`, headers: {} } }),
      );
      expect(unreachable).toMatchObject({ ok: false, code: 'PDF_STORAGE_FAILED' });
      expect(unreachable.ok ? '' : unreachable.message).not.toContain(String(port));
    });
  });

  it('gives every render a fresh browser context: no cookie of the previous render', async () => {
    const html = `<iframe src="http://127.0.0.1:${allowed.port}/state"></iframe>`;
    const first = await renderOk(html, { pageLoad: { waitUntil: 'networkidle0' } });
    const second = await renderOk(html, { pageLoad: { waitUntil: 'networkidle0' } });
    expect(first.pdf.text).toContain('STATE FRAME');
    expect(second.pdf.text).toContain('STATE FRAME');
    // The first answer set a cookie; a shared context would send it back the second time.
    expect(allowed.seen.filter((line) => line.startsWith('GET /state'))).toEqual([
      'GET /state',
      'GET /state',
    ]);
  });

  describe('egress', () => {
    it('refuses file: images, frames and navigations', async () => {
      const html = `<p>STILL HERE</p><p id="img">waiting</p>
        <iframe src="file:///etc/passwd"></iframe>
        <link rel="stylesheet" href="file:///etc/passwd">
        <script>
          window.location = 'file:///etc/passwd';
          const img = new Image();
          img.onerror = () => {
            document.getElementById('img').textContent = 'FILE IMAGE REFUSED';
            document.body.append(Object.assign(document.createElement('p'), { id: 'done' }));
          };
          img.src = 'file:///etc/hostname';
        </script>`;
      const { pdf } = await renderOk(html, { pageLoad: { waitForSelector: '#done' } });
      expect(pdf.text).toContain('STILL HERE');
      expect(pdf.text).toContain('FILE IMAGE REFUSED');
      expect(pdf.text).not.toMatch(/root:/);
    });

    it('refuses loopback over http, ws and from workers, which the allowed test host shows would work', async () => {
      // Everything the page starts is awaited (settled either way) before #done appears.
      const page = (port: number) => `<p id="img">waiting</p><script>
        const base = 'http://127.0.0.1:${port}';
        const settled = (target, events) => new Promise((resolve) => events.forEach((e) => target.addEventListener(e, resolve)));
        const element = (tag, src) => {
          const el = document.createElement(tag);
          const done = settled(el, ['load', 'error']);
          el.src = src;
          document.body.append(el);
          return done;
        };
        const worker = new Worker(URL.createObjectURL(new Blob([
          "fetch('" + base + "/worker', { mode: 'no-cors' }).catch(() => {}).finally(() => postMessage('done'))",
        ])));
        const waits = {
          img: element('img', base + '/img.png').then((e) => {
            if (e.type === 'error') document.getElementById('img').textContent = 'IMAGE FAILED ${port}';
          }),
          localhost: element('img', 'http://localhost:${port}/localhost.png'),
          mapped: element('img', 'http://[::ffff:127.0.0.1]:${port}/mapped.png'),
          frame: element('iframe', base + '/frame'),
          socket: settled(new WebSocket('ws://127.0.0.1:${port}/socket'), ['close']),
          // Refused in the page, a fetch fails; refused only by the proxy, it would get a 403.
          fetch: fetch(base + '/fetch', { mode: 'no-cors' }).then(() => 'FETCH ANSWERED', () => 'FETCH REFUSED')
            .then((outcome) => document.body.append(outcome)),
          worker: settled(worker, ['message', 'error']),
        };
        const pending = new Set(Object.keys(waits));
        Object.entries(waits).forEach(([name, wait]) => wait.then(() => pending.delete(name)));
        Promise.race([Promise.all(Object.values(waits)), new Promise((r) => setTimeout(r, 8000))]).then(() => {
          document.body.append(pending.size ? 'STILL PENDING: ' + [...pending].join(', ') : 'ALL SETTLED');
          document.body.append(Object.assign(document.createElement('p'), { id: 'done' }));
        });
      </script>`;
      const refused = await renderOk(page(forbidden.port), {
        pageLoad: { waitForSelector: '#done', timeoutMs: 15_000 },
      });
      expect(refused.pdf.text).toContain('ALL SETTLED');
      expect(refused.pdf.text).toContain(`IMAGE FAILED ${forbidden.port}`);
      expect(refused.pdf.text).toContain('FETCH REFUSED');
      expect(forbidden.connections).toBe(0);
      expect(forbidden.seen).toEqual([]);

      const reached = await renderOk(page(allowed.port), {
        pageLoad: { waitForSelector: '#done', timeoutMs: 15_000 },
      });
      expect(reached.pdf.text).toContain('ALL SETTLED');
      expect(reached.pdf.text).toContain('FETCH ANSWERED');
      for (const line of ['GET /img.png', 'GET /frame', 'UPGRADE /socket', 'GET /fetch', 'GET /worker']) {
        expect(allowed.seen).toContain(line);
      }
      expect(allowed.seen).not.toContain('GET /localhost.png');
      expect(allowed.seen).not.toContain('GET /mapped.png');
    });

    it('keeps the document: no navigation away and no popups, even to an allowed host', async () => {
      const html = `<p>ORIGINAL CONTENT</p><script>
        window.open('http://127.0.0.1:${allowed.port}/popup');
        setTimeout(() => { window.location.href = 'http://127.0.0.1:${allowed.port}/navigate'; }, 0);
        setTimeout(() => document.body.append(Object.assign(document.createElement('p'), { id: 'done' })), 300);
      </script>`;
      const { pdf } = await renderOk(html, { pageLoad: { waitForSelector: '#done' } });
      expect(pdf.text).toContain('ORIGINAL CONTENT');
      expect(allowed.seen).not.toContain('GET /navigate');
      expect(allowed.seen).not.toContain('GET /popup');
    });

    it('dismisses dialogs instead of hanging on them', async () => {
      const { pdf } = await renderOk(
        `<p id="answer"></p><script>alert('hi'); document.getElementById('answer').textContent = 'confirm=' + confirm('sure?');</script>`,
        { pageLoad: { timeoutMs: 5000 } },
      );
      expect(pdf.text).toContain('confirm=false');
    });
  });

  describe('the browser', () => {
    it('is launched without the flags that switch off web security or isolation', async () => {
      const browser = await renderer.browser.getBrowser();
      const args = browser.process()?.spawnargs ?? [];
      expect(args.some((a) => a.startsWith('--proxy-server=http://127.0.0.1:'))).toBe(true);
      for (const flag of ['--disable-web-security', '--single-process', '--allow-running-insecure-content']) {
        expect(args).not.toContain(flag);
      }
      expect(args.join(' ')).not.toMatch(/site-per-process|SharedArrayBuffer|--disable-popup-blocking/);
    });

    it('relaunches after Chromium is killed', async () => {
      const browser = await renderer.browser.getBrowser();
      const pid = browser.process()?.pid;
      expect(pid).toBeTypeOf('number');
      process.kill(pid as number, 'SIGKILL');
      const { pdf } = await renderOk('<p>after the crash</p>');
      expect(pdf.text).toContain('after the crash');
      expect((await renderer.browser.getBrowser()).process()?.pid).not.toBe(pid);
    });

    it('launches once for the renders that arrive while it relaunches', async () => {
      const pid = (await renderer.browser.getBrowser()).process()?.pid;
      process.kill(pid as number, 'SIGKILL');
      const launch = vi.spyOn(puppeteer, 'launch');
      try {
        const results = await Promise.all(
          [1, 2, 3, 4].map((n) => renderer.render(request(`<p>relaunch ${n}</p>`))),
        );
        expect(results).toEqual(Array(4).fill(expect.objectContaining({ ok: true })));
        expect(launch).toHaveBeenCalledTimes(1);
      } finally {
        launch.mockRestore();
      }
    });

    it('answers PDF_RENDERING_FAILED with a safe message when Chromium fails', async () => {
      const browser = await renderer.browser.getBrowser();
      const createContext = browser.createBrowserContext.bind(browser);
      // Fault injection: the page fails with the kind of message Chromium produces.
      vi.spyOn(browser, 'createBrowserContext').mockImplementationOnce(async (options) => {
        const context = await createContext(options);
        const newPage = context.newPage.bind(context);
        vi.spyOn(context, 'newPage').mockImplementationOnce(async () => {
          const page = await newPage();
          vi.spyOn(page, 'setContent').mockRejectedValue(
            new Error('Protocol error (Page.printToPDF): crashed at /opt/chromium/lib.so 10.0.3.7'),
          );
          return page;
        });
        return context;
      });
      const result = await renderer.render(request('<p>x</p>'));
      expect(result).toEqual({
        ok: false,
        code: 'PDF_RENDERING_FAILED',
        message: 'Chromium failed while rendering the page.',
        diagnostics: expect.any(Object),
      });
      const { pdf } = await renderOk('<p>still serving</p>');
      expect(pdf.text).toContain('still serving');
    });

    it('fails at once when the page’s renderer process is killed while the page opens', async () => {
      // The control: a render that opens its page as usual.
      const control = await controlMs(() => renderOk('<p>control</p>'), 1);
      const browser = await renderer.browser.getBrowser();
      const browserPid = browser.process()?.pid as number;
      const before = new Set(rendererPids(browserPid));
      let killed: number | undefined;
      const createContext = browser.createBrowserContext.bind(browser);
      // Fault injection: the new page's target exists, its renderer process is starting, and
      // puppeteer is still opening the page (held here: nothing of this process runs meanwhile)
      // when the renderer is killed.
      vi.spyOn(browser, 'createBrowserContext').mockImplementationOnce(async (options) => {
        const context = await createContext(options);
        context.once('targetcreated', () => {
          for (let waited = 0; killed === undefined && waited < 5000; waited += 5) {
            killed = rendererPids(browserPid).find((pid) => !before.has(pid));
            if (killed === undefined) blockFor(5);
          }
          if (killed !== undefined) process.kill(killed, 'SIGKILL');
        });
        return context;
      });
      const started = performance.now();
      const result = await renderer.render(request('<p>never opened</p>'));
      const elapsed = performance.now() - started;
      expect(killed).toBeTypeOf('number');
      expect(result).toEqual({
        ok: false,
        code: 'PDF_RENDERING_FAILED',
        message: 'The renderer could not open a page. Try again.',
      });
      // It waited for the open timeout (10 s) before: it must end far from that, half of it plus
      // twice a render's time in this run (a render is most of what a failed open still costs).
      const bound: PaceBound = { expectedMs: 5_000, slackMs: 0, controlMs: control, factor: 2 };
      expect(elapsed, describeBound(elapsed, bound)).toBeLessThan(paceBound(bound));
      const { pdf } = await renderOk('<p>after the killed open</p>');
      expect(pdf.text).toContain('after the killed open');
      expect(await renderer.browser.getBrowser()).toBe(browser);
    });

    it('kills and replaces a browser whose render cannot be closed', async () => {
      const browser = await renderer.browser.getBrowser();
      const createContext = browser.createBrowserContext.bind(browser);
      // Fault injection: the render's context never finishes closing.
      vi.spyOn(browser, 'createBrowserContext').mockImplementationOnce(async (options) => {
        const context = await createContext(options);
        vi.spyOn(context, 'close').mockReturnValue(new Promise<void>(() => {}));
        return context;
      });
      await renderOk('<p>stuck on close</p>');
      await vi.waitFor(() => expect(browser.connected).toBe(false), { timeout: 5000 });
      const { pdf } = await renderOk('<p>fresh browser</p>');
      expect(pdf.text).toContain('fresh browser');
      expect(await renderer.browser.getBrowser()).not.toBe(browser);
    });

    it('serves 4 concurrent renders, each with its own content', async () => {
      const results = await Promise.all(
        [1, 2, 3, 4].map((n) =>
          renderOk(`<h1>Concurrent ${n}</h1>${sections(n)}`, { pageLoad: { waitUntil: 'networkidle0' } }),
        ),
      );
      results.forEach(({ pdf }, i) => {
        expect(pdf.text).toContain(`Concurrent ${i + 1}`);
        expect(pdf.pageCount).toBe(i + 1);
        for (const other of [1, 2, 3, 4].filter((n) => n !== i + 1))
          expect(pdf.text).not.toContain(`Concurrent ${other}`);
      });
    });
  });
});

describe('egress policy', () => {
  it.each([
    'file:///etc/passwd',
    'chrome://version',
    'ftp://example.com/x',
    'javascript:alert(1)',
    'http://127.0.0.1/',
    'http://127.1.2.3:9001/2018-06-01/runtime/invocation/next',
    'http://0x7f.1/',
    'http://2130706433/',
    'http://[::1]/',
    'http://[0:0:0:0:0:0:0:1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://localhost/',
    'http://LOCALHOST./',
    'http://api.localhost/',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://172.16.0.1/',
    'http://172.31.255.255/',
    'http://192.168.1.1/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    'http://[64:ff9b::a00:1]/',
    'ws://127.0.0.1:9229/',
    'wss://10.1.2.3/',
    'not a url',
  ])('refuses %s', async (url) => {
    expect(await egress.isRequestAllowed(url)).toBe(false);
  });

  it.each([
    'data:text/plain,hi',
    'blob:null/5d1d0e4f-0000-4000-8000-000000000000',
    'about:blank',
    'http://93.184.215.14/',
    'https://[2606:4700::6810:84e5]/x',
    'wss://1.1.1.1/socket',
  ])('allows %s', async (url) => {
    expect(await egress.isRequestAllowed(url)).toBe(true);
  });

  it('refuses names that resolve to any non-public address, and connects to the checked one', async () => {
    const answers: Record<string, string[]> = {
      'public.test': ['93.184.215.14', '2606:4700::6810:84e5'],
      'mixed.test': ['93.184.215.14', '127.0.0.1'],
      'metadata.test': ['169.254.169.254'],
      'mapped.test': ['::ffff:10.0.0.1'],
    };
    const policy = egress.createEgressPolicy({
      allowHosts: ['127.0.0.1:8080'],
      lookup: async (name) => {
        const found = answers[name];
        if (!found) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
        return found;
      },
    });
    expect(await policy.isRequestAllowed('https://public.test/x')).toBe(true);
    expect(await policy.resolveDestination('public.test', 443)).toBe('93.184.215.14');
    expect(await policy.isRequestAllowed('https://mixed.test/x')).toBe(false);
    expect(await policy.isRequestAllowed('http://metadata.test/')).toBe(false);
    expect(await policy.isRequestAllowed('http://mapped.test/')).toBe(false);
    expect(await policy.isRequestAllowed('http://unknown.test/')).toBe(false);
    expect(await policy.isRequestAllowed('http://127.0.0.1:8080/fixture')).toBe(true);
    expect(await policy.isRequestAllowed('http://127.0.0.1:8081/fixture')).toBe(false);
    expect(await policy.isRequestAllowed('http://127.0.0.1/')).toBe(false);
  });
});
