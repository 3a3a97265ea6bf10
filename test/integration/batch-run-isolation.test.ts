/**
 * Issue 43: the items of one batch run render one after another on one page of one browser
 * context, wiped between items. What item 1 stores (a cookie, localStorage, IndexedDB, Cache
 * Storage, a service worker, HTTP cache entries, a global of its window), item 2 of the same run
 * does not find; two runs side by side (two accounts' batches) never share a context, by what
 * their pages observe and by the renderer's own record; a spoiled page ends its context only; an
 * offline run reaches nothing; no item starts past the run's slice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RendererConfig } from '../../functions/core/config.js';
import type { RenderRequest, RenderResult } from '../../functions/renderer/contract.js';
import type { RendererInstance } from '../../functions/renderer/renderer.js';
import { readPdf } from '../helpers/pdf.js';
import { captureOutput } from '../helpers/process-output.js';
import { renderRequest, startUploadSink, type UploadSink } from '../helpers/render-fixtures.js';
import { FOUND_NOTHING, startTenantFixture, type TenantFixture, WROTE } from '../helpers/tenant-fixture.js';

process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
process.env.POWERTOOLS_DEV = 'false';
captureOutput({ swallowJson: true });

let sink: UploadSink;
let fixture: TenantFixture;
let renderer: RendererInstance;

beforeAll(async () => {
  sink = await startUploadSink();
  fixture = await startTenantFixture();
  const { readRendererConfig } = await import('../../functions/core/config.js');
  const config: RendererConfig = {
    ...readRendererConfig({ ...process.env, RENDERER_EGRESS_ALLOW_HOSTS: fixture.hostPort }),
    processModel: 'multi',
  };
  const { createInProcessRenderer } = await import('../../functions/renderer/in-process.js');
  renderer = createInProcessRenderer(config);
});

afterAll(async () => {
  await renderer?.close();
  sink?.close();
  fixture?.close();
});

let uploads = 0;
const item = (
  jobId: string,
  html: string,
  o: { offline?: boolean; timeoutMs?: number } = {},
): RenderRequest => ({
  ...renderRequest(`${sink.baseUrl}/run-${++uploads}.pdf`, html, {
    jobId,
    pageLoad: { timeoutMs: o.timeoutMs ?? 10_000, waitForSelector: '#done' },
  }),
  ...(o.offline ? { offline: true } : {}),
});

/** A global of the page's window: item 1 sets it, every item prints whether it was there. */
const GLOBAL = `<p id="global"></p><script>
  document.getElementById('global').textContent = 'GLOBAL ' + (typeof window.__leftByItem1);
  window.__leftByItem1 = 'a';
</script>`;

const text = async (request: RenderRequest, result: RenderResult | null): Promise<string> => {
  expect(result, `${request.jobId} rendered`).toMatchObject({ ok: true });
  const stored = sink.uploadOf(request.upload.url)?.body;
  return stored ? (await readPdf(stored)).text.replace(/\s+/g, ' ') : '';
};

const contextsOf = (jobIds: readonly string[]): string[] =>
  jobIds.map((id) => renderer.runContexts.find((r) => r.jobId === id)?.contextId ?? 'none');

