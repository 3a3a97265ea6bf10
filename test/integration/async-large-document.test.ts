/**
 * Issue 20's measured criteria, against a local stack as `npm start` runs it (a process of its
 * own, so that its memory is its own): an async render of a 1,000-page report completes and its
 * PDF has 1,000 pages (time, and the peak memory of the stack's processes, Chromium's included);
 * an async invoice answers 202 fast (p50), compared with the same invoice rendered synchronously
 * in the same run (the control: answering without rendering must be far quicker than rendering).
 */
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { INVOICE_TEMPLATE, invoiceVariables } from '../bench/fixtures/invoice.js';
import { waitForJob } from '../helpers/async-jobs.js';
import { type StackProcess, startStackProcess } from '../helpers/child-stack.js';
import { type Api, createApi } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';
import { descendantsOf } from '../helpers/process-tree.js';
import { reportRatio } from '../helpers/timing.js';

const PAGES = 1000;
/** One section per page: a heading and a table that fits on an A4 page, each after a page break. */
const REPORT = `<!doctype html><html><head><meta charset="utf-8"><style>
  body { font-family: sans-serif; font-size: 9pt; margin: 0; }
  section.b { break-before: page; }
  h2 { font-size: 13pt; margin: 0 0 6pt; }
  table { width: 100%; border-collapse: collapse; }
  td { padding: 2pt 4pt; border-bottom: 1px solid #dde; }
  td.n { text-align: right; }
</style></head><body>
{% for p in range(1, pages + 1) %}<section{% if not loop.first %} class="b"{% endif %}><h2>Section {{ p }} of {{ pages }}</h2><table>{% for r in range(rows) %}<tr><td>{{ p }}.{{ r }}</td><td>Item {{ (p * 7 + r) % 97 }}</td><td class="n">{{ "%.2f"|format(((p * 31 + r * 17) % 1000) / 3) }}</td></tr>{% endfor %}</table></section>{% endfor %}
</body></html>`;

let stack: StackProcess;
let api: Api;
let token: string;

beforeAll(async () => {
  stack = await startStackProcess({
    PLANS: JSON.stringify({
      free: { monthlyRenders: 10_000, rendersPerMinute: 10_000, concurrentRenders: 100 },
    }),
  });
  api = createApi(stack.baseUrl);
  token = await stack.sessionToken('async-measure');
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** Resident memory of the stack's process and its descendants (Chromium's processes), in bytes. */
const treeRss = async (root: number): Promise<number> => {
  const rows: { pid: number; ppid: number; rss: number }[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      rows.push({ pid: Number(entry), ppid: Number(fields[1]), rss: Number(fields[21]) * 4096 });
    } catch {
      // gone meanwhile
    }
  }
  return descendantsOf(root, rows).reduce((sum, r) => sum + r.rss, 0);
};

const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
};

it('an async invoice answers 202 in a fraction of a sync render’s time (p50)', {
  timeout: 180_000,
}, async () => {
  const body = { html: INVOICE_TEMPLATE, variables: invoiceVariables() };
  // Warm up both paths (Chromium, the templating worker, the SDK clients).
  await api('/v1/pdf', { method: 'POST', token, body });
  await api('/v1/pdf', { method: 'POST', token, body: { ...body, async: true } });
  const timed = async (async: boolean) => {
    const started = performance.now();
    const res = await api('/v1/pdf', {
      method: 'POST',
      token,
      body: { ...body, ...(async ? { async } : {}) },
    });
    const ms = performance.now() - started;
    expect(res.status, res.text).toBe(async ? 202 : 201);
    return { ms, id: res.json.id as string };
  };
  const syncMs: number[] = [];
  const asyncMs: number[] = [];
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) {
    syncMs.push((await timed(false)).ms);
    const accepted = await timed(true);
    asyncMs.push(accepted.ms);
    ids.push(accepted.id);
  }
  for (const id of ids) expect((await waitForJob(api, token, id)).status).toBe('completed');
  const p50 = { sync: percentile(syncMs, 50), async: percentile(asyncMs, 50) };
  console.info(
    `async invoice 202: p50 ${p50.async.toFixed(1)} ms, p90 ${percentile(asyncMs, 90).toFixed(1)} ms; ` +
      `the same invoice sync (201, rendered): p50 ${p50.sync.toFixed(1)} ms`,
  );
  reportRatio(
    'async large document: the 202 against the same invoice rendered sync (p50)',
    p50.async / p50.sync,
    0.5,
  );
  expect(p50.async).toBeLessThan(p50.sync / 2);
});

it(`an async render of a ${PAGES}-page report completes with ${PAGES} pages`, {
  timeout: 900_000,
}, async () => {
  const baseline = await treeRss(stack.pid);
  let peak = baseline;
  const sampler = setInterval(() => {
    treeRss(stack.pid).then(
      (rss) => {
        peak = Math.max(peak, rss);
      },
      () => {},
    );
  }, 250);
  const started = performance.now();
  try {
    const res = await api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: REPORT, variables: { pages: PAGES, rows: 30 }, async: true },
    });
    expect(res.status, res.text).toBe(202);
    const job = await waitForJob(api, token, res.json.id, 840_000);
    const totalMs = performance.now() - started;
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    const bytes = new Uint8Array(await (await fetch(job.download_url)).arrayBuffer());
    const pdf = await readPdf(bytes);
    expect(pdf.pageCount).toBe(PAGES);
    expect(job.page_count).toBe(PAGES);
    expect(pdf.pages[PAGES - 1]?.text).toContain(`Section ${PAGES} of ${PAGES}`);
    console.info(
      `async ${PAGES}-page report: completed ${(totalMs / 1000).toFixed(1)} s after the request ` +
        `(render ${(job.render_duration_ms / 1000).toFixed(1)} s), ${(bytes.length / 2 ** 20).toFixed(1)} MiB, ` +
        `${pdf.pageCount} pages; stack processes (Node + Chromium) RSS ${(baseline / 2 ** 20).toFixed(0)} MiB before, ` +
        `peak ${(peak / 2 ** 20).toFixed(0)} MiB`,
    );
  } finally {
    clearInterval(sampler);
  }
});
