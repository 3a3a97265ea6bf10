/**
 * A job's diagnostics over HTTP against the real local stack: what happened inside the render's
 * page (console errors, uncaught errors, resources the egress policy blocked or that failed,
 * requests still loading at the deadline, text no font can draw) on the POST answer, the job and
 * the list; capped; and only ever the render's own page, never another account's.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { jobSchema } from '../../functions/pdf/schemas.js';
import { type Json, useLocalStack } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';
import { useReachableHost } from '../helpers/reachable-host.js';
import { newAccount, type TestAccount } from '../helpers/template-fixtures.js';

/** A host pages may reach: /missing answers 404, /hang never answers. */
/** Every refusal of the egress policy, whatever its reason. */
const BLOCKED = 'blocked: not a public http(s) address';
const host = useReachableHost((req, res) => {
  if (req.url?.startsWith('/hang')) return;
  if (req.url?.startsWith('/missing')) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('ok');
});

const local = useLocalStack({ env: host.env });

let account: TestAccount;
beforeAll(async () => {
  account = await newAccount(local, 'diag');
});

const render = (body: Record<string, unknown>, token = account.session) =>
  local.api('/v1/pdf', { method: 'POST', token, body });

const entry = (type: string, message: string | RegExp, url?: string) =>
  expect.objectContaining({
    type,
    message: typeof message === 'string' ? message : expect.stringMatching(message),
    ...(url ? { url } : {}),
  });

