/**
 * The renderer alone, in this process, as the renderer Lambda runs it (spare session on): wall
 * per render and CPU per render (Node and Chromium's processes, from /proc), sequential or with
 * `--concurrency` renders at a time. A quicker, steadier figure than the full bench on a busy
 * machine, where CPU per render is the figure to trust.
 *
 *   npx tsx test/bench/renderer-cpu.ts [--fixture invoice] [--runs 40] [--concurrency 1] [--memory]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { readRendererConfig } from '../../functions/core/config.js';
import { createInProcessRenderer } from '../../functions/renderer/in-process.js';
import { loadFixtures } from './fixtures/index.js';
import { cpuOfTree, startSampler } from './lib/proc.js';
import { summarize } from './lib/stats.js';

const { values: args } = parseArgs({
  options: {
    fixture: { type: 'string', default: 'invoice' },
    runs: { type: 'string', default: '40' },
    concurrency: { type: 'string', default: '1' },
    // Peak PSS of Node + Chromium, sampled from /proc (its sampling costs this process some CPU).
    memory: { type: 'boolean', default: false },
  },
});
const fixture = loadFixtures().find((f) => f.name === args.fixture);
if (!fixture) throw new Error(`unknown fixture ${args.fixture}`);
const runs = Number(args.runs);
const concurrency = Number(args.concurrency);

const sink = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-length': '0' }).end());
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const upload = {
  url: `http://127.0.0.1:${(sink.address() as AddressInfo).port}/bucket/cpu.pdf`,
  headers: {},
};
const renderer = createInProcessRenderer(readRendererConfig(), { spareSessions: 1 });

let n = 0;
const once = async (): Promise<number> => {
  const started = performance.now();
  const result = await renderer.render({
    jobId: `job_cpu_${n++}`,
    template: { source: String(fixture.body.html), variables: JSON.stringify(fixture.body.variables ?? {}) },
    ...fixture.options,
    upload,
    limits: { maxPdfBytes: 50 * 1024 * 1024, maxPages: 1000, maxHtmlBytes: 10 * 1024 * 1024 },
  } as Parameters<typeof renderer.render>[0]);
  if (!result.ok) throw new Error(`render failed: ${result.code} ${result.message}`);
  return performance.now() - started;
};
for (let i = 0; i < 4; i++) await once();
await new Promise((r) => setTimeout(r, 200));
const sampler = args.memory ? startSampler(process.pid) : undefined;
sampler?.take();
const before = cpuOfTree(process.pid);
const started = performance.now();
const walls: number[] = [];
let left = runs;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (left-- > 0) walls.push(await once());
  }),
);
const elapsed = performance.now() - started;
await new Promise((r) => setTimeout(r, 300)); // the last contexts close
const after = cpuOfTree(process.pid);
const wall = summarize(walls);
const peak = sampler?.take();
sampler?.stop();
process.stdout.write(
  `${fixture.name} x${runs} at concurrency ${concurrency}: wall p50 ${wall.p50} ms p95 ${wall.p95} ms, ` +
    `${((runs / elapsed) * 1000).toFixed(1)}/s; CPU per render node ${((after.rootMs - before.rootMs) / runs).toFixed(0)} + ` +
    `chromium ${((after.descendantsMs - before.descendantsMs) / runs).toFixed(0)} ms` +
    `${peak ? `; peak PSS ${Math.round((peak.pssMiB * 1024 * 1024) / 1e6)} MB` : ''}; load avg ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\n`,
);
await renderer.close();
sink.close();
process.exit(0);
