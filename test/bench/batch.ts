/**
 * A batch of invoices against the same invoices rendered synchronously at the same concurrency
 * (issue 20: throughput within 10%). The local stack runs in its own process on a fresh DATA_DIR
 * with ASYNC_CONCURRENCY consumers; the sync run keeps that many requests in flight. Each run is
 * preceded by a warm-up of its own kind.
 *
 *   npx tsx test/bench/batch.ts            # 1,000 items, concurrency 2
 *   BATCH_BENCH_ITEMS=200 BATCH_BENCH_CONCURRENCY=2 npx tsx test/bench/batch.ts
 *   BATCH_BENCH_SYNC=0 npx tsx test/bench/batch.ts  # the batch alone (profiling); no ratio
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { RENDER_RUN_MAX_ITEMS, renderWorker } from '../../functions/consumers.js';
import { startStackProcess } from '../helpers/child-stack.js';
import { PRICES, readMemorySettings } from './cost.js';
import { INVOICE_TEMPLATE, invoiceVariables } from './fixtures/invoice.js';
import { cpuByKind } from './lib/proc.js';

const ITEMS = Number(process.env.BATCH_BENCH_ITEMS ?? 1000);
const CONCURRENCY = Number(process.env.BATCH_BENCH_CONCURRENCY ?? 2);
const WARM_UP = 10;
/** BATCH_BENCH_SYNC=0: the batch alone, without the sync run it is compared with. */
const WITH_SYNC = process.env.BATCH_BENCH_SYNC !== '0';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const variables = (i: number) => ({
  ...invoiceVariables(),
  invoice: { ...(invoiceVariables().invoice as object), number: `INV-${String(i).padStart(5, '0')}` },
});

