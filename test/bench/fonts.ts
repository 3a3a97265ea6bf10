/**
 * What the fonts cost: the renderer alone in its own process (renderer-host.ts, as the renderer
 * Lambda runs it) started without the layer's fonts and with them, from spawn to its first PDF
 * (a cold start, Chromium already on disk) and per render after that, for the invoice and the
 * page in every script (test/fixtures/multilingual.ts).
 *
 *   npx tsx test/bench/fonts.ts             # this part alone (about a minute)
 *   npx tsx test/bench/fonts.ts --runs 5    # cold starts per variant (default 3)
 *
 * The variants:
 * - without: @sparticuz/chromium's own fontconfig (Open Sans alone), as the renderer Lambda
 *   printed before the fonts;
 * - cold cache: the fonts in a directory fontconfig has never seen, as every Lambda cold start
 *   finds them (the cache is built during Chromium's launch);
 * - warm cache: the same fonts once their cache exists (a later launch in the same environment,
 *   or the local stack).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import chromium from '@sparticuz/chromium';
import { renderOptionsFrom } from '../../functions/domain/renders/render-options.js';
import type { RenderRequest } from '../../functions/renderer/contract.js';
import { assembleFonts, resolveLayerFonts } from '../../lib/layer-fonts.js';
import { multilingualHtml } from '../fixtures/multilingual.js';
import { INVOICE_TEMPLATE, invoiceVariables } from './fixtures/invoice.js';
import { cpuOfTree } from './lib/proc.js';
import { bar, note, progress } from './lib/progress.js';
import { type Summary, summarize } from './lib/stats.js';
import { ROOT } from './service.js';

const VARIANTS = ['without', 'cold cache', 'warm cache'] as const;
type Variant = (typeof VARIANTS)[number];
const DOCUMENTS = ['multilingual', 'invoice'] as const;
type DocumentName = (typeof DOCUMENTS)[number];

interface Sample {
  readonly wallMs: number;
  readonly bytes: number;
}

export interface FontsResult {
  readonly runs: number;
  readonly iterations: number;
  readonly variants: Record<
    Variant,
    {
      /** Spawn → first PDF (the multilingual page), ms. */
      readonly firstPdfMs: Summary;
      /**
       * CPU Chromium's processes spent by then, ms: the cold start's cost, which the machine's
       * load hardly changes (wall times do).
       */
      readonly chromiumCpuToFirstPdfMs: Summary;
      /** Per render after the first, ms, and the last PDF's size. */
      readonly documents: Record<DocumentName, Summary & { readonly pdfBytes: number }>;
    }
  >;
}

const documents: Record<DocumentName, { template: RenderRequest['template'] }> = {
  multilingual: { template: { source: `{% raw %}${multilingualHtml()}{% endraw %}`, variables: {} } },
  invoice: { template: { source: INVOICE_TEMPLATE, variables: invoiceVariables() } },
};
const OPTIONS = renderOptionsFrom({}, 25_000);

/** One cold start of renderer-host.ts with this environment: its first PDF, then `iterations` of each document. */
const coldStart = async (
  env: Record<string, string | undefined>,
  iterations: number,
  onProgress: (done: number, total: number) => void,
): Promise<{ firstPdfMs: number; chromiumCpuMs: number; samples: Record<DocumentName, Sample[]> }> => {
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'test/bench/renderer-host.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  let firstPdfMs: number | undefined;
  let chromiumCpuMs = Number.NaN;
  const run = (name: DocumentName, n: number, warmup: number): Promise<Sample[]> =>
    new Promise((resolve, reject) => {
      const onMessage = (m: {
        type: string;
        done?: number;
        message?: string;
        samples?: { wallMs: number; bytes: number }[];
      }) => {
        if (m.type === 'progress') {
          if (firstPdfMs === undefined) {
            firstPdfMs = performance.now() - started;
            chromiumCpuMs = cpuOfTree(child.pid as number).descendantsMs;
          }
          onProgress(m.done ?? 0, n + warmup);
        } else if (m.type === 'result') {
          child.off('message', onMessage);
          resolve(m.samples ?? []);
        } else if (m.type === 'error') {
          child.off('message', onMessage);
          reject(new Error(m.message));
        }
      };
      child.on('message', onMessage);
      child.send({ type: 'run', ...documents[name], options: OPTIONS, iterations: n, warmup });
    });
  try {
    // The first render is the cold start's; then a warm-up of two and the measured renders.
    await run('multilingual', 1, 0);
    const samples = {} as Record<DocumentName, Sample[]>;
    for (const name of DOCUMENTS) samples[name] = await run(name, iterations, 2);
    return { firstPdfMs: firstPdfMs ?? Number.NaN, chromiumCpuMs, samples };
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.send({ type: 'exit' });
    await exited;
  }
};

