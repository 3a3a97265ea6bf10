/**
 * What navigation costs (issue 26): each fixture rendered by the in-process renderer without the
 * options and with each of them, interleaved (round-robin, each run starting one variant later, so
 * that the machine's load falls on every variant alike), render time and PDF size.
 *
 *   npx tsx test/bench/navigation.ts                       # 5 renders per variant
 *   npx tsx test/bench/navigation.ts --runs 9
 *   npx tsx test/bench/navigation.ts --checkout /tmp/before --checkout /tmp/after
 *       # also the renderers of other checkouts (their node_modules linked), without options,
 *       # each with a browser of its own: `git archive` of the commit before this work and of
 *       # this one compare the plain render before and after, symmetrically
 *
 * Variants: plain (no option), tagged, outline (untagged: built from the headings' destinations),
 * outline + tagged (Chromium's own), paged media (two prints when the document uses the counters,
 * one otherwise), and all three. Fixtures: the bench's invoice and 30-page report, which use no
 * counters, and the navigated report (test/fixtures/navigated-report.ts: a contents page, page
 * numbers on every page, 50 headings).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Renderer, RenderRequest } from '../../functions/renderer/contract.js';
import { navigatedReport } from '../fixtures/navigated-report.js';
import { type Fixture, loadFixtures } from './fixtures/index.js';
import { type Summary, summarize } from './lib/stats.js';

const { values: args } = parseArgs({
  options: { runs: { type: 'string', default: '5' }, checkout: { type: 'string', multiple: true } },
});
const runs = Number(args.runs);

type Options = Partial<Pick<RenderRequest['pdf'], 'pagedMedia' | 'outline' | 'tagged'>>;
const VARIANTS: Record<string, Options> = {
  plain: {},
  tagged: { tagged: true },
  outline: { outline: true },
  'outline + tagged': { outline: true, tagged: true },
  'paged media': { pagedMedia: true },
  all: { pagedMedia: true, outline: true, tagged: true },
};

let lastUpload = 0;
const uploadServer = createServer((req, res) => {
  let bytes = 0;
  req.on('data', (c: Buffer) => {
    bytes += c.length;
  });
  req.on('end', () => {
    lastUpload = bytes;
    res.writeHead(200).end();
  });
});
await new Promise<void>((done) => uploadServer.listen(0, '127.0.0.1', () => done()));
const uploadUrl = `http://127.0.0.1:${(uploadServer.address() as AddressInfo).port}/bench.pdf`;

const benchFixture = (name: string): Fixture => {
  const found = loadFixtures().find((f) => f.name === name);
  if (!found) throw new Error(`no bench fixture ${name}`);
  return found;
};
const fixtures = [
  ...['invoice', 'report'].map((name) => {
    const { html, options } = benchFixture(name);
    return { name, source: `{% raw %}${html}{% endraw %}`, options };
  }),
  // The service's default options, as the invoice has them.
  {
    name: 'navigated report',
    source: `{% raw %}${navigatedReport().html}{% endraw %}`,
    options: benchFixture('invoice').options,
  },
];

const request = (fixture: (typeof fixtures)[number], options: Options): RenderRequest => ({
  jobId: 'job_bench_navigation',
  template: { source: fixture.source, variables: {} },
  pdf: { ...fixture.options.pdf, ...options },
  pageLoad: { ...fixture.options.pageLoad, timeoutMs: 60_000 },
  upload: { url: uploadUrl, headers: {} },
  limits: { maxPdfBytes: 100 * 1024 * 1024, maxPages: 1000, maxHtmlBytes: 10 * 1024 * 1024 },
});

interface Loaded {
  readonly renderer: Renderer;
  readonly close: () => Promise<void>;
}
const load = async (root: string): Promise<Loaded> => {
  const inProcess = (await import(
    pathToFileURL(resolve(root, 'functions/renderer/in-process.ts')).href
  )) as typeof import('../../functions/renderer/in-process.js');
  const renderer = inProcess.createInProcessRenderer();
  // Checkouts from before createRenderer had one renderer per process, closed by closeRenderer.
  const legacy = (inProcess as { closeRenderer?: () => Promise<void> }).closeRenderer;
  return { renderer, close: legacy ?? (() => renderer.close()) };
};

const current = await load(resolve(import.meta.dirname, '../..'));
const checkouts = await Promise.all(
  (args.checkout ?? []).map(async (dir) => ({ name: `plain, ${dir}`, ...(await load(dir)) })),
);

const time = async (renderer: Renderer, req: RenderRequest): Promise<{ ms: number; bytes: number }> => {
  const started = performance.now();
  const result = await renderer.render(req);
  const ms = performance.now() - started;
  if (!result.ok) throw new Error(`${result.code}: ${result.message}`);
  return { ms, bytes: lastUpload };
};

const rows: { fixture: string; variant: string; ms: Summary; bytes: number }[] = [];
for (const fixture of fixtures) {
  const variants: [string, Renderer, Options][] = [
    ...checkouts.map(({ name, renderer }): [string, Renderer, Options] => [name, renderer, {}]),
    ...Object.entries(VARIANTS).map(([name, options]): [string, Renderer, Options] => [
      name,
      current.renderer,
      options,
    ]),
  ];
  // One warm-up each (first page of a fixture, fonts, the templating worker), then interleaved.
  for (const [, renderer, options] of variants) await time(renderer, request(fixture, options));
  const samples = new Map(variants.map(([name]) => [name, { ms: [] as number[], bytes: 0 }]));
  for (let run = 0; run < runs; run++) {
    // Each run starts one variant later: none always follows the heaviest.
    const order = variants.map((_, i) => variants[(i + run) % variants.length] as (typeof variants)[number]);
    for (const [name, renderer, options] of order) {
      const { ms, bytes } = await time(renderer, request(fixture, options));
      const sample = samples.get(name);
      sample?.ms.push(ms);
      if (sample) sample.bytes = bytes;
    }
    process.stderr.write(`\r${fixture.name}: ${run + 1}/${runs}   `);
  }
  process.stderr.write('\n');
  for (const [name, { ms, bytes }] of samples)
    rows.push({ fixture: fixture.name, variant: name, ms: summarize(ms), bytes });
}

const plainOf = new Map(rows.filter((r) => r.variant === 'plain').map((r) => [r.fixture, r]));
console.log(`\nrender() wall time, ${runs} renders per variant after a warm-up, interleaved\n`);
console.log('| fixture | variant | p50 ms | min ms | max ms | × plain (p50) | PDF bytes | × plain |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  const plain = plainOf.get(r.fixture);
  const x = (a: number, b: number | undefined) => (b ? (a / b).toFixed(2) : '');
  console.log(
    `| ${r.fixture} | ${r.variant} | ${Math.round(r.ms.p50)} | ${Math.round(r.ms.min)} | ${Math.round(r.ms.max)} | ${x(r.ms.p50, plain?.ms.p50)} | ${r.bytes.toLocaleString('en-US')} | ${x(r.bytes, plain?.bytes)} |`,
  );
}
await Promise.all([current.close(), ...checkouts.map((c) => c.close())]);
uploadServer.close();