const stack = await startStackProcess(
  {
    ASYNC_CONCURRENCY: String(CONCURRENCY),
    PLANS: JSON.stringify({
      free: { monthlyRenders: 1_000_000, rendersPerMinute: 1_000_000, concurrentRenders: CONCURRENCY },
    }),
  },
  120_000,
);
/** The API over HTTP, as a client calls it (the test helpers' client needs vitest). */
const api = async (path: string, o: { method?: string; token: string; body?: unknown }) => {
  const res = await fetch(`${stack.baseUrl}${path}`, {
    method: o.method ?? 'GET',
    headers: { authorization: `Bearer ${o.token}`, 'content-type': 'application/json' },
    ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
  const json: any = text ? JSON.parse(text) : undefined;
  return { status: res.status, text, json };
};

try {
  const token = await stack.sessionToken('batch-bench');

  const syncRun = async (count: number): Promise<number> => {
    const started = performance.now();
    let next = 0;
    let failed = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < count) {
          const i = next++;
          const res = await api('/v1/pdf', {
            method: 'POST',
            token,
            body: { html: INVOICE_TEMPLATE, variables: variables(i) },
          });
          if (res.status !== 201) failed++;
        }
      }),
    );
    if (failed > 0) throw new Error(`${failed} sync renders failed`);
    return performance.now() - started;
  };

  const batchRun = async (count: number): Promise<number> => {
    const started = performance.now();
    const res = await api('/v1/batches', {
      method: 'POST',
      token,
      body: {
        html: INVOICE_TEMPLATE,
        items: Array.from({ length: count }, (_, i) => ({ variables: variables(i) })),
      },
    });
    if (res.status !== 202) throw new Error(`batch refused: ${res.text}`);
    const accepted = performance.now() - started;
    for (;;) {
      const batch = (await api(`/v1/batches/${res.json.id}`, { token })).json;
      if (batch.status === 'completed') {
        if (batch.counts.failed > 0) throw new Error(`${batch.counts.failed} batch jobs failed`);
        break;
      }
      // As a client would poll (each read counts the batch's open jobs from its index).
      await sleep(2000);
    }
    const ms = performance.now() - started;
    console.info(`  batch of ${count}: accepted (202) in ${accepted.toFixed(0)} ms`);
    return ms;
  };

  /** A run's wall time, and the stack's CPU per item (Node, Chromium): what other load does not change. */
  const measured = async (run: () => Promise<number>) => {
    const before = cpuByKind(stack.pid);
    const load = loadavg()[0] as number;
    const ms = await run();
    const after = cpuByKind(stack.pid);
    return {
      ms,
      nodeMsPerItem: (after.nodeMs - before.nodeMs) / ITEMS,
      chromiumMsPerItem: (after.chromiumMs - before.chromiumMs) / ITEMS,
      load: `${load.toFixed(2)} → ${(loadavg()[0] as number).toFixed(2)}`,
    };
  };
  /** The runs the renderer logged (batch-run lines of the stack's output) since `from` lines. */
  const runLines = () => readFileSync(stack.outputFile, 'utf8').split('\n');
  const runsSince = (from: number) => {
    const runs = runLines()
      .slice(from)
      .filter((l) => l.includes('"batch-run"'))
      .map((l) => JSON.parse(l) as { items: number; rendered: number; contexts: number });
    const sum = (k: 'items' | 'rendered' | 'contexts') => runs.reduce((n, r) => n + r[k], 0);
    return `${runs.length} runs given ${sum('items')} items, rendered ${sum('rendered')}, in ${sum('contexts')} contexts`;
  };
  const cpu = (m: Awaited<ReturnType<typeof measured>>) =>
    `CPU per item ${m.nodeMsPerItem.toFixed(1)} ms Node + ${m.chromiumMsPerItem.toFixed(1)} ms Chromium; load average ${m.load}`;

  if (!WITH_SYNC) {
    await batchRun(WARM_UP);
    const from = runLines().length;
    const batch = await measured(() => batchRun(ITEMS));
    console.info(`${ITEMS} invoices as a batch: ${(batch.ms / 1000).toFixed(1)} s; ${cpu(batch)}`);
    console.info(`  ${runsSince(from)}`);
    console.info(
      `  the stack's CPU per invoice: ${(batch.nodeMsPerItem + batch.chromiumMsPerItem).toFixed(1)} ms`,
    );
    await stack.stop();
    process.exit(0);
  }
  await syncRun(WARM_UP);
  const sync = await measured(() => syncRun(ITEMS));
  const syncMs = sync.ms;
  console.info(`  sync run of ${ITEMS}: ${(syncMs / 1000).toFixed(1)} s`);
  await batchRun(WARM_UP);
  const from = runLines().length;
  const batch = await measured(() => batchRun(ITEMS));
  const batchMs = batch.ms;
  console.info(`  batch: ${runsSince(from)}`);
  const rate = (ms: number) => (ITEMS / (ms / 1000)).toFixed(2);
  console.info(`${ITEMS} invoices at concurrency ${CONCURRENCY}:`);
  console.info(`  sync:  ${(syncMs / 1000).toFixed(1)} s, ${rate(syncMs)} PDFs/s`);
  console.info(`  batch: ${(batchMs / 1000).toFixed(1)} s, ${rate(batchMs)} PDFs/s`);
  console.info(`  batch throughput / sync throughput: ${(syncMs / batchMs).toFixed(3)}`);
  console.info(`  sync:  ${cpu(sync)}`);
  console.info(`  batch: ${cpu(batch)}`);
  const stackCpu = (m: typeof batch) => m.nodeMsPerItem + m.chromiumMsPerItem;
  console.info(
    `  the stack's CPU per invoice: batch ${stackCpu(batch).toFixed(1)} ms, sync ${stackCpu(sync).toFixed(1)} ms ` +
      `(batch / sync ${(stackCpu(batch) / stackCpu(sync)).toFixed(3)}); target ≤ 80 ms, throughput ≥ 2× sync`,
  );
  // The Lambda cost of 1,000 batch invoices (issue 43). A render is CPU-bound: the async renderer
  // is billed, per item, the stack's CPU per item here (an upper bound: it counts the API, the
  // table and the bucket emulators too) on the share of a vCPU its memory buys (a full one from
  // 1,769 MiB); the render worker waits for it as long. One invocation of each per run of up to
  // RENDER_RUN_MAX_ITEMS items.
  const { rendererMiB } = readMemorySettings();
  const vcpu = Math.min(1, rendererMiB / 1769);
  const lambdaPer1000 = (cpuMsPerItem: number, itemsPerInvoke: number) => {
    const seconds = (1000 * cpuMsPerItem) / vcpu / 1000;
    const renderer = seconds * (rendererMiB / 1024) * PRICES.lambdaX86PerGbSecond;
    const consumer = seconds * (renderWorker.memorySizeMiB / 1024) * PRICES.lambdaArmPerGbSecond;
    const requests = ((2 * 1000) / itemsPerInvoke) * (PRICES.lambdaPerMillionRequests / 1e6);
    return { total: renderer + consumer + requests, renderer, consumer, requests };
  };
  const dollars = (x: number) => `$${x.toFixed(4)}`;
  const asBatch = lambdaPer1000(stackCpu(batch), RENDER_RUN_MAX_ITEMS);
  const asSingles = lambdaPer1000(stackCpu(sync), 1);
  console.info(
    `  Lambda per 1,000 batch invoices (renderer ${rendererMiB} MiB, render worker ${renderWorker.memorySizeMiB} MiB, ` +
      `${PRICES.region} list prices): ${dollars(asBatch.total)} (renderer ${dollars(asBatch.renderer)}, ` +
      `render worker ${dollars(asBatch.consumer)}, requests ${dollars(asBatch.requests)}); ` +
      `at sync's CPU per item, one invocation each: ${dollars(asSingles.total)}`,
  );
} finally {
  await stack.stop();
}