describe('a batch run', () => {
  it("item 2 finds nothing that item 1 stored, in the same context's page", { timeout: 60_000 }, async () => {
    const { seen, hits } = fixture;
    const before = { ...hits };
    seen.length = 0;
    const requests = [
      item('job_run1_1', GLOBAL + fixture.page('/write')),
      item('job_run1_2', GLOBAL + fixture.page('/read')),
    ];
    const results = await renderer.renderRun({ requests, sliceMs: 60_000 });
    const [first, second] = [await text(requests[0]!, results[0]!), await text(requests[1]!, results[1]!)];
    expect(first).toContain(WROTE);
    expect(first).toContain('GLOBAL undefined');
    expect(seen).toContain('/cached cookie=tenant=a');
    expect(second).toContain(FOUND_NOTHING);
    expect(second).toContain('GLOBAL undefined');
    // Item 2's requests all reached the host (nothing from a cache), none with item 1's cookie.
    expect(hits).toEqual({ cached: before.cached + 2, image: before.image + 2 });
    expect(seen.filter((l) => l.includes('tenant=') && !l.startsWith('/cached cookie=tenant=a'))).toEqual([]);
    expect(seen.filter((l) => l.includes('tenant='))).toHaveLength(1);
    // One context for both: the run reused it (its record says so).
    const [c1, c2] = contextsOf(['job_run1_1', 'job_run1_2']);
    expect(c1).toMatch(/\w/);
    expect(c2).toBe(c1);
  });

  it("two accounts' runs side by side never share a context", { timeout: 90_000 }, async () => {
    const a = ['write', 'read', 'write', 'read'].map((f, i) =>
      item(`job_a_${i}`, GLOBAL + fixture.page(`/${f}` as '/write' | '/read')),
    );
    const b = ['read', 'write', 'read', 'read'].map((f, i) =>
      item(`job_b_${i}`, GLOBAL + fixture.page(`/${f}` as '/write' | '/read')),
    );
    const [ra, rb] = await Promise.all([
      renderer.renderRun({ requests: a, sliceMs: 60_000 }),
      renderer.renderRun({ requests: b, sliceMs: 60_000 }),
    ]);
    const texts = [
      ...(await Promise.all(a.map((r, i) => text(r, ra[i] ?? null)))),
      ...(await Promise.all(b.map((r, i) => text(r, rb[i] ?? null)))),
    ];
    // Every reader, in either run, found nothing, whatever the other run or its own item before wrote.
    for (const t of texts) {
      expect(t).toContain('GLOBAL undefined');
      if (t.includes('FOUND')) expect(t).toContain(FOUND_NOTHING);
    }
    expect(texts.filter((t) => t.includes(WROTE))).toHaveLength(3);
    const ca = new Set(contextsOf(a.map((r) => r.jobId)));
    const cb = new Set(contextsOf(b.map((r) => r.jobId)));
    expect(ca.size).toBe(1);
    expect(cb.size).toBe(1);
    expect([...ca].filter((c) => cb.has(c))).toEqual([]);
    expect(ca.has('none') || cb.has('none')).toBe(false);
  });

  it('an item that spoils its page ends the context; the next item renders in a fresh one', {
    timeout: 60_000,
  }, async () => {
    const requests = [
      item('job_spoil_1', '<p>first</p><p id="done"></p>'),
      item('job_spoil_2', '<p>never done</p>', { timeoutMs: 1_000 }),
      item('job_spoil_3', '<p>third</p><p id="done"></p>'),
    ];
    const results = await renderer.renderRun({ requests, sliceMs: 60_000 });
    expect(results[1]).toMatchObject({ ok: false, code: 'PDF_RENDERING_TIMEOUT' });
    expect(await text(requests[2]!, results[2]!)).toContain('third');
    const [c1, c2, c3] = contextsOf(requests.map((r) => r.jobId));
    expect(c2).toBe(c1);
    expect(c3).not.toBe(c1);
  });

  it("an offline run (another account's template) reaches nothing and still renders", {
    timeout: 60_000,
  }, async () => {
    fixture.seen.length = 0;
    const requests = [0, 1].map((i) =>
      item(`job_offline_${i}`, `<p>offline ${i}</p>${fixture.page('/write')}`, { offline: true }),
    );
    // The page never hears from the frame: it is ready without it.
    const ready = requests.map((r) => ({
      ...r,
      pageLoad: { ...r.pageLoad, waitForSelector: null },
    }));
    const results = await renderer.renderRun({ requests: ready, sliceMs: 60_000 });
    expect(await text(ready[0]!, results[0]!)).toContain('offline 0');
    expect(await text(ready[1]!, results[1]!)).toContain('offline 1');
    expect(fixture.seen).toEqual([]);
  });

  it('starts no item past its slice: those come back unrendered', { timeout: 30_000 }, async () => {
    const requests = [0, 1, 2].map((i) => item(`job_slice_${i}`, `<p>slice ${i}</p><p id="done"></p>`));
    const results = await renderer.renderRun({ requests, sliceMs: 0 });
    expect(results[0]).toMatchObject({ ok: true });
    expect(results.slice(1)).toEqual([null, null]);
    expect(sink.uploadOf(requests[1]!.upload.url)).toBeUndefined();
  });
});
