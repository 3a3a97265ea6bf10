/**
 * `npm run bench`: the local stack against raw Chromium and the peers.
 *
 *   npm run bench                        # full run (a few minutes)
 *   npm run bench -- --quick             # fewer iterations (about a minute)
 *   npm run bench -- --out results.json  # where the JSON goes (default test/bench/results/<time>.json)
 *   npm run bench -- --fixtures invoice,report --no-peers
 *   npx tsx test/bench/templating.ts     # the templating cost per invoice alone (seconds)
 *   npx tsx test/bench/fonts.ts          # the fonts' cost alone: cold start and per render (a minute)
 *   npx tsx test/bench/cold-start.ts     # the renderer's cold start as Lambda gives it, per memory size (root)
 *   npx tsx test/bench/ratios.ts         # the ratios of times the tests judge, against their bounds
 *   npx tsx test/bench/finishing.ts      # what watermark, stamp, protection and a signature cost per document
 *   npx tsx test/bench/e-invoice.ts      # e_invoice validation and the pdf_a / e_invoice steps, per invoice
 *
 * Phases: the templating cost per invoice (the engine in process and through the renderer's worker
 * pool, no Chromium), the floor (raw Chromium), the renderer alone in its own process (as the
 * renderer Lambda runs it), the fonts' cost on its cold start and renders (fonts.ts), the whole
 * service over HTTP (cold start, sequential, concurrency 2 and 4), the peers, and the ratios of
 * times the tests judge (ratios.ts: the test files that judge them, run with the bench's report).
 * Progress goes to stderr, the table to stdout, the results to a JSON file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import chromium from '@sparticuz/chromium';
import { localFontconfigFile } from '../../lib/layer-fonts.js';
import { canSandbox } from '../helpers/lambda-sandbox.js';
import { COST_ASSUMPTIONS, type CostPer1000, costPer1000, PRICES, readMemorySettings } from './cost.js';
import { type EInvoiceBench, eInvoiceLines, measureEInvoice } from './e-invoice.js';
import { FIXTURE_NAMES, type Fixture, type FixtureName, loadFixtures } from './fixtures/index.js';
import { FLOOR_DEFINITION, floorOnce, launchFloorBrowser } from './floor.js';
import { type FontsResult, fontsLines, measureFonts } from './fonts.js';
import { cpuOfTree, type Peak, procAvailable, startSampler } from './lib/proc.js';
import { bar, note, progress } from './lib/progress.js';
import { buildRendererHost } from './lib/renderer-bundle.js';
import { ratio, type Summary, summarize } from './lib/stats.js';
import { detectPeers, peerOnce } from './peers.js';
import { measureRatios, type RatiosResult, ratioLines } from './ratios.js';
import { load, type ProbeTrace, ROOT, type ServiceProcess, startService } from './service.js';
import { measureTemplateParse, type ParseResult, templateParseLines } from './template-parse.js';
import {
  measureTemplating,
  TEMPLATING_GOAL_MS,
  type TemplatingResult,
  templatingLine,
} from './templating.js';

// ---------------------------------------------------------------------------------------------
// Options

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    fixtures: { type: 'string' },
    'no-peers': { type: 'boolean', default: false },
    'no-fonts': { type: 'boolean', default: false },
    'no-ratios': { type: 'boolean', default: false },
    'no-spare': { type: 'boolean', default: false },
    'no-lambda-cold-start': { type: 'boolean', default: false },
    'cold-starts': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
  strict: true,
});
if (args.help) {
  process.stdout.write(
    'usage: npm run bench -- [--quick] [--out file.json] [--fixtures invoice,report,...] [--no-peers] [--no-fonts] [--no-ratios] [--no-spare] [--no-lambda-cold-start] [--cold-starts N]\n',
  );
  process.exit(0);
}

const quick = args.quick === true;
/** The renderer's spare session (as the renderer Lambda runs it); --no-spare measures without. */
const spare = args['no-spare'] !== true;
/** Measured iterations per fixture (warm-up excluded); the report, 27 pages, gets half. */
const PLAN = quick
  ? { warmup: 3, floor: 12, renderer: 12, sequential: 12, c2: 12, c4: 24, peers: 3, coldStarts: 1 }
  : { warmup: 5, floor: 40, renderer: 40, sequential: 40, c2: 40, c4: 80, peers: 8, coldStarts: 3 };
/** Invoice templating runs measured, in process and then through the worker pool (well under 1 ms each). */
const TEMPLATING_RUNS = quick ? 200 : 1000;
const coldStarts = args['cold-starts'] ? Math.max(1, Number(args['cold-starts'])) : PLAN.coldStarts;
const scale = (f: Fixture, n: number): number => (f.name === 'report' ? Math.max(4, Math.ceil(n / 2)) : n);

