/**
 * The templating cost per invoice: the invoice fixture's Jinja2 template executed with its
 * variables, once by the engine in this process and once through the renderer's worker pool (as
 * a render gets it: a message each way to a warm worker), against the goal of 2 ms at p50.
 *
 *   npx tsx test/bench/templating.ts                    # the templating part alone (a few seconds)
 *   npx tsx test/bench/templating.ts --iterations 2000
 *
 * Then the cost of reading 1 MiB of `variables`, side by side with JSON.parse (template-data.ts).
 *
 * `npm run bench` runs it too (its first phase) and reports it with the rest.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createTemplatingPool } from '../../functions/renderer/templating-pool.js';
import { DEFAULT_MAX_OUTPUT_BYTES, renderTemplate } from '../../functions/templating/index.js';
import { INVOICE_TEMPLATE, invoiceVariables } from './fixtures/invoice.js';
import { percentile } from './lib/stats.js';
import { measureTemplateData, templateDataLines } from './template-data.js';

/** The goal: templating adds no more than this per invoice at p50. */
export const TEMPLATING_GOAL_MS = 2;

export interface TemplatingSummary {
  readonly n: number;
  /** ms, to the hundredth: an invoice takes well under a millisecond in process. */
  readonly p50: number;
  readonly p95: number;
  readonly max: number;
}

export interface TemplatingResult {
  readonly iterations: number;
  readonly htmlBytes: number;
  /** The first render in this process: parsing and the engine's warm-up included (later renders hit the parse cache). */
  readonly firstRenderMs: number;
  /** renderTemplate() in this process, parse cache warm. */
  readonly inProcess: TemplatingSummary;
  /** templatingPool.render(): post to a warm worker, render there, answer back. */
  readonly pool: TemplatingSummary;
  readonly goalMs: number;
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

const summarize = (samples: readonly number[]): TemplatingSummary => {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: round2(percentile(sorted, 50)),
    p95: round2(percentile(sorted, 95)),
    max: round2(sorted.at(-1) ?? Number.NaN),
  };
};

export const measureTemplating = async (iterations = 500, warmup = 50): Promise<TemplatingResult> => {
  // What the renderer gets: variables that went through JSON.
  const variables = JSON.parse(JSON.stringify(invoiceVariables())) as Record<string, unknown>;
  const options = { maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES };

  const firstStarted = performance.now();
  const html = renderTemplate(INVOICE_TEMPLATE, variables, options);
  const firstRenderMs = round2(performance.now() - firstStarted);

  const local: number[] = [];
  for (let i = 0; i < warmup + iterations; i++) {
    const started = performance.now();
    renderTemplate(INVOICE_TEMPLATE, variables, options);
    if (i >= warmup) local.push(performance.now() - started);
  }

  const pool = createTemplatingPool({ maxWorkers: 1 });
  const remote: number[] = [];
  try {
    for (let i = 0; i < warmup + iterations; i++) {
      const started = performance.now();
      const outcome = await pool.render(INVOICE_TEMPLATE, variables, options);
      const ms = performance.now() - started;
      if (!outcome.ok) throw new Error(`templating pool: ${outcome.code}: ${outcome.message}`);
      if (outcome.html !== html) throw new Error('templating pool: the worker rendered different HTML');
      if (i >= warmup) remote.push(ms);
    }
  } finally {
    await pool.close();
  }

  return {
    iterations,
    htmlBytes: Buffer.byteLength(html),
    firstRenderMs,
    inProcess: summarize(local),
    pool: summarize(remote),
    goalMs: TEMPLATING_GOAL_MS,
  };
};

/** One line for the report. */
export const templatingLine = (r: TemplatingResult): string =>
  `Templating per invoice (${r.htmlBytes} bytes of HTML, ${r.iterations} renders): ` +
  `in process p50 ${r.inProcess.p50} ms, p95 ${r.inProcess.p95} ms; ` +
  `through the worker pool p50 ${r.pool.p50} ms, p95 ${r.pool.p95} ms; ` +
  `first render of a fresh process (parse and warm-up) ${r.firstRenderMs} ms; goal ≤ ${r.goalMs} ms at p50: ` +
  `${r.pool.p50 <= r.goalMs ? 'met' : 'NOT MET'}`;

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: { iterations: { type: 'string' }, help: { type: 'boolean', default: false } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write('usage: npx tsx test/bench/templating.ts [--iterations N]\n');
    process.exit(0);
  }
  const iterations = values.iterations ? Math.max(1, Number(values.iterations)) : 500;
  const result = await measureTemplating(iterations);
  process.stdout.write(`${templatingLine(result)}\n`);
  // Reading 1 MiB of variables, side by side with JSON.parse (test/bench/template-data.ts).
  for (const line of templateDataLines(measureTemplateData())) process.stdout.write(`${line}\n`);
}
