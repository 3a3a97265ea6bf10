import { readRendererConfig } from '/work/h-memory/functions/core/config.js';
import { createRenderer } from '/work/h-memory/functions/renderer/renderer.js';
import { localFontconfigFile } from '/work/h-memory/lib/layer-fonts.js';
import { SHAPES } from '/work/h-memory/test/bench/fixtures/memory-shapes.js';
import { startSampler } from '/work/h-memory/test/bench/lib/proc.js';
import { renderRequest, startUploadSink } from '/work/h-memory/test/helpers/render-fixtures.js';

const renderer = createRenderer(
  readRendererConfig({
    ...process.env,
    FONTCONFIG_FILE: localFontconfigFile('/work/h-memory/'),
    RENDERER_PROCESS_MODEL: 'multi',
  }),
);
const sink = await startUploadSink();
const sampler = startSampler(process.pid, 50, 1);
await renderer.render(renderRequest(`${sink.baseUrl}/warm`, '<p>warm</p>'));
const pages = Number(process.argv[2] ?? 2000);
const html = SHAPES['table-per-page'](pages);
for (const maxPages of (process.argv[3] ?? '1000,100000').split(',').map(Number)) {
  sampler.take();
  const t = performance.now();
  const r = await renderer.render(
    renderRequest(`${sink.baseUrl}/x${maxPages}`, html, {
      pageLoad: { timeoutMs: 600000 },
      limits: { maxPages, maxHtmlBytes: 1e9, maxPdfBytes: 2 ** 31 },
    }),
  );
  console.log(
    JSON.stringify({
      pages,
      maxPages,
      ok: r.ok,
      code: r.ok ? undefined : r.code,
      count: r.ok ? r.pageCount : undefined,
      ms: Math.round(performance.now() - t),
      peak: sampler.take(),
    }),
  );
}
sampler.stop();
sink.close();
await renderer.close();