describe('diagnostics', () => {
  it('reports console errors, uncaught errors and blocked private URLs on the answer, the job and the list', async () => {
    const res = await render({
      html: `<p>Hello</p>
        <img src="http://10.1.2.3/logo.png">
        <img src="http://127.0.0.1:9/admin.png">
        <script>
          console.log('not an error');
          console.error('tax rate missing for', 'DE');
          fetch('http://169.254.169.254/latest/meta-data/').catch(() => {});
          missingFunction();
        </script>`,
      page_load: { wait_until: 'networkidle0' },
    });
    expect(res.status, res.text).toBe(201);
    const { diagnostics } = res.json;
    expect(() => jobSchema.strict().parse(res.json)).not.toThrow();
    expect(diagnostics.truncated).toBe(false);
    expect(diagnostics.entries).toEqual(
      expect.arrayContaining([
        entry('console', 'tax rate missing for DE'),
        entry('page_error', 'ReferenceError: missingFunction is not defined'),
        entry('resource', BLOCKED, 'http://10.1.2.3/logo.png'),
        entry('resource', BLOCKED, 'http://127.0.0.1:9/admin.png'),
        entry('resource', BLOCKED, 'http://169.254.169.254/latest/meta-data/'),
      ]),
    );
    expect(diagnostics.entries, JSON.stringify(diagnostics.entries, null, 1)).toHaveLength(5);
    expect(JSON.stringify(diagnostics)).not.toContain('not an error');

    const job = await local.api(`/v1/pdf/${res.json.id}`, { token: account.key });
    expect(job.json.diagnostics).toEqual(diagnostics);
    const listed = (await local.api('/v1/pdf?limit=5', { token: account.session })).json as Json[];
    expect(listed.find((j) => j.id === res.json.id)?.diagnostics).toEqual(diagnostics);
  });

  it('reports failed resources (an HTTP 404, a host that does not resolve: refused as a private one is) and nothing for a clean page', async () => {
    const res = await render({
      html: `<img src="http://${host.hostPort}/missing.png"><img src="https://no-such-host.invalid/a.png">`,
      page_load: { wait_until: 'networkidle0' },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.json.diagnostics.entries).toEqual(
      expect.arrayContaining([
        entry('resource', 'failed: HTTP 404', `http://${host.hostPort}/missing.png`),
        // The same words as a private address: a page learns nothing of how the renderer's
        // resolver sees names (issue 38).
        entry('resource', BLOCKED, 'https://no-such-host.invalid/a.png'),
      ]),
    );
    const clean = await render({ html: '<p>Nothing to report</p>' });
    expect(clean.json.diagnostics).toEqual({ entries: [], truncated: false });
  });

  it('reports text no font can draw (a missing glyph)', async () => {
    // Egyptian hieroglyphs: no font of the renderer has them.
    const res = await render({ html: '<p>Ankh: 𓋹 and 𓀀</p>' });
    expect(res.status, res.text).toBe(201);
    expect(res.json.diagnostics.entries).toEqual([
      entry('missing_glyph', /no font has a glyph for 𓋹 \(U\+132F9\), 𓀀 \(U\+13000\)/),
    ]);
  });

  it('on a render that times out: the requests still loading, in the error body and on the job', async () => {
    const res = await render({
      html: `<p>Slow</p><img src="http://${host.hostPort}/hang.png?token=abc"><script>console.error('waiting')</script>`,
      page_load: { wait_until: 'networkidle0', timeout_ms: 1500 },
    });
    expect(res.status, res.text).toBe(504);
    expect(res.json.error.code).toBe('PDF_RENDERING_TIMEOUT');
    const expected = expect.arrayContaining([
      entry('console', 'waiting'),
      entry(
        'resource',
        'pending: still loading at the deadline',
        `http://${host.hostPort}/hang.png?token=abc`,
      ),
    ]);
    expect(res.json.error.diagnostics.entries).toEqual(expected);
    const job = await local.api(`/v1/pdf/${res.json.error.job_id}`, { token: account.session });
    expect(job.json).toMatchObject({ status: 'failed', diagnostics: { entries: expected } });
  });

  it('are replayed with the error of an idempotent request', async () => {
    const body = {
      html: `<img src="http://${host.hostPort}/hang.png"><script>console.error('replayed')</script>`,
      page_load: { wait_until: 'networkidle0', timeout_ms: 1000 },
    };
    const headers = { 'Idempotency-Key': `diag-${Date.now()}` };
    const first = await local.api('/v1/pdf', { method: 'POST', token: account.session, body, headers });
    expect(first.status, first.text).toBe(504);
    expect(first.json.error.diagnostics.entries).toEqual(
      expect.arrayContaining([entry('console', 'replayed')]),
    );
    const again = await local.api('/v1/pdf', { method: 'POST', token: account.session, body, headers });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const { request_id: _a, ...firstError } = first.json.error;
    const { request_id: _b, ...replayed } = again.json.error;
    expect(replayed).toEqual(firstError);
  });

  it('are capped: 50 entries and 16 KiB, each text and URL cut, repeats counted', async () => {
    const res = await render({
      html: `<script>
        for (let i = 0; i < 1000; i++) console.error('the same error');
        for (let i = 0; i < 300; i++) console.error('error ' + i + ' ' + 'x'.repeat(2000));
      </script>
      ${Array.from({ length: 5 }, (_, i) => `<img src="http://10.0.0.${i + 1}/${'p'.repeat(5000)}?q=${i}">`).join('')}`,
    });
    expect(res.status, res.text).toBe(201);
    const { diagnostics } = res.json;
    expect(diagnostics.truncated).toBe(true);
    expect(diagnostics.entries.length).toBeLessThanOrEqual(50);
    expect(Buffer.byteLength(JSON.stringify(diagnostics))).toBeLessThanOrEqual(16 * 1024);
    expect(diagnostics.entries[0]).toEqual({ type: 'console', message: 'the same error', count: 1000 });
    for (const e of diagnostics.entries) {
      expect([...e.message].length).toBeLessThanOrEqual(501);
      if (e.url) expect([...e.url].length).toBeLessThanOrEqual(301);
    }
  });

  it('show stack traces that name no file of the renderer’s and no library, nor do the page’s', async () => {
    const res = await render({
      html: `<p id="inline"></p><p id="later"></p>
        <script>
          document.getElementById('inline').textContent = new Error('inline').stack;
          console.error(new Error('logged').stack);
          setTimeout(() => {
            document.getElementById('later').textContent = new Error('later').stack;
            document.body.append(Object.assign(document.createElement('i'), { id: 'done' }));
          }, 50);
          Promise.resolve().then(() => { throw new Error('thrown'); });
        </script>`,
      page_load: { wait_for_selector: '#done' },
    });
    expect(res.status, res.text).toBe(201);
    const pdf = await readPdf(new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer()));
    expect(pdf.text).toContain('Error: inline');
    expect(JSON.stringify(res.json.diagnostics)).toContain('Error: logged');
    for (const seen of [pdf.text, JSON.stringify(res.json.diagnostics)]) {
      expect(seen).not.toMatch(/pptr|puppeteer|node_modules|file:|%2F|\/work\/|\/var\/task|\/opt\//i);
    }
  });

  it('never show another account’s page: concurrent renders each see only their own', async () => {
    const other = await newAccount(local, 'diag-other');
    const page = (marker: string, address: string) => `<p>${marker}</p>
      <img src="http://${address}/${marker}.png">
      <script>console.error('secret of ${marker}'); setTimeout(() => { throw new Error('thrown by ${marker}'); }, 50);</script>
      <script>setTimeout(() => document.body.append(Object.assign(document.createElement('p'), { id: 'done' })), 200);</script>`;
    const [mine, theirs] = await Promise.all([
      render({ html: page('alpha', '10.9.9.1'), page_load: { wait_for_selector: '#done' } }),
      render({ html: page('bravo', '10.9.9.2'), page_load: { wait_for_selector: '#done' } }, other.session),
    ]);
    expect(mine.status, mine.text).toBe(201);
    expect(theirs.status, theirs.text).toBe(201);
    const text = (d: Json) => JSON.stringify(d);
    expect(text(mine.json.diagnostics)).toContain('alpha');
    expect(text(mine.json.diagnostics)).not.toContain('bravo');
    expect(text(theirs.json.diagnostics)).toContain('bravo');
    expect(text(theirs.json.diagnostics)).not.toContain('alpha');
    expect(mine.json.diagnostics.entries).toHaveLength(3);

    // Another account's job, and its diagnostics, do not exist for this one.
    const peek = await local.api(`/v1/pdf/${theirs.json.id}`, { token: account.session });
    expect(peek.status).toBe(404);
    expect(peek.json.error.code).toBe('PDF_JOB_NOT_FOUND');
    expect(peek.text).not.toContain('bravo');
    const list = await local.api('/v1/pdf?limit=100', { token: account.session });
    expect(list.text).not.toContain('bravo');
  });
});
