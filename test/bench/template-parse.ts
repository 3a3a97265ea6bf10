/**
 * Parse time against template size (issue 21): parse and introspection (parseTemplate: what the
 * API does with every template it is given) of 64 KiB, 256 KiB and 1 MiB templates, each of a new
 * source (a parse is cached by its source), in this process, CPU time of the thread and wall time.
 * Two shapes: the invoice fixture's rows written out up to the size (markup with a few tags a
 * line, the usual kind), and nothing but expressions (`{{ vN ~ wM }}` lines, the costliest kind
 * per byte). Linear means each size's time per KiB stays about the same; the goal is 1 MiB of the
 * usual kind in under 100 ms.
 *
 *   npx tsx test/bench/template-parse.ts
 *
 * `npm run bench` runs it too (with the templating phase) and reports it with the rest.
 */
import { pathToFileURL } from 'node:url';
import { parseTemplate } from '../../functions/templating/index.js';
import { invoiceOfSize } from './fixtures/invoice.js';

/** The goal for 1 MiB of the usual kind. */
export const PARSE_GOAL_MS = 100;
export const PARSE_SIZES_KIB = [64, 256, 1024] as const;

const SHAPES = {
  invoice: (bytes: number, n: number) => `<!-- ${n} -->${invoiceOfSize(bytes)}`,
  expressions: (bytes: number, n: number) =>
    Array.from({ length: Math.ceil(bytes / 24) }, (_, i) => `{{ v${i} ~ w${(i + n) % 7} }}\n`).join(''),
} as const;
type Shape = keyof typeof SHAPES;

export interface ParseSample {
  readonly shape: Shape;
  readonly kib: number;
  /** Median over the runs: this thread's CPU time, and wall time. */
  readonly cpuMs: number;
  readonly wallMs: number;
}

export interface ParseResult {
  readonly samples: readonly ParseSample[];
  readonly goalMs: number;
}

const threadCpuMs = (): number => {
  const usage =
    (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.() ?? process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round((sorted[Math.floor(sorted.length / 2)] ?? Number.NaN) * 10) / 10;
};

export const measureTemplateParse = (runs = 5): ParseResult => {
  let n = 0;
  // The parser compiled (V8's optimising tiers) before anything is timed, as a warm API function has it.
  for (const make of Object.values(SHAPES))
    for (let i = 0; i < 3; i++) parseTemplate(make(256 * 1024, n++), { cache: false });
  const samples: ParseSample[] = [];
  for (const shape of Object.keys(SHAPES) as Shape[]) {
    for (const kib of PARSE_SIZES_KIB) {
      const cpu: number[] = [];
      const wall: number[] = [];
      for (let i = 0; i < runs; i++) {
        const source = SHAPES[shape](kib * 1024, n++);
        const cpuStarted = threadCpuMs();
        const started = performance.now();
        parseTemplate(source, { cache: false });
        wall.push(performance.now() - started);
        cpu.push(threadCpuMs() - cpuStarted);
      }
      samples.push({ shape, kib, cpuMs: median(cpu), wallMs: median(wall) });
    }
  }
  return { samples, goalMs: PARSE_GOAL_MS };
};

/** Lines for the report: each shape's times by size, their time per KiB, and the goal. */
export const templateParseLines = (r: ParseResult): string[] =>
  (Object.keys(SHAPES) as Shape[]).map((shape) => {
    const rows = r.samples.filter((s) => s.shape === shape);
    const sizes = rows
      .map((s) => `${s.kib} KiB ${s.cpuMs} ms (${(s.cpuMs / s.kib).toFixed(3)} ms/KiB)`)
      .join(', ');
    const mib = rows.find((s) => s.kib === 1024);
    const goal =
      shape === 'invoice' && mib
        ? `; goal 1 MiB < ${r.goalMs} ms: ${mib.cpuMs < r.goalMs ? 'met' : 'NOT MET'}`
        : '';
    return `Template parse, ${shape} (CPU ms, median): ${sizes}${goal}`;
  });

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of templateParseLines(measureTemplateParse())) process.stdout.write(`${line}\n`);
}
