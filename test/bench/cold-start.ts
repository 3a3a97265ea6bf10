import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { RenderRequest } from '../../functions/renderer/contract.js';
import { bundledFunction, resolveEnvironment, startLambdaProcess } from '../helpers/cdk-lambda.js';
import { synthServiceStack } from '../helpers/cdk-synth.js';
import { startFontBucket } from '../helpers/font-bucket.js';
import { canSandbox, MEMORY_MIB_PER_VCPU } from '../helpers/lambda-sandbox.js';
import { loadFixtures } from './fixtures/index.js';

/** Lambda's limit on a function's code and layers, unzipped. */
export const UNZIPPED_LIMIT_BYTES = 250 * 1024 * 1024;
export const FIRST_PDF_GOAL_MS = 1500;

type Layout = 'synthesized';
/** The first page after the cold start: Latin only, or with CJK text (its fonts' first use). */
type FirstPage = 'latin' | 'cjk';

const { values: args } = parseArgs({
  options: {
    memory: { type: 'string', default: '1024,2048,3008' },
    runs: { type: 'string', default: '3' },
    pages: { type: 'string', default: 'latin,cjk' },
    out: { type: 'string' },
  },
  strict: true,
});
const memorySizes = (args.memory ?? '').split(',').map(Number);
const runs = Number(args.runs);
const layouts: Layout[] = ['synthesized'];
const pages = (args.pages ?? '').split(',') as FirstPage[];

const invoice = loadFixtures().find((f) => f.name === 'invoice');
if (!invoice) throw new Error('cold-start bench: no invoice fixture');
/** The invoice with a line in each CJK language (lang set, so each takes its own font). */
const CJK_LINES =
  '<p lang="ja">請求書：お支払いは月末までにお願いいたします。</p>' +
  '<p lang="zh-CN">发票：请在月底前付款。</p><p lang="zh-TW">發票：請於月底前付款。</p>' +
  '<p lang="ko">청구서: 월말까지 지불해 주십시오.</p>';
const firstPageHtml: Record<FirstPage, string> = {
  latin: invoice.html,
  cjk: invoice.html.replace('</body>', `${CJK_LINES}</body>`),
};

const sizeOf = (path: string): number => {
  const st = statSync(path);
  if (!st.isDirectory()) return st.size;
  return readdirSync(path).reduce((sum, entry) => sum + sizeOf(join(path, entry)), 0);
};

/**
 * Wall time a cold start needs at a CPU share of `vcpus` when nothing else competes: inflation runs
 * on one thread, so it takes its CPU time at best (longer below one vCPU); the rest can use the
 * whole share (at most this machine's two cores). This machine's CPU is not Lambda's: the figures
 * rank layouts and memory sizes; they are not Lambda's own.
 */
const atShare = (cpuMs: number, inflateMs: number, vcpus: number): number =>
  inflateMs / Math.min(1, vcpus) + Math.max(0, cpuMs - inflateMs) / Math.min(vcpus, 2);

interface ColdStart {
  readonly layout: Layout;
  readonly page: FirstPage;
  readonly memoryMiB: number;
  readonly run: number;
  /** Spawn to handler loaded. */
  readonly initMs: number;
  /** Spawn to the first PDF's result (init, then the first invoke). */
  readonly firstPdfMs: number;
  /** The renderer's own log: from launch to a browser ready. */
  readonly browserLaunchMs: number | undefined;
  /** The renderer's own log: the first CJK page's fetch of its fonts (fonts-ready). */
  readonly fontsReadyMs: number | undefined;
  readonly peakMemoryMiB: number | undefined;
  /** CPU time the sandbox used by the end of init (the handler loaded). */
  readonly initCpuMs: number | undefined;
  /** CPU time the sandbox used from spawn to the first PDF (Node, Chromium, everything). */
  readonly cpuMs: number | undefined;
  /**
   * The first PDF on an otherwise idle machine, estimated from CPU time (wall time here also
   * waits for the other work sharing this machine): see atShare.
   */
  readonly firstPdfAtShareMs: number | undefined;
}