const wanted = args.fixtures?.split(',').map((s) => s.trim()) ?? [...FIXTURE_NAMES];
for (const name of wanted) {
  if (!(FIXTURE_NAMES as readonly string[]).includes(name)) {
    process.stderr.write(`bench: unknown fixture "${name}" (have ${FIXTURE_NAMES.join(', ')})\n`);
    process.exit(2);
  }
}
const fixtures = loadFixtures().filter((f) => wanted.includes(f.name));
const startedAt = new Date();
const outFile =
  args.out ?? join(ROOT, 'test', 'bench', 'results', `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);

// ---------------------------------------------------------------------------------------------
// Results

interface FixtureResult {
  name: FixtureName;
  description: string;
  htmlBytes: number;
  expectedPages: number;
  floor?: Summary & { pdfBytes: number };
  renderer?: {
    wall: Summary;
    renderDurationMs: Summary;
    pages: number;
    pdfBytes: number;
    ratioToFloor: number;
    peak: Peak;
    /** CPU per render (warm-up included), ms: Node and Chromium's processes. */
    cpuMsPerRender: { node: number; chromium: number };
  };
  service?: {
    sequential: Summary;
    c2: Summary & { rps: number };
    c4: Summary & { rps: number };
    ratioToFloor: number;
    pages: number;
    failures: number;
    peak: Peak;
    profile: Profile;
    /** CPU per request at concurrency 4, ms: the service's Node process and Chromium's processes. */
    cpuMsPerRenderC4: { node: number; chromium: number };
  };
  peers: Record<string, (Summary & { ratioToFloor: number; pdfBytes: number }) | { skipped: string }>;
  cost?: CostPer1000 & { inputs: { rendererMs: number; apiMs: number } };
}

interface Profile {
  /** Median per stage over the sequential requests, ms. */
  readonly clientMs: number;
  readonly serverMs: number;
  readonly httpAndClientMs: number;
  readonly beforeRenderMs: number;
  readonly dynamoDbBeforeRenderMs: number;
  readonly renderWindowMs: number;
  readonly s3PutMs: number;
  readonly afterRenderMs: number;
  readonly dynamoDbAfterRenderMs: number;
  readonly dynamoDbCallMs: Readonly<Record<string, number>>;
  readonly dynamoDbWritesPerRender: number;
  readonly dynamoDbReadsPerRender: number;
  readonly callsInOrder: readonly string[];
  /** The same with an Idempotency-Key (its claim and answer), the invoice only. */
  readonly keyedCallsInOrder?: readonly string[];
}

const results: FixtureResult[] = fixtures.map((f) => ({
  name: f.name,
  description: f.description,
  htmlBytes: Buffer.byteLength(f.html),
  expectedPages: f.expectedPages,
  peers: {},
}));
const resultOf = (f: Fixture): FixtureResult => results.find((r) => r.name === f.name) as FixtureResult;
const warnings: string[] = [];
const warn = (message: string): void => {
  warnings.push(message);
  note(`warning: ${message}`);
};

const perRender = (
  before: { rootMs: number; descendantsMs: number },
  after: { rootMs: number; descendantsMs: number },
  renders: number,
) => ({
  node: Math.round((after.rootMs - before.rootMs) / renders),
  chromium: Math.round((after.descendantsMs - before.descendantsMs) / renders),
});

const median = (values: readonly number[]): number => summarize(values).p50;

note(`PDF service benchmark (${quick ? 'quick' : 'full'}): ${fixtures.map((f) => f.name).join(', ')}`);

// ---------------------------------------------------------------------------------------------
// Phase 0: the templating cost per invoice (no Chromium; test/bench/templating.ts runs it alone)

let templating: TemplatingResult | undefined;
let templateParse: ParseResult | undefined;
if (wanted.includes('invoice')) {
  progress('templating invoice');
  templating = await measureTemplating(TEMPLATING_RUNS);
  note(
    `templating invoice      p50 ${templating.inProcess.p50} ms in process, ${templating.pool.p50} ms through the worker pool`,
  );
  progress('template parse by size');
  templateParse = measureTemplateParse(quick ? 3 : 5);
  for (const line of templateParseLines(templateParse)) note(line);
}
let eInvoiceBench: EInvoiceBench | undefined;
if (wanted.includes('invoice')) {
  progress('e_invoice validation and the pdf_a / e_invoice steps');
  eInvoiceBench = await measureEInvoice(quick ? 5 : 20);
  for (const line of eInvoiceLines(eInvoiceBench)) note(line);
}

// ---------------------------------------------------------------------------------------------
// Chromium on disk

const extractStarted = performance.now();
chromium.setGraphicsMode = false;
const executablePath = await chromium.executablePath();
const extractionMs = Math.round(performance.now() - extractStarted);
note(
  `chromium: ${executablePath} (ready in ${extractionMs} ms${extractionMs > 500 ? ', first extraction' : ''})`,
);
if (!procAvailable()) warn('no /proc: memory is not measured');

// ---------------------------------------------------------------------------------------------
// Phase 1: the floor

{
  const { browser } = await launchFloorBrowser();
  const version = await browser.version();
  note(`floor: ${version}; ${FLOOR_DEFINITION}`);
  for (const f of fixtures) {
    const n = scale(f, PLAN.floor);
    const samples: number[] = [];
    let bytes = 0;
    for (let i = 0; i < PLAN.warmup + n; i++) {
      const { ms, bytes: b } = await floorOnce(browser, f);
      if (i >= PLAN.warmup) samples.push(ms);
      bytes = b;
      progress(`floor      ${f.name.padEnd(13)} ${bar(i + 1, PLAN.warmup + n)}`);
    }
    resultOf(f).floor = { ...summarize(samples), pdfBytes: bytes };
    note(`floor      ${f.name.padEnd(13)} p50 ${resultOf(f).floor?.p50} ms`);
  }
  await browser.close();
}

// ---------------------------------------------------------------------------------------------
// Phase 2: the renderer alone (the renderer Lambda's process: Node + Chromium)

let rendererColdStart: { readyMs: number; firstPdfMs: number } | undefined;
{
  const hostBundle = await buildRendererHost(ROOT);
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, [hostBundle, ...(spare ? [] : ['--no-spare'])], {
    cwd: ROOT,
    // The layer's fonts, as the renderer Lambda has them (and the service below).
    env: { ...process.env, FONTCONFIG_FILE: process.env.FONTCONFIG_FILE ?? localFontconfigFile(ROOT) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const sampler = startSampler(child.pid as number);
  const nextMessage = <T>(type: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const onMessage = (m: { type: string; message?: string }) => {
        if (m.type === 'error') {
          child.off('message', onMessage);
          reject(new Error(m.message));
        } else if (m.type === type) {
          child.off('message', onMessage);
          resolve(m as T);
        }
      };
      child.on('message', onMessage);
    });
  await nextMessage('ready');
  const readyMs = performance.now() - started;
  let firstPdfMs: number | undefined;
  for (const f of fixtures) {
    const n = scale(f, PLAN.renderer);
    const onProgress = (m: { type: string; done?: number }) => {
      if (m.type !== 'progress') return;
      firstPdfMs ??= performance.now() - started;
      progress(`renderer   ${f.name.padEnd(13)} ${bar(m.done ?? 0, PLAN.warmup + n)}`);
    };
    child.on('message', onProgress);
    sampler.take();
    const cpuBefore = cpuOfTree(child.pid as number);
    child.send({
      type: 'run',
      // As the renderer Lambda gets it: the template and its variables, executed in the renderer.
      template: {
        source: String(f.body.html),
        variables: (f.body.variables as Record<string, unknown>) ?? {},
      },
      options: f.options,
      iterations: n,
      warmup: PLAN.warmup,
    });
    const { samples } = await nextMessage<{
      samples: { wallMs: number; renderDurationMs: number; pages: number; bytes: number }[];
    }>('result');
    child.off('message', onProgress);
    const cpuAfter = cpuOfTree(child.pid as number);
    const peak = sampler.take();
    const wall = summarize(samples.map((s) => s.wallMs));
    const last = samples.at(-1);
    const floor = resultOf(f).floor;
    resultOf(f).renderer = {
      wall,
      renderDurationMs: summarize(samples.map((s) => s.renderDurationMs)),
      pages: last?.pages ?? 0,
      pdfBytes: last?.bytes ?? 0,
      ratioToFloor: floor ? ratio(wall.p50, floor.p50) : Number.NaN,
      peak,
      cpuMsPerRender: perRender(cpuBefore, cpuAfter, PLAN.warmup + n),
    };
    if (last && last.pages !== f.expectedPages) {
      warn(`${f.name}: the renderer printed ${last.pages} pages, the fixture expects ${f.expectedPages}`);
    }
    note(
      `renderer   ${f.name.padEnd(13)} p50 ${wall.p50} ms (×${resultOf(f).renderer?.ratioToFloor} floor), peak RSS ${peak.rssMiB} MiB`,
    );
  }
  rendererColdStart = { readyMs: Math.round(readyMs), firstPdfMs: Math.round(firstPdfMs ?? Number.NaN) };
  const exited = new Promise((r) => child.once('exit', r));
  child.send({ type: 'exit' });
  await exited;
  sampler.stop();
}

// ---------------------------------------------------------------------------------------------
// Phase 2b: the fonts (fonts.ts runs it alone): renderer cold starts without and with them

let fonts: FontsResult | undefined;
if (args['no-fonts'] !== true) {
  fonts = await measureFonts(quick ? 1 : 3, quick ? 8 : 20);
  for (const line of fontsLines(fonts).slice(2)) note(`fonts      ${line}`);
}

// ---------------------------------------------------------------------------------------------
// Phase 2c: the renderer's cold start as Lambda gives it (cold-start.ts runs it alone): the
// synthesized bundle and layer in the Lambda-like sandbox at 1,024 / 2,048 / 3,008 MB, a Latin
// invoice and a first CJK page. Needs root; skipped, and said so, elsewhere.

let lambdaColdStart: string | undefined;
if (args['no-lambda-cold-start'] !== true) {
  if (!canSandbox()) {
    lambdaColdStart = 'skipped: the Lambda-like sandbox needs root, unshare and setpriv';
  } else {
    note('lambda cold start: synthesizing and starting the renderer in the sandbox (minutes)');
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(ROOT, 'test', 'bench', 'cold-start.ts'),
        '--runs',
        quick ? '1' : '2',
        '--layouts',
        'synthesized',
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let text = '';
    child.stdout?.on('data', (c: Buffer) => {
      text += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    lambdaColdStart = code === 0 ? text.trim() : `failed (exit ${code}): ${text.trim()}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Phase 3: the service over HTTP

const profileOf = (traces: readonly ProbeTrace[], clientMs: readonly number[]): Profile => {
  const renders = traces.filter((t) => t.status === 201);
  const stage = (fn: (t: ProbeTrace) => number | undefined) =>
    median(renders.map(fn).filter((v): v is number => v !== undefined && v >= 0));
  /**
   * The render window: from the start of the job's move to `rendering` (the last DynamoDB call to
   * start before the renderer's PUT to S3: it is sent as the render starts) to the first DynamoDB
   * call that starts after that PUT (the job's completion). DynamoDB time is wall time: calls side
   * by side count once.
   */
  const wall = (calls: readonly { at: number; ms: number }[], from: number, to: number) => {
    let total = 0;
    let reached = from;
    for (const c of [...calls].sort((a, b) => a.at - b.at)) {
      const start = Math.max(c.at, reached);
      const end = Math.min(c.at + c.ms, to);
      if (end > start) total += end - start;
      reached = Math.max(reached, Math.min(c.at + c.ms, to));
    }
    return total;
  };
  const split = (t: ProbeTrace) => {
    const calls = [...t.calls].sort((a, b) => a.at - b.at);
    const dynamo = calls.filter((c) => c.kind === 'dynamodb');
    const s3 = calls.find((c) => c.kind === 's3' && c.op.startsWith('fetch'));
    if (!s3) return undefined;
    const beside = dynamo.filter((c) => c.at < s3.at).at(-1);
    if (!beside) return undefined;
    const renderStart = beside.at;
    const complete = dynamo.find((c) => c.at >= s3.at + s3.ms);
    const renderEnd = complete ? complete.at : t.ms;
    return {
      renderStart,
      renderEnd,
      before: wall(
        dynamo.filter((c) => c.at < renderStart),
        0,
        renderStart,
      ),
      afterDynamo: wall(
        dynamo.filter((c) => c.at >= renderEnd),
        renderEnd,
        t.ms,
      ),
      s3: s3.ms,
    };
  };
  const opsMs: Record<string, number[]> = {};
  let writes = 0;
  let reads = 0;
  for (const t of renders) {
    for (const c of t.calls) {
      if (c.kind !== 'dynamodb') continue;
      opsMs[c.op] = [...(opsMs[c.op] ?? []), c.ms];
      if (/Put|Update|Delete/.test(c.op)) writes++;
      if (/Get|Query/.test(c.op)) reads++;
    }
  }
  const serverMs = stage((t) => t.ms);
  return {
    clientMs: median(clientMs),
    serverMs,
    httpAndClientMs: Math.round((median(clientMs) - serverMs) * 10) / 10,
    beforeRenderMs: stage((t) => split(t)?.renderStart),
    dynamoDbBeforeRenderMs: stage((t) => split(t)?.before),
    renderWindowMs: stage((t) => {
      const s = split(t);
      return s ? s.renderEnd - s.renderStart : undefined;
    }),
    s3PutMs: stage((t) => split(t)?.s3),
    afterRenderMs: stage((t) => {
      const s = split(t);
      return s ? t.ms - s.renderEnd : undefined;
    }),
    dynamoDbAfterRenderMs: stage((t) => split(t)?.afterDynamo),
    dynamoDbCallMs: Object.fromEntries(Object.entries(opsMs).map(([op, ms]) => [op, median(ms)])),
    dynamoDbWritesPerRender: Math.round((writes / Math.max(1, renders.length)) * 100) / 100,
    dynamoDbReadsPerRender: Math.round((reads / Math.max(1, renders.length)) * 100) / 100,
    callsInOrder: callsInOrder(renders.at(-1)),
  };
};

const callsInOrder = (trace: ProbeTrace | undefined): string[] =>
  [...(trace?.calls ?? [])]
    .sort((a, b) => a.at - b.at)
    .map((c) => `${c.kind === 'dynamodb' ? c.op : `S3 ${c.op}`}@${Math.round(c.at)}+${Math.round(c.ms)}ms`);

const serviceColdStarts: { listeningMs: number; firstPdfMs: number }[] = [];
{
  const firstBody = fixtures[0]?.body ?? {};
  let service: ServiceProcess | undefined;
  for (let i = 0; i < coldStarts; i++) {
    progress(`service    cold start ${i + 1}/${coldStarts}`);
    service = await startService(firstBody, spare);
    serviceColdStarts.push(service.coldStart);
    note(
      `service    cold start ${i + 1}/${coldStarts}: first PDF ${service.coldStart.firstPdfMs} ms after spawn (listening at ${service.coldStart.listeningMs} ms)${service.coldStart.built ? ', its bundle built first: a source changed meanwhile' : ''}`,
    );
    if (i < coldStarts - 1) await service.stop();
  }
  const svc = service as ServiceProcess;
  const sampler = startSampler(svc.pid);
  for (const f of fixtures) {
    await svc.traces(); // drop earlier ones
    sampler.take();
    const label = (what: string) => (done: number, total: number) =>
      progress(`service    ${f.name.padEnd(13)} ${what.padEnd(10)} ${bar(done, total)}`);
    const warm = await load(svc, f.body, PLAN.warmup, 1, (d) => label('warm-up')(d, PLAN.warmup));
    await svc.traces();
    const nSeq = scale(f, PLAN.sequential);
    const seq = await load(svc, f.body, nSeq, 1, (d) => label('sequential')(d, nSeq));
    const traces = await svc.traces();
    // A few with an Idempotency-Key (each its own): the claim and the answer add their calls.
    let keyedCalls: string[] | undefined;
    if (f.name === 'invoice') {
      for (let i = 0; i < 3; i++) await svc.render(f.body, { 'idempotency-key': `bench-${Date.now()}-${i}` });
      keyedCalls = callsInOrder((await svc.traces()).filter((t) => t.status === 201).at(-1));
    }
    const n2 = scale(f, PLAN.c2);
    const c2 = await load(svc, f.body, n2, 2, (d) => label('conc. 2')(d, n2));
    const n4 = scale(f, PLAN.c4);
    const cpuBefore = cpuOfTree(svc.pid);
    const c4 = await load(svc, f.body, n4, 4, (d) => label('conc. 4')(d, n4));
    const cpuAfter = cpuOfTree(svc.pid);
    const peak = sampler.take();
    const all = [...warm.answers, ...seq.answers, ...c2.answers, ...c4.answers];
    const failures = all.filter((a) => a.status !== 201);
    if (failures.length > 0) {
      warn(
        `${f.name}: ${failures.length} requests failed (${[...new Set(failures.map((a) => `${a.status} ${a.code}`))].join(', ')})`,
      );
    }
    const pages = seq.answers.at(-1)?.pageCount ?? 0;
    if (pages !== f.expectedPages)
      warn(`${f.name}: the service printed ${pages} pages, expected ${f.expectedPages}`);
    const sequential = summarize(seq.answers.map((a) => a.ms));
    const withRps = (r: { answers: { ms: number }[]; wallMs: number }) => ({
      ...summarize(r.answers.map((a) => a.ms)),
      rps: Math.round((r.answers.length / (r.wallMs / 1000)) * 10) / 10,
    });
    const floor = resultOf(f).floor;
    resultOf(f).service = {
      sequential,
      c2: withRps(c2),
      c4: withRps(c4),
      ratioToFloor: floor ? ratio(sequential.p50, floor.p50) : Number.NaN,
      pages,
      failures: failures.length,
      peak,
      profile: {
        ...profileOf(
          traces,
          seq.answers.map((a) => a.ms),
        ),
        ...(keyedCalls ? { keyedCallsInOrder: keyedCalls } : {}),
      },
      cpuMsPerRenderC4: perRender(cpuBefore, cpuAfter, n4),
    };
    const s = resultOf(f).service;
    note(
      `service    ${f.name.padEnd(13)} p50 ${sequential.p50} ms (×${s?.ratioToFloor} floor); c4 ${s?.c4.rps}/s p95 ${s?.c4.p95} ms; peak RSS ${peak.rssMiB} MiB`,
    );
  }
  sampler.stop();
  await svc.stop();
}

// ---------------------------------------------------------------------------------------------
// Phase 4: peers

const peers = args['no-peers'] ? { found: [], missing: ['(--no-peers)'] } : detectPeers();
for (const missing of peers.missing) note(`peers      ${missing}: not installed, skipped`);
for (const peer of peers.found) {
  for (const f of fixtures) {
    const why = peer.unsupported(f);
    if (why) {
      resultOf(f).peers[peer.name] = { skipped: why };
      continue;
    }
    const n = scale(f, PLAN.peers);
    const samples: number[] = [];
    let bytes = 0;
    try {
      for (let i = 0; i < 1 + n; i++) {
        const r = await peerOnce(peer, f);
        if (i >= 1) samples.push(r.ms);
        bytes = r.bytes;
        progress(`peers      ${peer.name} ${f.name.padEnd(13)} ${bar(i + 1, 1 + n)}`);
      }
    } catch (e) {
      resultOf(f).peers[peer.name] = { skipped: `failed: ${(e as Error).message.slice(0, 200)}` };
      warn(`${peer.name} ${f.name}: ${(e as Error).message.slice(0, 200)}`);
      continue;
    }
    const summary = summarize(samples);
    const floor = resultOf(f).floor;
    resultOf(f).peers[peer.name] = {
      ...summary,
      ratioToFloor: floor ? ratio(summary.p50, floor.p50) : Number.NaN,
      pdfBytes: bytes,
    };
    note(`peers      ${peer.name} ${f.name.padEnd(13)} p50 ${summary.p50} ms`);
  }
}

// ---------------------------------------------------------------------------------------------
// Cost model

const memory = readMemorySettings();
const INVOKE_OVERHEAD_MS = 5;
const RETENTION_DAYS = 30;
for (const r of results) {
  if (!r.renderer || !r.service) continue;
  const inputs = { rendererMs: r.renderer.wall.p50 + INVOKE_OVERHEAD_MS, apiMs: r.service.profile.serverMs };
  r.cost = {
    inputs,
    ...costPer1000({
      ...inputs,
      rendererMiB: memory.rendererMiB,
      apiMiB: memory.apiMiB,
      dynamoDbWrites: r.service.profile.dynamoDbWritesPerRender,
      dynamoDbReads: r.service.profile.dynamoDbReadsPerRender * 0.5,
      pdfBytes: r.renderer.pdfBytes,
      retentionDays: RETENTION_DAYS,
    }),
  };
}
const invoice = results.find((r) => r.name === 'invoice');
const alternativeMemory = [1024, 1536, memory.rendererMiB]
  .filter((v, i, a) => a.indexOf(v) === i)
  .map((mib) => ({
    rendererMiB: mib,
    lambdaPer1000Invoices:
      invoice?.cost && invoice.renderer && invoice.service
        ? costPer1000({
            rendererMs: invoice.cost.inputs.rendererMs,
            apiMs: invoice.cost.inputs.apiMs,
            rendererMiB: mib,
            apiMiB: memory.apiMiB,
            dynamoDbWrites: invoice.service.profile.dynamoDbWritesPerRender,
            dynamoDbReads: 0,
            pdfBytes: invoice.renderer.pdfBytes,
            retentionDays: RETENTION_DAYS,
          }).lambda
        : Number.NaN,
  }));

// ---------------------------------------------------------------------------------------------
// Targets

interface Target {
  readonly target: string;
  readonly measured: string;
  readonly met: boolean | null;
}
const report = results.find((r) => r.name === 'report');
const coldStartMs = median(serviceColdStarts.map((c) => c.firstPdfMs));
const targets: Target[] = [];
const check = (
  target: string,
  value: number | undefined,
  ok: (v: number) => boolean,
  show: (v: number) => string,
) =>
  targets.push(
    value === undefined || Number.isNaN(value)
      ? { target, measured: 'not measured', met: null }
      : { target, measured: show(value), met: ok(value) },
  );
check(
  'invoice p50 ≤ 1.15× floor (service, HTTP)',
  invoice?.service?.ratioToFloor,
  (v) => v <= 1.15,
  (v) => `${v}×`,
);
check(
  'report p50 ≤ 1.05× floor (service, HTTP)',
  report?.service?.ratioToFloor,
  (v) => v <= 1.05,
  (v) => `${v}×`,
);
check(
  '≥ 20 invoices/s at concurrency 4',
  invoice?.service?.c4.rps,
  (v) => v >= 20,
  (v) => `${v}/s`,
);
check(
  'p95 ≤ 2× p50 at concurrency 4 (invoice)',
  invoice?.service ? invoice.service.c4.p95 / invoice.service.c4.p50 : undefined,
  (v) => v <= 2,
  (v) =>
    `${Math.round(v * 100) / 100}× (p95 ${invoice?.service?.c4.p95} / p50 ${invoice?.service?.c4.p50} ms)`,
);
check(
  `templating per invoice ≤ ${TEMPLATING_GOAL_MS} ms p50 (through the renderer's worker pool)`,
  templating?.pool.p50,
  (v) => v <= TEMPLATING_GOAL_MS,
  (v) => `${v} ms (p95 ${templating?.pool.p95} ms; in process p50 ${templating?.inProcess.p50} ms)`,
);
check(
  'cold start to first PDF ≤ 1.5 s (service)',
  coldStartMs,
  (v) => v <= 1500,
  (v) => `${v} ms`,
);
const rendererPeak =
  Math.max(invoice?.renderer?.peak.rssMiB ?? 0, report?.renderer?.peak.rssMiB ?? 0) || undefined;
const rendererPss =
  Math.max(invoice?.renderer?.peak.pssMiB ?? 0, report?.renderer?.peak.pssMiB ?? 0) || undefined;
const MB = (mib: number): number => Math.round((mib * 1024 * 1024) / 1e6);
// Judged on PSS: summed RSS counts the pages Chromium's processes share (binary, zygote, fonts)
// once per process; PSS counts each page once, as the Lambda's memory limit (a cgroup) does.
check(
  'peak memory of the rendering process ≤ 512 MB (invoice, report; PSS of Node + Chromium)',
  rendererPss === undefined ? undefined : MB(rendererPss),
  (v) => v <= 512,
  (v) => `${v} MB PSS (summed RSS ${rendererPeak === undefined ? '-' : MB(rendererPeak)} MB)`,
);
check(
  'Lambda cost ≤ $0.02 per 1,000 invoices',
  invoice?.cost?.lambda,
  (v) => v <= 0.02,
  (v) => `$${v.toFixed(4)}`,
);

// ---------------------------------------------------------------------------------------------
// Output

const pad = (s: string | number, n: number): string => String(s).padStart(n);
const padEnd = (s: string | number, n: number): string => String(s).padEnd(n);
const fmt = (n: number | undefined): string =>
  n === undefined || Number.isNaN(n) ? '-' : String(Math.round(n));
const x = (n: number | undefined): string => (n === undefined || Number.isNaN(n) ? '-' : `${n.toFixed(2)}×`);
const usd = (n: number | undefined): string => (n === undefined ? '-' : `$${n.toFixed(4)}`);

const lines: string[] = [];
const out = (line = '') => lines.push(line);
out(
  `PDF service benchmark, ${quick ? 'quick' : 'full'} run, ${startedAt.toISOString()}; ${cpus().length} CPUs, ${Math.round(totalmem() / 1024 ** 3)} GiB, load avg ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at the end`,
);
out(`Floor: ${FLOOR_DEFINITION}.`);
out(
  `Renderer spare session (next render's context + page opened ahead): ${spare ? 'on, as the renderer Lambda runs' : 'off (--no-spare)'}.`,
);
out('');
out('Latency, ms (p50 unless said; sequential = one request at a time; ×floor = p50 / floor p50)');
out(
  `${padEnd('fixture', 13)}${pad('floor', 7)} |${pad('renderer', 9)}${pad('×floor', 7)} |${pad('service', 8)}${pad('p95', 6)}${pad('max', 6)}${pad('×floor', 7)} |${pad('c2 p50', 7)}${pad('p95', 6)}${pad('/s', 6)} |${pad('c4 p50', 7)}${pad('p95', 6)}${pad('/s', 6)} |${pad('pages', 6)}`,
);
for (const r of results) {
  const s = r.service;
  out(
    `${padEnd(r.name, 13)}${pad(fmt(r.floor?.p50), 7)} |${pad(fmt(r.renderer?.wall.p50), 9)}${pad(x(r.renderer?.ratioToFloor), 7)} |${pad(fmt(s?.sequential.p50), 8)}${pad(fmt(s?.sequential.p95), 6)}${pad(fmt(s?.sequential.max), 6)}${pad(x(s?.ratioToFloor), 7)} |${pad(fmt(s?.c2.p50), 7)}${pad(fmt(s?.c2.p95), 6)}${pad(s?.c2.rps ?? '-', 6)} |${pad(fmt(s?.c4.p50), 7)}${pad(fmt(s?.c4.p95), 6)}${pad(s?.c4.rps ?? '-', 6)} |${pad(s?.pages ?? r.renderer?.pages ?? '-', 6)}`,
  );
}
out(
  'renderer = render() in its own process (fresh context, load, print, page count, PUT to a loopback sink)',
);
out(
  'service  = POST /v1/pdf over HTTP to bin/local.ts as npm start runs it (bin/start.mjs): API Gateway emulation, auth, DynamoDB (dynalite), S3 (s3rver), renderer',
);
if (templating) out(templatingLine(templating));
if (templateParse) for (const line of templateParseLines(templateParse)) out(line);
if (eInvoiceBench) for (const line of eInvoiceLines(eInvoiceBench)) out(line);
out('');
out('Where the service time goes, ms (medians of the sequential requests, from test/bench/probe.ts)');
out(
  `${padEnd('fixture', 13)}${pad('client', 7)}${pad('server', 7)}${pad('http', 6)} |${pad('pre-render', 11)}${pad('(ddb)', 6)} |${pad('render', 7)}${pad('(s3 put)', 9)} |${pad('post', 6)}${pad('(ddb)', 6)} | DynamoDB ms per call`,
);
for (const r of results) {
  const p = r.service?.profile;
  if (!p) continue;
  out(
    `${padEnd(r.name, 13)}${pad(fmt(p.clientMs), 7)}${pad(fmt(p.serverMs), 7)}${pad(fmt(p.httpAndClientMs), 6)} |${pad(fmt(p.beforeRenderMs), 11)}${pad(fmt(p.dynamoDbBeforeRenderMs), 6)} |${pad(fmt(p.renderWindowMs), 7)}${pad(fmt(p.s3PutMs), 9)} |${pad(fmt(p.afterRenderMs), 6)}${pad(fmt(p.dynamoDbAfterRenderMs), 6)} | ${Object.entries(
      p.dynamoDbCallMs,
    )
      .map(([op, ms]) => `${op} ${ms}`)
      .join(', ')}`,
  );
}
if (invoice?.service) {
  out(`invoice request, calls in order: ${invoice.service.profile.callsInOrder.join(' ')}`);
  const keyed = invoice.service.profile.keyedCallsInOrder;
  if (keyed) out(`invoice request with an Idempotency-Key, calls in order: ${keyed.join(' ')}`);
}
out('');
out(
  `Cold start: service spawn → first PDF ${serviceColdStarts.map((c) => c.firstPdfMs).join(', ')} ms (median ${fmt(coldStartMs)}); ` +
    `renderer process spawn → first PDF ${fmt(rendererColdStart?.firstPdfMs)} ms; Chromium ready on disk in ${extractionMs} ms this run`,
);
out('');
if (fonts) {
  for (const line of fontsLines(fonts)) out(line);
  out('');
}
out('Peak memory, MiB (summed RSS of the process tree; PSS shares pages between processes fairly)');
out(
  `${padEnd('fixture', 13)}${pad('renderer RSS', 13)}${pad('PSS', 6)}${pad('chromium', 9)}${pad('procs', 6)} |${pad('service RSS', 12)}${pad('PSS', 6)}`,
);
for (const r of results) {
  out(
    `${padEnd(r.name, 13)}${pad(fmt(r.renderer?.peak.rssMiB), 13)}${pad(fmt(r.renderer?.peak.pssMiB), 6)}${pad(fmt(r.renderer?.peak.chromiumRssMiB), 9)}${pad(r.renderer?.peak.processes ?? '-', 6)} |${pad(fmt(r.service?.peak.rssMiB), 12)}${pad(fmt(r.service?.peak.pssMiB), 6)}`,
  );
}
out('');
out('CPU per PDF, ms (user + system; the machine has 2 cores, so 20 PDFs/s leaves 100 ms of CPU per PDF)');
for (const r of results) {
  const a = r.renderer?.cpuMsPerRender;
  const b = r.service?.cpuMsPerRenderC4;
  out(
    `${padEnd(r.name, 13)}renderer alone: node ${fmt(a?.node)} + chromium ${fmt(a?.chromium)}   service at c4: node ${fmt(b?.node)} + chromium ${fmt(b?.chromium)} = ${fmt(b ? b.node + b.chromium : undefined)}`,
  );
}
out('');
if (peers.found.length > 0) {
  out('Peers, ms p50 per PDF as a process (×floor, ×service = their p50 / our sequential service p50)');
  for (const r of results) {
    const cells = peers.found.map((p) => {
      const v = r.peers[p.name];
      if (!v) return `${p.name} -`;
      if ('skipped' in v) return `${p.name} skipped (${v.skipped})`;
      return `${p.name} ${fmt(v.p50)} (${x(v.ratioToFloor)} floor, ${x(r.service ? v.p50 / r.service.sequential.p50 : Number.NaN)} service)`;
    });
    out(`${padEnd(r.name, 13)}${cells.join('   ')}`);
  }
  out(`versions: ${peers.found.map((p) => p.version).join('; ')}`);
} else {
  out(`Peers: none installed (${peers.missing.join(', ')}); skipped`);
}
out('');
out(
  `Cost per 1,000 PDFs, USD (${PRICES.region} list prices; renderer ${memory.rendererMiB} MiB x86_64, API ${memory.apiMiB} MiB arm64)`,
);
out(
  `${padEnd('fixture', 13)}${pad('renderer', 9)}${pad('api', 8)}${pad('requests', 9)}${pad('Lambda', 8)} |${pad('APIGW', 8)}${pad('DynamoDB', 9)}${pad('S3 req', 8)} |${pad('all-in', 8)} |${pad('storage', 8)}`,
);
for (const r of results) {
  const c = r.cost;
  if (!c) continue;
  out(
    `${padEnd(r.name, 13)}${pad(usd(c.rendererCompute), 9)}${pad(usd(c.apiCompute), 8)}${pad(usd(c.lambdaRequests), 9)}${pad(usd(c.lambda), 8)} |${pad(usd(c.apiGateway), 8)}${pad(usd(c.dynamoDb), 9)}${pad(usd(c.s3Requests), 8)} |${pad(usd(c.allIn), 8)} |${pad(usd(c.s3Storage), 8)}`,
  );
}
out(
  `invoice Lambda cost by renderer memory: ${alternativeMemory.map((a) => `${a.rendererMiB} MiB ${usd(a.lambdaPer1000Invoices)}`).join(', ')} (same durations assumed)`,
);
// ---------------------------------------------------------------------------------------------
// Last phase: the ratios of times the tests judge, each against its bound (ratios.ts)

let ratios: RatiosResult | undefined;
if (args['no-ratios'] !== true) {
  note('ratios     running the test files that judge ratios of times (the heavy tier, one at a time)');
  ratios = await measureRatios();
  out('');
  out('Ratios the tests judge (measured / bound)');
  for (const line of ratioLines(ratios)) out(`  ${line}`);
  if (!ratios.testsPassed) warnings.push('a test file that judges a ratio of times failed');
}

out('');
out('Targets');
for (const t of targets)
  out(`  ${t.met === null ? '?' : t.met ? 'met    ' : 'NOT MET'}  ${t.target}: ${t.measured}`);
if (warnings.length > 0) {
  out('');
  out('Warnings');
  for (const w of warnings) out(`  ${w}`);
}

const json = {
  version: 1,
  startedAt: startedAt.toISOString(),
  finishedAt: new Date().toISOString(),
  mode: quick ? 'quick' : 'full',
  spareSession: spare,
  plan: PLAN,
  machine: {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    totalMemGiB: Math.round(totalmem() / 1024 ** 3),
    loadAvgAtEnd: loadavg(),
    node: process.version,
  },
  chromium: { executablePath, readyMs: extractionMs },
  floorDefinition: FLOOR_DEFINITION,
  templating,
  eInvoice: eInvoiceBench,
  templateParse,
  fixtures: results,
  coldStart: {
    service: serviceColdStarts,
    serviceMedianMs: coldStartMs,
    renderer: rendererColdStart,
    lambdaLike: lambdaColdStart,
  },
  fonts,
  ratios,
  peers: { found: peers.found.map((p) => ({ name: p.name, version: p.version })), missing: peers.missing },
  cost: {
    prices: PRICES,
    memory,
    invokeOverheadMs: INVOKE_OVERHEAD_MS,
    retentionDays: RETENTION_DAYS,
    assumptions: COST_ASSUMPTIONS,
    invoiceLambdaByRendererMemory: alternativeMemory,
  },
  targets,
  warnings,
};
if (lambdaColdStart !== undefined) {
  out('');
  out('Cold start as Lambda gives it (test/bench/cold-start.ts, the Lambda-like sandbox):');
  for (const line of lambdaColdStart.split('\n')) out(line);
}
mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, `${JSON.stringify(json, null, 2)}\n`);
out('');
out(`Results: ${relative(process.cwd(), outFile) || outFile}`);
note('done');
process.stdout.write(`${lines.join('\n')}\n`);
