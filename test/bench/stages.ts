/**
 * Where one render's time and CPU go, stage by stage (the renderer's own pieces, run one after
 * another so that each stage's CPU is its own; render.ts overlaps some of them):
 *
 *   npx tsx test/bench/stages.ts [--fixture invoice] [--runs 30]
 *
 * Per stage: wall ms (median), Node CPU ms (this process) and Chromium CPU ms (its process tree,
 * from /proc: renderer processes that ended with their context are counted in their parent), means
 * over the runs. The /proc reads themselves are kept out of the Node figure. `context (bare)` is
 * a context and page alone on the same browser, for what isolation itself costs; `session open`
 * is what a render opens (context, page, the renderer's DevTools session, the request guard and
 * the diagnostics); a spare session pays it before the render.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { readRendererConfig } from '../../functions/core/config.js';
import { createBrowserHost } from '../../functions/renderer/browser.js';
import { glyphCheckNeeded } from '../../functions/renderer/page-diagnostics.js';
import { removeUnsafeLinks } from '../../functions/renderer/pdf-links.js';
import { withDocumentInfo } from '../../functions/renderer/pdf-metadata.js';
import { countPdfPages } from '../../functions/renderer/pdf-pages.js';
import { localFontconfigFile } from '../../lib/layer-fonts.js';
import { loadFixtures } from './fixtures/index.js';
import { cpuOfTree } from './lib/proc.js';
import { summarize } from './lib/stats.js';

const { values: args } = parseArgs({
  options: { fixture: { type: 'string', default: 'invoice' }, runs: { type: 'string', default: '30' } },
});
const fixture = loadFixtures().find((f) => f.name === args.fixture);
if (!fixture) throw new Error(`unknown fixture ${args.fixture}`);
const runs = Number(args.runs);

const sink = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-length': '0' }).end());
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const uploadUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/bucket/stages.pdf`;

// The renderer's fonts, as the bench's renderer and service have them: Chromium's own fallback
// fonts would time another document (load and print took 14 + 20 ms instead of 26 in all).
const config = readRendererConfig({
  ...process.env,
  FONTCONFIG_FILE:
    process.env.FONTCONFIG_FILE ?? localFontconfigFile(new URL('../..', import.meta.url).pathname),
});
const host = createBrowserHost(config, { spareSessions: 0 });
const warm = await host.getWarmBrowser();
const browserPid = warm.pid as number;

interface Sample {
  wall: number;
  node: number;
  chromium: number;
}
const samples = new Map<string, Sample[]>();

/** Times `fn` as stage `name`: wall, this process's CPU, and Chromium's tree. */
const stage = async <T>(name: string, fn: () => Promise<T> | T): Promise<T> => {
  const chromiumBefore = cpuOfTree(browserPid);
  const nodeBefore = process.cpuUsage();
  const started = performance.now();
  const value = await fn();
  const wall = performance.now() - started;
  const node = process.cpuUsage(nodeBefore);
  const chromiumAfter = cpuOfTree(browserPid);
  const list = samples.get(name) ?? [];
  list.push({
    wall,
    node: (node.user + node.system) / 1000,
    chromium:
      chromiumAfter.rootMs +
      chromiumAfter.descendantsMs -
      chromiumBefore.rootMs -
      chromiumBefore.descendantsMs,
  });
  samples.set(name, list);
  return value;
};

const { pdf: options, pageLoad } = fixture.options;
const inches = (n: number): string => `${n}in`;
const settle = () => new Promise((r) => setTimeout(r, 30));

for (let i = 0; i < runs + 2; i++) {
  if (i === 2) samples.clear(); // warm-up
  await stage('context (bare)', async () => {
    const context = await warm.browser.createBrowserContext();
    await context.newPage();
    await context.close();
  });
  await settle();
  const session = await stage('session open', () => host.takeSession());
  await stage('load (setContent)', () =>
    session.page.setContent(fixture.html, { waitUntil: pageLoad.waitUntil, timeout: pageLoad.timeoutMs }),
  );
  const pdf = await stage('print', async () => {
    const stream = await session.page.createPDFStream({
      format: options.format,
      landscape: options.landscape,
      printBackground: options.printBackground,
      margin: {
        top: inches(options.margins.top),
        right: inches(options.margins.right),
        bottom: inches(options.margins.bottom),
        left: inches(options.margins.left),
      },
      preferCSSPageSize: false,
      tagged: config.taggedPdf,
    });
    const chunks: Uint8Array[] = [];
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
    return Buffer.concat(chunks);
  });
  await stage('link check', () => removeUnsafeLinks(pdf));
  await stage('page count', () => countPdfPages(pdf));
  const withInfo = await stage(
    'metadata',
    () => withDocumentInfo(pdf, { title: 'Invoice', creationDate: new Date() }) ?? pdf,
  );
  // As render.ts runs it: only when the page's text could print a missing-glyph box.
  await stage('glyph check', () =>
    glyphCheckNeeded(fixture.html) ? session.watch.checkGlyphs(500) : undefined,
  );
  await stage('diagnostics finish', () => session.watch.finish({ timedOut: false }));
  await stage('upload', async () => {
    const response = await fetch(uploadUrl, { method: 'PUT', body: withInfo });
    await response.body?.cancel();
  });
  await stage('close', async () => {
    session.guard.end();
    await session.close(false);
  });
  await settle();
}

const rows = [...samples].map(([name, list]) => ({
  name,
  wall: summarize(list.map((s) => s.wall)).p50,
  // Means: /proc counts CPU in 10 ms ticks, so a stage's median would be 0 or 10.
  node: summarize(list.map((s) => s.node)).mean,
  chromium: summarize(list.map((s) => s.chromium)).mean,
}));
const pad = (s: string | number, n: number) => String(s).padStart(n);
process.stdout.write(
  `Stages of one ${fixture.name} render, ${runs} runs (ms: wall median, CPU mean); load avg ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}\n`,
);
process.stdout.write(
  `${'stage'.padEnd(20)}${pad('wall', 8)}${pad('node CPU', 10)}${pad('chromium CPU', 14)}\n`,
);
for (const r of rows) {
  process.stdout.write(
    `${r.name.padEnd(20)}${pad(r.wall.toFixed(1), 8)}${pad(r.node.toFixed(1), 10)}${pad(r.chromium.toFixed(1), 14)}\n`,
  );
}
await host.close();
sink.close();
process.exit(0);