const main = async () => {
  if (!canSandbox())
    throw new Error('cold-start bench: needs root, unshare and setpriv (the Lambda-like sandbox)');
  const outdir = await mkdtemp(join(tmpdir(), 'cold-start-bench-'));
  const uploads = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((resolve) => uploads.listen(0, '127.0.0.1', () => resolve()));
  const uploadBase = `http://127.0.0.1:${(uploads.address() as AddressInfo).port}`;
  let closeFontBucket: (() => Promise<void>) | undefined;
  try {
    process.stderr.write('synthesizing the bundles (esbuild, the layer)...\n');
    const s = synthServiceStack({ bundle: true, outdir });
    const renderer = bundledFunction(s, s.stack.renderer.function);
    const layerDir = renderer.layerDirs[0] as string;
    // Nothing is inflated any more: Chromium is unpacked in the layer.
    const inflateCpuMs = 0;
    const layerDirs: Record<Layout, string> = { synthesized: layerDir };
    const fontBucket = await startFontBucket(renderer.environment);
    closeFontBucket = fontBucket.close;
    const codeBytes = sizeOf(renderer.codeDir);
    const sizes = Object.fromEntries(
      layouts.map((l) => [
        l,
        {
          layerMiB: sizeOf(layerDirs[l]) / 2 ** 20,
          withCodeMiB: (sizeOf(layerDirs[l]) + codeBytes) / 2 ** 20,
        },
      ]),
    );
    const results: ColdStart[] = [];
    const failures: {
      layout: Layout;
      page: FirstPage;
      memoryMiB: number;
      run: number;
      result: unknown;
      log: string;
    }[] = [];
    /** The CJK page only as synthesized: the pre-decompressed layer has the same fonts. */
    const cells = layouts.flatMap((layout) =>
      pages.filter((page) => page === 'latin' || layout === 'synthesized').map((page) => ({ layout, page })),
    );
    let n = 0;
    let runtime = '';
    let cpuLimit = '';
    for (const memoryMiB of memorySizes) {
      for (const { layout, page } of cells) {
        for (let run = 1; run <= runs; run++) {
          const p = await startLambdaProcess(renderer, {
            functionName: `cold-start-${layout}-${page}-${memoryMiB}-${run}`,
            workDir: outdir,
            sandbox: true,
            memorySizeMiB: memoryMiB,
            layerDir: layerDirs[layout],
            environment: {
              AWS_REGION: 'eu-west-1',
              ...resolveEnvironment(renderer, fontBucket.environment),
              ...fontBucket.environment,
            },
          });
          try {
            runtime = `${p.sandbox?.lambdaNode.runtime} (node ${p.sandbox?.lambdaNode.version})`;
            cpuLimit = p.sandbox?.cpuLimit ?? '';
            const request: RenderRequest = {
              jobId: `job_cold_${++n}`,
              template: { source: firstPageHtml[page], variables: {} },
              pdf: invoice.options.pdf,
              // The whole budget: a loaded machine stretches a cold start's first page a long way.
              pageLoad: { waitUntil: 'load', timeoutMs: 25_000, waitForSelector: null },
              upload: { url: `${uploadBase}/cold-${n}.pdf`, headers: {} },
              limits: { maxPdfBytes: 50 * 2 ** 20, maxPages: 1000, maxHtmlBytes: 10 * 2 ** 20 },
            };
            const initCpuMs = p.sandbox?.cpuUsageMs();
            const started = performance.now();
            const { payload, functionError } = await p.invoke(request);
            const invokeMs = performance.now() - started;
            if (functionError || !payload?.ok) {
              // Kept, not thrown: one failed cold start must not cost the other figures.
              failures.push({ layout, page, memoryMiB, run, result: payload, log: p.logs().slice(-4000) });
              process.stderr.write(
                `FAILED ${layout} ${page} ${memoryMiB} MB run ${run}: ${JSON.stringify(payload)}\n`,
              );
              continue;
            }
            const logLines = p
              .logs()
              .split('\n')
              .filter((l) => l.startsWith('{'))
              .map((l) => JSON.parse(l) as { message?: string; ms?: number });
            const launched = logLines.find((l) => l.message === 'browser-launched');
            const fontsReady = logLines.find((l) => l.message === 'fonts-ready');
            const peak = p.sandbox?.peakMemoryBytes();
            const cpuMs = p.sandbox?.cpuUsageMs();
            const vcpus = memoryMiB / MEMORY_MIB_PER_VCPU;
            const result: ColdStart = {
              layout,
              page,
              memoryMiB,
              run,
              initMs: Math.round(p.initMs),
              firstPdfMs: Math.round(p.initMs + invokeMs),
              browserLaunchMs: launched?.ms,
              fontsReadyMs: fontsReady?.ms,
              peakMemoryMiB: peak === undefined ? undefined : Math.round(peak / 2 ** 20),
              initCpuMs: initCpuMs === undefined ? undefined : Math.round(initCpuMs),
              cpuMs: cpuMs === undefined ? undefined : Math.round(cpuMs),
              firstPdfAtShareMs:
                cpuMs === undefined
                  ? undefined
                  : Math.round(atShare(cpuMs, layout === 'synthesized' ? inflateCpuMs : 0, vcpus)),
            };
            results.push(result);
            process.stderr.write(`${JSON.stringify(result)}\n`);
          } finally {
            await p.close();
          }
        }
      }
    }

    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
    const lines = [
      `Renderer cold start in the Lambda-like sandbox: ${runtime}; CPU ${cpuLimit.replace(/\(.*\)/, '').trim()} per ${MEMORY_MIB_PER_VCPU} MB; load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
      'Chromium unpacked in the layer: nothing inflated; the CJK fonts fetched from S3 (s3rver on loopback here) on the first CJK page, then Chromium relaunched',
      `Layer + code unzipped: ${layouts.map((l) => `${l} ${sizes[l]?.withCodeMiB.toFixed(0)} MiB`).join(', ')} (limit ${UNZIPPED_LIMIT_BYTES / 2 ** 20} MiB)`,
      '',
      '| layout | first page | memory (MB) | vCPU | init (ms, median) | init CPU (ms) | first PDF (ms, median) | min-max | CPU to first PDF (ms) | first PDF at the share, idle machine (ms, est.) | browser launch (ms) | peak memory (MiB) |',
      '|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|',
    ];
    const of = (layout: Layout, page: FirstPage, memoryMiB: number) =>
      results.filter((r) => r.layout === layout && r.page === page && r.memoryMiB === memoryMiB);
    for (const { layout, page } of cells) {
      for (const memoryMiB of memorySizes) {
        const rs = of(layout, page, memoryMiB);
        const failed = failures.filter(
          (f) => f.layout === layout && f.page === page && f.memoryMiB === memoryMiB,
        ).length;
        if (rs.length === 0) {
          lines.push(`| ${layout} | ${page} | ${memoryMiB} | | | | all ${failed} failed | | | | | |`);
          continue;
        }
        const first = rs.map((r) => r.firstPdfMs);
        lines.push(
          `| ${layout} | ${page} | ${memoryMiB} | ${(memoryMiB / MEMORY_MIB_PER_VCPU).toFixed(2)} | ${median(rs.map((r) => r.initMs))} | ${median(rs.map((r) => r.initCpuMs ?? Number.NaN))} | ${median(first)} | ${Math.min(...first)}-${Math.max(...first)} | ${median(rs.map((r) => r.cpuMs ?? Number.NaN))} | ${median(rs.map((r) => r.firstPdfAtShareMs ?? Number.NaN))} | ${median(rs.map((r) => r.browserLaunchMs ?? Number.NaN))} | ${Math.max(...rs.map((r) => r.peakMemoryMiB ?? 0))} |`,
        );
      }
    }
    if (cells.some((c) => c.page === 'cjk')) {
      lines.push(
        '',
        "The first CJK page's extra time (synthesized, median CJK minus median Latin first PDF):",
      );
      for (const memoryMiB of memorySizes) {
        const m = (page: FirstPage) => of('synthesized', page, memoryMiB);
        const wall = median(m('cjk').map((r) => r.firstPdfMs)) - median(m('latin').map((r) => r.firstPdfMs));
        const est =
          median(m('cjk').map((r) => r.firstPdfAtShareMs ?? Number.NaN)) -
          median(m('latin').map((r) => r.firstPdfAtShareMs ?? Number.NaN));
        const cpu =
          median(m('cjk').map((r) => r.cpuMs ?? Number.NaN)) -
          median(m('latin').map((r) => r.cpuMs ?? Number.NaN));
        const fonts = median(m('cjk').map((r) => r.fontsReadyMs ?? Number.NaN));
        lines.push(
          `- ${memoryMiB} MB: ${wall} ms wall, ${cpu} ms CPU, ${est} ms at the share (est.); fetch + relaunch (fonts-ready) ${fonts} ms`,
        );
      }
    }
    const at2048 = results.filter((r) => r.memoryMiB === 2048 && r.page === 'latin');
    if (at2048.length > 0) {
      const best = Math.min(
        ...layouts.map((l) => median(at2048.filter((r) => r.layout === l).map((r) => r.firstPdfMs))),
      );
      const synthesized = median(
        at2048.filter((r) => r.layout === 'synthesized').map((r) => r.firstPdfAtShareMs ?? Number.NaN),
      );
      lines.push(
        '',
        `Goal: first PDF <= ${FIRST_PDF_GOAL_MS} ms at 2,048 MB (Latin invoice): best median wall ${best} ms on this machine (load average above); as synthesized, at the share on an idle machine (est.) ${synthesized} ms (${synthesized <= FIRST_PDF_GOAL_MS ? 'met' : 'not met'})`,
      );
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    if (args.out)
      writeFileSync(
        args.out,
        JSON.stringify({ runtime, cpuLimit, sizes, results, failures, loadavg: loadavg() }, null, 2),
      );
  } finally {
    await closeFontBucket?.();
    uploads.close();
    if (existsSync(outdir)) await rm(outdir, { recursive: true, force: true });
  }
};

await main();