export const measureFonts = async (runs: number, iterations: number): Promise<FontsResult> => {
  chromium.setGraphicsMode = false;
  await chromium.executablePath(); // also inflates @sparticuz/chromium's fonts.conf into /tmp/fonts
  const fonts = resolveLayerFonts(ROOT);
  const scratch = mkdtempSync(join(tmpdir(), 'pdf-bench-fonts-'));
  const { FONTCONFIG_FILE: _shell, ...shell } = process.env;
  const base = { ...shell, POWERTOOLS_LOG_LEVEL: 'ERROR' };
  /** A fonts directory of its own (so no fontconfig cache knows it yet) and a cache directory. */
  const freshFonts = (name: string) => {
    const dir = join(scratch, name);
    assembleFonts(fonts, join(dir, 'fonts'), 'link');
    return { FONTCONFIG_FILE: join(dir, 'fonts', 'fonts.conf'), XDG_CACHE_HOME: join(dir, 'cache') };
  };
  const warm = freshFonts('warm');
  const envOf = (variant: Variant, run: number): Record<string, string | undefined> => {
    if (variant === 'without') return { ...base, FONTCONFIG_FILE: join(tmpdir(), 'fonts', 'fonts.conf') };
    if (variant === 'cold cache') return { ...base, ...freshFonts(`cold-${run}`) };
    return { ...base, ...warm };
  };
  try {
    // Builds the warm variant's cache.
    await coldStart(envOf('warm cache', 0), 1, () => progress('fonts      priming the warm cache'));
    const collected = Object.fromEntries(
      VARIANTS.map((v) => [
        v,
        { first: [] as number[], cpu: [] as number[], docs: {} as Record<DocumentName, Sample[]> },
      ]),
    ) as Record<Variant, { first: number[]; cpu: number[]; docs: Record<DocumentName, Sample[]> }>;
    // Variants interleaved run by run, so a slow moment of the machine does not land on one alone.
    for (let run = 1; run <= runs; run++) {
      for (const variant of VARIANTS) {
        const r = await coldStart(envOf(variant, run), iterations, (done, total) =>
          progress(`fonts      ${variant.padEnd(11)} run ${run}/${runs} ${bar(done, total)}`),
        );
        collected[variant].first.push(r.firstPdfMs);
        collected[variant].cpu.push(r.chromiumCpuMs);
        for (const name of DOCUMENTS) {
          collected[variant].docs[name] = [...(collected[variant].docs[name] ?? []), ...r.samples[name]];
        }
      }
    }
    const variants = Object.fromEntries(
      VARIANTS.map((v) => {
        const c = collected[v];
        const docs = Object.fromEntries(
          DOCUMENTS.map((name) => [
            name,
            { ...summarize(c.docs[name].map((s) => s.wallMs)), pdfBytes: c.docs[name].at(-1)?.bytes ?? 0 },
          ]),
        ) as FontsResult['variants'][Variant]['documents'];
        return [
          v,
          { firstPdfMs: summarize(c.first), chromiumCpuToFirstPdfMs: summarize(c.cpu), documents: docs },
        ];
      }),
    ) as FontsResult['variants'];
    return { runs, iterations, variants };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
};

export const fontsLines = (r: FontsResult): string[] => {
  const pad = (s: string | number, n: number): string => String(s).padStart(n);
  const lines = [
    `Fonts: the renderer alone (renderer-host.ts), ${r.runs} cold starts per variant, p50 ms (PDF size of the multilingual page)`,
    `${'variant'.padEnd(40)}${pad('first PDF', 10)}${pad('(Chromium CPU)', 15)}${pad('multilingual', 13)}${pad('invoice', 9)}${pad('PDF', 9)}`,
  ];
  const label: Record<Variant, string> = {
    without: 'without (Open Sans only, as before)',
    'cold cache': 'with the fonts, cold fontconfig cache',
    'warm cache': 'with the fonts, warm fontconfig cache',
  };
  for (const v of VARIANTS) {
    const x = r.variants[v];
    lines.push(
      `${label[v].padEnd(40)}${pad(Math.round(x.firstPdfMs.p50), 10)}${pad(Math.round(x.chromiumCpuToFirstPdfMs.p50), 15)}${pad(Math.round(x.documents.multilingual.p50), 13)}${pad(
        Math.round(x.documents.invoice.p50),
        9,
      )}${pad(`${Math.round(x.documents.multilingual.pdfBytes / 1024)} KB`, 9)}`,
    );
  }
  return lines;
};

// Alone: `npx tsx test/bench/fonts.ts`.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { runs: { type: 'string' }, iterations: { type: 'string' } } });
  const result = await measureFonts(Number(values.runs ?? 3), Number(values.iterations ?? 20));
  note('done');
  process.stdout.write(`${fontsLines(result).join('\n')}\n`);
}
