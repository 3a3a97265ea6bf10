/**
 * The visual gate for a Chromium upgrade (`npm run chromium:check`, bin/chromium-check.ts): prints
 * each fixture (fixtures.ts) with the renderer and the Chromium under test, draws every page with
 * poppler's pdftoppm at a low resolution, and compares it with the committed baseline page by
 * page with pixelmatch (anti-aliasing ignored; a share of differing pixels allowed per fixture).
 * It times each fixture too, wall time and CPU (the Node process and every Chromium process under
 * it), against the baseline's: Chromium upgrades have slowed printing several-fold before
 * (Gotenberg 8.2, gotenberg#819; puppeteer's page.pdf, #10071, #11494).
 *
 * Why pixelmatch (8.0.0, ISC, 60 KB, no dependencies; pngjs 7.0.0, MIT, to read and write the PNGs):
 * the most used pixel-diff library on npm (27 M downloads a week), pure JS, and it tells
 * anti-aliased edges from changed pixels, so a glyph rasterized a hair differently is not a
 * failure. @blazediff/core (MIT) is faster, which does not matter at this size (a page is
 * ~330 x 470 pixels: pixelmatch takes ~2 ms); odiff and looks-same need native binaries.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';
import { readRendererConfig } from '../../functions/core/config.js';
import { renderOptionsFrom } from '../../functions/domain/renders/render-options.js';
import type { CreatePdfBody } from '../../functions/pdf/request.js';
import { createRenderer, type RendererInstance } from '../../functions/renderer/renderer.js';
import { localFontconfigFile } from '../../lib/layer-fonts.js';
import { PROJECT_ROOT } from '../../lib/service-function.js';
import { startUploadSink, type UploadSink } from '../helpers/render-fixtures.js';
import type { CheckFixture } from './fixtures.js';

/** Low enough to keep the committed baselines small (a page is ~20 KB), high enough to see a glyph move. */
export const CHECK_DPI = 40;
/**
 * The median CPU a fixture may take, as a multiple of the baseline's, before the check fails: a
 * shared machine's CPU time varies by tens of per cent; the regressions above were 2x to 6x.
 */
export const MAX_CPU_RATIO = 2;
/**
 * And by at least this much: a fixture takes 80-200 ms of CPU, counted in 10 ms ticks, and a
 * loaded machine moves that by tens of ms (measured: 80 to 110 ms at load average 6 to 22).
 */
export const MIN_CPU_EXCESS_MS = 100;
export const BASELINE_DIR = join(PROJECT_ROOT, 'test', 'chromium-check', 'baselines');
const BASELINE_FILE = 'baseline.json';

export interface FixtureTiming {
  readonly wallMs: number;
  readonly cpuMs: number;
}

export interface Baseline {
  readonly chromium: string;
  readonly dpi: number;
  /** The 1-minute load average when the timings were taken: a loaded machine stretches them. */
  readonly loadAverage?: number;
  readonly fixtures: Record<string, FixtureTiming & { readonly pages: number }>;
}

export interface PageResult {
  readonly page: number;
  /** Differing pixels over all pixels; 1 when the page is missing on one side or its size changed. */
  readonly diffRatio: number;
  /** Differing pixels (0 when the page is missing or its size changed). */
  readonly pixels: number;
}

export interface FixtureResult {
  readonly name: string;
  readonly pages: number;
  readonly baselinePages: number | undefined;
  readonly pageResults: readonly PageResult[];
  readonly maxDiffRatio: number;
  readonly timing: FixtureTiming;
  readonly baselineTiming: FixtureTiming | undefined;
  readonly failures: readonly string[];
}

export interface CheckOptions {
  /** A Chromium binary (the next version's); default: the installed @sparticuz/chromium's. */
  readonly chromeExecutablePath?: string;
  /** What to call it in the report. */
  readonly chromiumLabel: string;
  /** Timed renders per fixture after one warm-up. */
  readonly runs: number;
  /** Write the pages and timings as the new baseline instead of comparing. */
  readonly update: boolean;
  readonly fixtures: readonly CheckFixture[];
  readonly baselineDir?: string;
  /** Where to keep each page's diff image (for a person to look at); none when absent. */
  readonly diffDir?: string;
}

/** CPU time (ms) of this process and every process under it, alive or reaped by a live one. */
const treeCpuMs = (): number => {
  const rows: { pid: number; ppid: number; ticks: number }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime, stime, cutime, cstime: fields 14-17, here 11-14 after the name.
      const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(f[i]), 0);
      rows.push({ pid: Number(entry), ppid: Number(f[1]), ticks });
    } catch {
      // gone meanwhile
    }
  }
  const members = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const r of rows)
      if (!members.has(r.pid) && members.has(r.ppid)) {
        members.add(r.pid);
        grew = true;
      }
  }
  const hz = 100;
  return (rows.filter((r) => members.has(r.pid)).reduce((s, r) => s + r.ticks, 0) * 1000) / hz;
};

