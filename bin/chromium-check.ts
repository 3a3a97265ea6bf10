/**
 * `npm run chromium:check`: the visual and speed gate for a Chromium upgrade
 * (test/chromium-check/check.ts). Prints the fixtures with a Chromium, compares every page with
 * the committed baselines and each fixture's time and CPU with the baseline's, prints a report,
 * and exits 1 when a page differs past its fixture's threshold or a fixture's CPU doubled.
 *
 *   npm run chromium:check                                   # the installed @sparticuz/chromium
 *   npm run chromium:check -- --chromium /tmp/next-chromium/node_modules/@sparticuz/chromium
 *   npm run chromium:check -- --update                       # write new baselines (after review)
 *
 * `--chromium` (or CHROMIUM_CHECK_PACKAGE) names another @sparticuz/chromium package directory,
 * installed outside the repository: its Chromium is inflated into a scratch directory and used
 * instead. Also: --runs N (timed renders per fixture, default 3), --fixtures a,b, --out file (the
 * report), --diff-dir dir (each differing page's diff image).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { brotliDecompressSync } from 'node:zlib';
import { runCheck } from '../test/chromium-check/check.js';
import { CHECK_FIXTURES } from '../test/chromium-check/fixtures.js';

const { values: args } = parseArgs({
  options: {
    chromium: { type: 'string' },
    update: { type: 'boolean', default: false },
    runs: { type: 'string', default: '3' },
    fixtures: { type: 'string' },
    out: { type: 'string' },
    'diff-dir': { type: 'string' },
  },
  strict: true,
});

const packageDir = args.chromium ?? process.env.CHROMIUM_CHECK_PACKAGE;

/** The package's Chromium, inflated with SwiftShader beside it (it loads its GL libraries from there). */
const inflate = (dir: string, into: string): string => {
  const bin = join(dir, 'bin');
  if (!existsSync(join(bin, 'chromium.br'))) throw new Error(`chromium:check: ${bin} has no chromium.br`);
  const binary = join(into, 'chromium');
  writeFileSync(binary, brotliDecompressSync(readFileSync(join(bin, 'chromium.br'))));
  chmodSync(binary, 0o755);
  const tar = join(into, 'swiftshader.tar');
  writeFileSync(tar, brotliDecompressSync(readFileSync(join(bin, 'swiftshader.tar.br'))));
  execFileSync('tar', ['xf', tar, '-C', into, '--no-same-owner']);
  return binary;
};

const scratch = packageDir ? mkdtempSync(join(tmpdir(), 'chromium-check-next-')) : undefined;
try {
  const version = (dir: string) =>
    (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  const chromeExecutablePath = packageDir && scratch ? inflate(packageDir, scratch) : undefined;
  const label = `@sparticuz/chromium ${version(packageDir ?? join(import.meta.dirname, '..', 'node_modules', '@sparticuz', 'chromium'))}`;
  const wanted = args.fixtures?.split(',');
  const fixtures = wanted ? CHECK_FIXTURES.filter((f) => wanted.includes(f.name)) : CHECK_FIXTURES;
  if (args['diff-dir']) mkdirSync(args['diff-dir'], { recursive: true });
  const { results, report } = await runCheck({
    ...(chromeExecutablePath ? { chromeExecutablePath } : {}),
    chromiumLabel: label,
    runs: Math.max(1, Number(args.runs)),
    update: args.update ?? false,
    fixtures,
    ...(args['diff-dir'] ? { diffDir: args['diff-dir'] } : {}),
  });
  process.stdout.write(`${report}\n`);
  if (args.out) writeFileSync(args.out, `${report}\n`);
  process.exitCode = results.every((r) => r.failures.length === 0) ? 0 : 1;
} finally {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}
