/**
 * The ratios of times the tests judge (a bystander's render during a page flood against one idle,
 * a read during a parse, a render beside a batch, the 202 of an async render against a sync one,
 * a pooled parse's longest gap): the bench runs those test files and reports each ratio beside
 * the bound the test holds it to, so that a ratio creeping towards its bound is seen before a
 * test fails on it. The files report through reportRatio (test/helpers/timing.ts).
 *
 *   npx tsx test/bench/ratios.ts      # alone (a few minutes: the files of the heavy tier run one at a time)
 *   npm run bench                     # a phase of the bench (--no-ratios leaves it out)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The test files that judge a ratio of times, by project. */
export const RATIO_FILES = {
  heavy: [
    'test/integration/page-floods.test.ts',
    'test/integration/template-parsing.test.ts',
    'test/integration/batch-fairness.test.ts',
    'test/integration/webhook-isolation.test.ts',
    'test/integration/async-large-document.test.ts',
    'test/unit/template-parser.test.ts',
  ],
  unit: ['test/unit/templating-engine.test.ts'],
} as const;

export interface RatioResult {
  readonly name: string;
  readonly ratio: number;
  /** The bound the test holds the ratio under (it fails at or over it). */
  readonly bound: number;
  readonly detail: string;
}

export interface RatiosResult {
  readonly ratios: RatioResult[];
  /** Whether every test of those files passed. */
  readonly testsPassed: boolean;
}

const runVitest = (args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> =>
  new Promise((resolve) => {
    const child = spawn(join(ROOT, 'node_modules', '.bin', 'vitest'), ['run', ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('exit', (code) => resolve(code ?? 1));
  });

/** Runs the files, one project after the other, and reads the ratios they reported. */
export const measureRatios = async (): Promise<RatiosResult> => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-ratios-'));
  const file = join(dir, 'ratios.jsonl');
  try {
    const env = { ...process.env, BENCH_RATIOS_FILE: file };
    let testsPassed = true;
    for (const [project, files] of Object.entries(RATIO_FILES)) {
      const code = await runVitest(['--project', project, ...files], env);
      testsPassed &&= code === 0;
    }
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // no file reported a ratio
    }
    const ratios = text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as RatioResult);
    return { ratios, testsPassed };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

/** One line per ratio: the measured ratio, its bound, and how much of the bound it uses. */
export const ratioLines = ({ ratios, testsPassed }: RatiosResult): string[] => [
  ...ratios.map(
    (r) =>
      `×${r.ratio.toFixed(2).padStart(6)} of ×${r.bound.toFixed(2).padEnd(5)} (${Math.round((100 * r.ratio) / r.bound)}% of the bound)  ${r.name}`,
  ),
  testsPassed ? 'every test of those files passed' : 'SOME TESTS OF THOSE FILES FAILED (see above)',
];

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await measureRatios();
  process.stdout.write(`${ratioLines(result).join('\n')}\n`);
}
