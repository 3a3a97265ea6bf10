/**
 * Reading 1 MiB of `variables` as template data (parseTemplateData) side by side with JSON.parse,
 * one run, in this process: the goal is at most 5 ms more than JSON.parse. Three
 * documents: a typical one (strings, small ints, fractional floats), one keyed by integer-like
 * strings (years, ids), and one full of integral floats and big integers. Each is also read as
 * the API handles it: as text for the renderer, from a whole body whose JSON.parse it already has.
 *
 *   npx tsx test/bench/template-data.ts
 */
import { pathToFileURL } from 'node:url';
import { parseTemplateData, readTemplateDataText } from '../../functions/templating/index.js';

/** The goal: a 1 MiB `variables` costs at most this much more than JSON.parse. */
export const TEMPLATE_DATA_GOAL_MS = 5;
const MiB = 1024 * 1024;

/** Rows of about 250 bytes of JSON each, until `variables` holds `bytes`. */
const documentOf = (bytes: number, row: (i: number) => string, wrap = (rows: string) => `[${rows}]`) => {
  const rows: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const r = row(i);
    rows.push(r);
    size += r.length + 1;
  }
  return `{"title": "Statement", "rows": ${wrap(rows.join(','))}}`;
};

export const TEMPLATE_DATA_DOCUMENTS: Readonly<Record<string, string>> = {
  typical: documentOf(
    MiB,
    (i) =>
      `{"sku": "SKU-${i}", "description": "Consulting, week ${i % 52} — on site (Zürich)", "qty": ${i % 7}, ` +
      `"unit_price": ${(i * 13) % 1000}.${(i % 89) + 10}, "vat": 0.19, "date": "2026-11-${String((i % 28) + 1).padStart(2, '0')}", "paid": ${i % 2 === 0}}`,
  ),
  'integer-like keys': documentOf(
    MiB,
    (i) =>
      `"${1000 + i}": {"2024": ${i}, "2023": ${i + 1}, "2019": "${i % 3}", "note": "row ${i}", "amount": ${i}.5}`,
    (rows) => `{${rows}}`,
  ),
  'integral floats and big ints': documentOf(
    MiB,
    (i) =>
      `{"order": ${123456789012345678n + BigInt(i)}, "amount": ${i}.0, "grams": 1e3, "rate": ${i % 10}.50, ` +
      `"label": "line ${i} of 1.0 and 10.0, more", "n": ${i}}`,
  ),
};

export interface TemplateDataResult {
  readonly document: string;
  readonly bytes: number;
  /** Median CPU ms of the same runs, side by side (garbage collection of earlier runs included). */
  readonly jsonParseMs: number;
  readonly parseTemplateDataMs: number;
  /** What the API does: `variables` as text for the renderer (readTemplateDataText), from a whole body it has JSON.parse'd. */
  readonly fromParsedBodyMs: number;
  /** Best CPU ms of each (no collection falls in it). */
  readonly best: { readonly jsonParseMs: number; readonly parseTemplateDataMs: number };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** CPU ms of this thread's process (the machine is shared: wall time counts others' work). */
const time = (f: () => unknown): number => {
  const before = process.cpuUsage();
  f();
  const { user, system } = process.cpuUsage(before);
  return (user + system) / 1000;
};

export const measureTemplateData = (runs = 15): TemplateDataResult[] =>
  Object.entries(TEMPLATE_DATA_DOCUMENTS).map(([document, variables]) => {
    const body = `{"html": "<p>{{ title }}</p>", "variables": ${variables}}`;
    const parsedBody = JSON.parse(body) as unknown;
    const a: number[] = [];
    const b: number[] = [];
    const c: number[] = [];
    for (let i = 0; i < runs + 3; i++) {
      // Interleaved, so that the machine's load falls on each alike.
      const x = time(() => JSON.parse(variables));
      const y = time(() => parseTemplateData(variables));
      // What the API does with them: the text for the renderer, from the body it has parsed.
      const z = time(() => readTemplateDataText(body, { member: 'variables', parsed: parsedBody }));
      if (i >= 3) {
        a.push(x);
        b.push(y);
        c.push(z);
      }
    }
    const r = (n: number) => Math.round(n * 10) / 10;
    return {
      document,
      bytes: Buffer.byteLength(variables),
      jsonParseMs: r(median(a)),
      parseTemplateDataMs: r(median(b)),
      fromParsedBodyMs: r(median(c)),
      best: { jsonParseMs: r(Math.min(...a)), parseTemplateDataMs: r(Math.min(...b)) },
    };
  });

export const templateDataLines = (results: readonly TemplateDataResult[]): string[] =>
  results.map(
    (r) =>
      `Template data, 1 MiB ${r.document}: JSON.parse ${r.jsonParseMs} ms, parseTemplateData ${r.parseTemplateDataMs} ms ` +
      `(+${Math.round((r.parseTemplateDataMs - r.jsonParseMs) * 10) / 10} ms), the API's text for the renderer from its parsed body ${r.fromParsedBodyMs} ms ` +
      `(CPU medians; best ${r.best.jsonParseMs} vs ${r.best.parseTemplateDataMs} ms); ` +
      `goal ≤ +${TEMPLATE_DATA_GOAL_MS} ms: ${r.parseTemplateDataMs - r.jsonParseMs <= TEMPLATE_DATA_GOAL_MS ? 'met' : 'NOT MET'}`,
  );

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of templateDataLines(measureTemplateData())) process.stdout.write(`${line}\n`);
}