const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

const renderOnce = async (
  renderer: RendererInstance,
  sink: UploadSink,
  fixture: CheckFixture,
  n: number,
): Promise<Buffer> => {
  const { html, variables, header_html, footer_html, ...options } = fixture.body;
  const url = `${sink.baseUrl}/${fixture.name}-${n}.pdf`;
  const result = await renderer.render({
    jobId: `job_chromium_check_${fixture.name}_${n}`,
    template: { source: html, variables: variables ?? {}, header: header_html, footer: footer_html },
    ...renderOptionsFrom(options as CreatePdfBody, 60_000),
    upload: { url, headers: {} },
    limits: { maxPdfBytes: 50 * 2 ** 20, maxPages: 1000, maxHtmlBytes: 10 * 2 ** 20 },
  });
  if (!result.ok) throw new Error(`chromium:check: ${fixture.name} failed: ${JSON.stringify(result)}`);
  const upload = sink.uploadOf(url);
  if (!upload) throw new Error(`chromium:check: ${fixture.name}: no PDF uploaded`);
  return upload.body;
};

/** Every page of `pdf` as pdftoppm draws it at CHECK_DPI, as PNG files. */
const rasterize = (pdf: Buffer): Buffer[] => {
  const dir = mkdtempSync(join(tmpdir(), 'chromium-check-'));
  try {
    writeFileSync(join(dir, 'doc.pdf'), pdf);
    execFileSync('pdftoppm', ['-r', String(CHECK_DPI), '-png', join(dir, 'doc.pdf'), join(dir, 'page')]);
    return readdirSync(dir)
      .filter((f) => f.startsWith('page') && f.endsWith('.png'))
      .sort((a, b) => Number(/(\d+)\.png$/.exec(a)?.[1]) - Number(/(\d+)\.png$/.exec(b)?.[1]))
      .map((f) => readFileSync(join(dir, f)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

const pageFile = (fixture: string, page: number) => `${fixture}-p${page}.png`;

/** The share of differing pixels, and the diff image (differences in red). */
export const comparePages = (
  a: Buffer,
  b: Buffer,
): { ratio: number; pixels: number; diff: Buffer | undefined } => {
  const left = PNG.sync.read(a);
  const right = PNG.sync.read(b);
  if (left.width !== right.width || left.height !== right.height)
    return { ratio: 1, pixels: 0, diff: undefined };
  const out = new PNG({ width: left.width, height: left.height });
  const differing = pixelmatch(left.data, right.data, out.data, left.width, left.height, { threshold: 0.1 });
  return { ratio: differing / (left.width * left.height), pixels: differing, diff: PNG.sync.write(out) };
};

export const runCheck = async (
  options: CheckOptions,
): Promise<{ results: FixtureResult[]; report: string }> => {
  const baselineDir = options.baselineDir ?? BASELINE_DIR;
  const baseline: Baseline | undefined = options.update
    ? undefined
    : JSON.parse(readFileSync(join(baselineDir, BASELINE_FILE), 'utf8'));
  const config = readRendererConfig({
    FONTCONFIG_FILE: localFontconfigFile(PROJECT_ROOT),
    ...(options.chromeExecutablePath ? { CHROME_EXECUTABLE_PATH: options.chromeExecutablePath } : {}),
  });
  const renderer = createRenderer(config);
  const sink = await startUploadSink();
  const results: FixtureResult[] = [];
  const fresh: { -readonly [K in keyof Baseline]: Baseline[K] } = {
    chromium: options.chromiumLabel,
    dpi: CHECK_DPI,
    fixtures: {},
  };
  try {
    const browserVersion = await (await renderer.browser.getBrowser()).version();
    for (const fixture of options.fixtures) {
      // The warm-up: the first print of a fixture loads its fonts.
      const pdf = await renderOnce(renderer, sink, fixture, 0);
      const walls: number[] = [];
      const cpus: number[] = [];
      for (let n = 1; n <= options.runs; n++) {
        const cpu = treeCpuMs();
        const started = performance.now();
        await renderOnce(renderer, sink, fixture, n);
        walls.push(performance.now() - started);
        cpus.push(treeCpuMs() - cpu);
      }
      const timing = { wallMs: Math.round(median(walls)), cpuMs: Math.round(median(cpus)) };
      const pages = rasterize(pdf);
      fresh.fixtures[fixture.name] = { ...timing, pages: pages.length };
      if (options.update) {
        for (const [i, png] of pages.entries())
          writeFileSync(join(baselineDir, pageFile(fixture.name, i + 1)), png);
        results.push({
          name: fixture.name,
          pages: pages.length,
          baselinePages: pages.length,
          pageResults: pages.map((_, i) => ({ page: i + 1, diffRatio: 0, pixels: 0 })),
          maxDiffRatio: fixture.maxDiffRatio,
          timing,
          baselineTiming: timing,
          failures: [],
        });
        continue;
      }
      const before = baseline?.fixtures[fixture.name];
      const failures: string[] = [];
      const pageResults: PageResult[] = [];
      const count = Math.max(pages.length, before?.pages ?? 0);
      for (let i = 0; i < count; i++) {
        const page = pages[i];
        let expected: Buffer | undefined;
        try {
          expected = readFileSync(join(baselineDir, pageFile(fixture.name, i + 1)));
        } catch {
          expected = undefined;
        }
        if (!page || !expected) {
          pageResults.push({ page: i + 1, diffRatio: 1, pixels: 0 });
          continue;
        }
        const { ratio, pixels, diff } = comparePages(expected, page);
        pageResults.push({ page: i + 1, diffRatio: ratio, pixels });
        if (options.diffDir && diff && ratio > 0)
          writeFileSync(join(options.diffDir, `${fixture.name}-p${i + 1}-diff.png`), diff);
      }
      if (before === undefined) failures.push('no baseline');
      else if (before.pages !== pages.length)
        failures.push(`${pages.length} pages, baseline ${before.pages}`);
      for (const p of pageResults)
        if (p.diffRatio > fixture.maxDiffRatio)
          failures.push(`page ${p.page}: ${(p.diffRatio * 100).toFixed(3)}% of pixels differ`);
      if (
        before &&
        timing.cpuMs > before.cpuMs * MAX_CPU_RATIO &&
        timing.cpuMs - before.cpuMs >= MIN_CPU_EXCESS_MS
      )
        failures.push(`CPU ${timing.cpuMs} ms, over ${MAX_CPU_RATIO}x the baseline's ${before.cpuMs} ms`);
      results.push({
        name: fixture.name,
        pages: pages.length,
        baselinePages: before?.pages,
        pageResults,
        maxDiffRatio: fixture.maxDiffRatio,
        timing,
        baselineTiming: before,
        failures,
      });
    }
    fresh.loadAverage = Number((loadavg()[0] ?? 0).toFixed(2));
    if (options.update) {
      writeFileSync(
        join(baselineDir, BASELINE_FILE),
        `${JSON.stringify({ ...fresh, browser: browserVersion }, null, 2)}\n`,
      );
    }
    const ratio = (now: number, then: number | undefined) =>
      then === undefined || then === 0 ? '' : ` (${(now / then).toFixed(2)}x)`;
    const lines = [
      `chromium:check: ${options.chromiumLabel} (${browserVersion}) against the baseline of ${baseline?.chromium ?? '(writing it now)'}, ${CHECK_DPI} dpi, ${options.runs} timed renders per fixture (medians); load average ${fresh.loadAverage} (the baseline's ${baseline?.loadAverage ?? '-'})`,
      '',
      '| fixture | pages (baseline) | most differing page | allowed | wall ms (baseline) | CPU ms (baseline) | verdict |',
      '|---|---|---:|---:|---|---|---|',
      ...results.map((r) => {
        const worst = r.pageResults.reduce((m, p) => (p.diffRatio > m.diffRatio ? p : m), {
          page: 0,
          diffRatio: 0,
          pixels: 0,
        });
        return `| ${r.name} | ${r.pages} (${r.baselinePages ?? '-'}) | ${(worst.diffRatio * 100).toFixed(3)}%${worst.page ? ` (${worst.pixels} px, p${worst.page})` : ''} | ${(r.maxDiffRatio * 100).toFixed(3)}% | ${r.timing.wallMs} (${r.baselineTiming?.wallMs ?? '-'})${ratio(r.timing.wallMs, r.baselineTiming?.wallMs)} | ${r.timing.cpuMs} (${r.baselineTiming?.cpuMs ?? '-'})${ratio(r.timing.cpuMs, r.baselineTiming?.cpuMs)} | ${r.failures.length === 0 ? 'ok' : `FAIL: ${r.failures.join('; ')}`} |`;
      }),
      '',
      options.update
        ? `Baselines written to ${baselineDir}`
        : results.every((r) => r.failures.length === 0)
          ? 'PASS: every page within its threshold, no fixture over the CPU limit'
          : `FAIL: ${results.filter((r) => r.failures.length > 0).length} of ${results.length} fixtures`,
    ];
    return { results, report: lines.join('\n') };
  } finally {
    sink.close();
    await renderer.close();
  }
};
