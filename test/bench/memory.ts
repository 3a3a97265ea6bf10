/**
 * Peak memory per page for the document shapes of issue 37, through the renderer in this process
 * (as the renderer Lambda runs it: Node and Chromium, one render at a time), sampled by the bench's
 * own /proc sampler (lib/proc.ts: PSS of the whole tree), not by the renderer's memory watch:
 *
 *   npx tsx test/bench/memory.ts                    # both shapes at 50, 100, 200 and 400 pages
 *   npx tsx test/bench/memory.ts --pages 100,2000   # other sizes
 *   npx tsx test/bench/memory.ts --budget 1024      # with the renderer's budget configured down
 *
 * Shapes: one continuous table (the 27-page report's, ~50 rows a page, repeating header), and one
 * short table per page (a heading and a 40-row table, then a page break). For each, the peak and
 * time per size, the fitted MiB per page and base, and the pages that fit a renderer of 2,048 and
 * 3,008 MiB (its budget less the memory watch's headroom, functions/renderer/memory-watch.ts).
 * The table in docs/memory.md comes from this.
 */
import { parseArgs } from 'node:util';
import { readRendererConfig } from '../../functions/core/config.js';
import { memoryLimitBytes } from '../../functions/renderer/memory-watch.js';
import { createRenderer } from '../../functions/renderer/renderer.js';
import { localFontconfigFile } from '../../lib/layer-fonts.js';
import { renderRequest, startUploadSink } from '../helpers/render-fixtures.js';
import { SHAPES } from './fixtures/memory-shapes.js';
import { startSampler } from './lib/proc.js';
import { ROOT } from './service.js';

const { values: args } = parseArgs({
  options: {
    pages: { type: 'string', default: '50,100,200,400' },
    budget: { type: 'string', default: '8192' },
    shapes: { type: 'string', default: 'long-table,table-per-page' },
  },
});

const main = async (): Promise<void> => {
  const sizes = args.pages.split(',').map(Number);
  const shapes = args.shapes.split(',') as (keyof typeof SHAPES)[];
  const renderer = createRenderer(
    readRendererConfig({
      ...process.env,
      FONTCONFIG_FILE: localFontconfigFile(ROOT),
      RENDERER_MEMORY_BUDGET_MIB: args.budget,
      RENDERER_PROCESS_MODEL: process.env.RENDERER_PROCESS_MODEL ?? 'multi',
    }),
  );
  const sink = await startUploadSink();
  const sampler = startSampler(process.pid, 50, 1);
  try {
    // A warm browser first: its launch is not a document's cost.
    await renderer.render(renderRequest(`${sink.baseUrl}/warm`, '<p>warm</p>'));
    sampler.take();
    const idle = sampler.take().pssMiB;
    console.log(`idle renderer (Node + Chromium, warm): ${idle} MiB PSS`);
    for (const shape of shapes) {
      const points: { pages: number; mib: number }[] = [];
      for (const pages of sizes) {
        const html = SHAPES[shape](pages);
        sampler.take();
        const started = performance.now();
        const result = await renderer.render(
          renderRequest(`${sink.baseUrl}/${shape}-${pages}`, html, {
            pageLoad: { timeoutMs: 600_000 },
            limits: { maxPages: 100_000, maxHtmlBytes: 200 * 1024 * 1024, maxPdfBytes: 2 ** 31 },
          }),
        );
        const ms = Math.round(performance.now() - started);
        const peak = sampler.take();
        const outcome = result.ok ? `${result.pageCount} pages` : `${result.code}`;
        console.log(
          `${shape} ${pages} pages: ${outcome}, peak ${peak.pssMiB} MiB PSS (RSS ${peak.rssMiB}), ${ms} ms, html ${(html.length / 1048576).toFixed(1)} MiB`,
        );
        if (result.ok) points.push({ pages: result.pageCount, mib: peak.pssMiB });
      }
      if (points.length >= 2) {
        const n = points.length;
        const mx = points.reduce((s, p) => s + p.pages, 0) / n;
        const my = points.reduce((s, p) => s + p.mib, 0) / n;
        const slope =
          points.reduce((s, p) => s + (p.pages - mx) * (p.mib - my), 0) /
          points.reduce((s, p) => s + (p.pages - mx) ** 2, 0);
        const base = my - slope * mx;
        const fits = [2048, 3008].map((mib) => {
          const limit = memoryLimitBytes({ mib, includesNode: true }) / 1048576;
          return `${mib} MiB: ~${Math.floor((limit - base) / slope)} pages`;
        });
        console.log(
          `${shape}: ${slope.toFixed(2)} MiB per page over a base of ${Math.round(base)} MiB; fits ${fits.join(', ')}`,
        );
      }
    }
  } finally {
    sampler.stop();
    sink.close();
    await renderer.close();
  }
};

await main();
