/**
 * The documentation's examples run as written: every `sh` block of the README and of the docs/
 * pages in DOCS_IN_ORDER, in that order, in one shell, against the run's local stack, with the
 * port they name (3000, where `npm start` listens) replaced by the stack's free one, so that the
 * test runs beside a running `npm start`; `npm install`, `npm start` and `npm test` are left to
 * the test itself. A block right after a `<!-- needs AWS` comment is not run (it deploys, or needs
 * a deployed stack), and every page with a `sh` block is either run or named in NEEDS_AWS. Any
 * request that answers an error fails the run (curl with --fail-with-body), and the examples must
 * leave the repository as they found it.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { putAccountOnPlan, useLocalStack } from '../helpers/local-stack.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The pages whose examples run, in the order a reader meets them: each page's examples may use
 * what an earlier one made (the Quickstart's `TOKEN` and `OUT`, the API guide's `BASE`, the
 * rendering page's `$OUT/invoice.json` that the merge example merges). Operations comes after
 * every page that uses the account: its example deletes the account the others use.
 */
const DOCS_IN_ORDER = [
  'README.md',
  'docs/getting-started.md',
  'docs/api/index.md',
  'docs/api/pdf.md',
  'docs/api/jobs.md',
  'docs/api/batches.md',
  'docs/api/merges.md',
  'docs/api/templates.md',
  'docs/api/previews.md',
  'docs/api/assets.md',
  'docs/api/api-keys.md',
  'docs/api/destinations.md',
  'docs/webhooks.md',
  'docs/api/account.md',
  'docs/api/errors.md',
  'docs/operations.md',
  'docs/contributing.md',
];

/** Pages whose every command needs an AWS account (deploying, a deployed stack). */
const NEEDS_AWS = ['docs/deploy.md'];

const read = (file: string): string => readFileSync(join(REPO, file), 'utf8');

const markdownFiles = (dir: string): string[] =>
  readdirSync(join(REPO, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory())
      return entry.name === 'node_modules' || entry.name.startsWith('.') ? [] : markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });

/** A page's `sh` blocks, without those marked as needing AWS. */
const runnableBlocks = (markdown: string): string[] =>
  [...markdown.matchAll(/(<!-- needs AWS[^\n]*-->\n)?```sh\n([\s\S]*?)```/g)]
    .filter((m) => m[1] === undefined)
    .map((m) => m[2] ?? '');

const allBlocks = (): string[] => DOCS_IN_ORDER.flatMap((file) => runnableBlocks(read(file)));

/**
 * Lines the test does itself: installing, starting the server, running the tests; building the
 * documentation site is test/integration/docs-site.test.ts's (heavy tier).
 */
const LEFT_TO_THE_TEST = /^npm (install|ci|start|test|run test(:[\w-]+)?|run docs:build)\b/;

const gitStatus = async (): Promise<string[]> =>
  (await run('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: REPO })).stdout
    .split('\n')
    .filter((l) => l !== '')
    .sort();

/** The account the README's token is for (`npm run token -- --sub user-1`). */
const README_ACCOUNT = 'user-1';

/** Where the README's examples send their requests (`npm start`'s default address). */
const README_BASE_URL = 'http://127.0.0.1:3000';

/**
 * A stack as `npm start` runs one: spare sessions on (the next render's page opened ahead of it),
 * which the shared stack does not have.
 */
// example.com, the README's webhook URL, resolves to a public address as it does on the internet
// (this machine has no DNS): a URL whose host does not resolve is refused at creation (issue 38).
const local = useLocalStack({
  rendererSpareSessions: 1,
  webhookHosts: { 'example.com': [['93.184.216.34']] },
});

// The examples make more render requests (renders, a batch, a merge) than the free plan's 10 a
// minute, one right after another: their account (the Quickstart's user-1) is on the pro plan.
beforeAll(async () => {
  await putAccountOnPlan(local.stack, 'user-1', 'pro');
});

/**
 * The README's examples are tried as a user tries them, not back to back: a pause before the
 * page-load example, longer than Chromium's network-idle watch (0.5-2 s), so that its render gets
 * a spare page that has been idle. It used to answer 504 then (issue 32).
 */
const IDLE_PAUSE_S = 4;

/**
 * Every page's examples, one after another: some 60 requests, 20 renders, a batch sent twice, and
 * the admin command started 7 times (tsx, 2-4 s each on 2 busy cores).
 */
const EXAMPLES_TIMEOUT_MS = 300_000;
const withIdlePause = (block: string): string =>
  block.includes('"wait_until": "networkidle0"') ? `sleep ${IDLE_PAUSE_S}\n${block}` : block;

describe('README and docs examples', () => {
  it('runs every page that has an example, or says why not', () => {
    const withExamples = ['README.md', ...markdownFiles('docs')].filter((f) => /```sh\n/.test(read(f)));
    const unaccounted = withExamples.filter((f) => !DOCS_IN_ORDER.includes(f) && !NEEDS_AWS.includes(f));
    expect(unaccounted).toEqual([]);
    // The README's own examples: a render from Node.js and one from Python, with an API key.
    const readme = runnableBlocks(read('README.md')).join('\n');
    expect(readme).toContain("node --input-type=module <<'JS'");
    expect(readme).toContain("python3 - <<'PY'");
  });

  it('finds the examples it runs', () => {
    const blocks = allBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    expect(blocks.join('\n')).toContain('POST $BASE/v1/pdf');
    // The page-load example the idle pause goes before.
    expect(blocks.filter((b) => withIdlePause(b) !== b)).toHaveLength(1);
  });

  it(
    'run as written, in order, without an error answer and without writing into the repository',
    async () => {
      const script = [
        'set -euo pipefail',
        // An error answer fails the command, and with it the run.
        'curl() { command curl --fail-with-body "$@"; }',
        ...allBlocks().map((block) =>
          withIdlePause(
            block
              .split('\n')
              .filter((line) => !LEFT_TO_THE_TEST.test(line.trim()))
              .join('\n')
              .replaceAll(README_BASE_URL, local.stack.baseUrl),
          ),
        ),
      ].join('\n');
      // A person pauses between examples; the test does not, and the examples make more renders
      // than the free plan's 10 a minute: the README's account is on the starter plan (60).
      await putAccountOnPlan(local.stack, README_ACCOUNT, 'starter');
      const before = await gitStatus();
      let output: { stdout: string; stderr: string };
      try {
        output = await run('bash', ['-c', script], {
          cwd: REPO,
          env: {
            PATH: process.env.PATH ?? '',
            HOME: process.env.HOME ?? '/tmp',
            DATA_DIR: local.stack.dataDir,
          },
          timeout: EXAMPLES_TIMEOUT_MS - 10_000,
          maxBuffer: 32 * 1024 * 1024,
        });
      } catch (e) {
        const failed = e as { stdout?: string; stderr?: string; code?: number };
        throw new Error(
          `the documentation's examples failed (exit ${failed.code}):\n--- stderr\n${failed.stderr?.slice(-3000)}\n--- stdout\n${failed.stdout?.slice(-3000)}`,
        );
      }
      expect(output.stdout).toContain('"status":"completed"');
      // The README's Node.js and Python renders of its saved template, with its API key.
      expect(output.stdout.match(/job_\w+ completed 1 page\(s\)$/gm)).toHaveLength(2);
      expect(await gitStatus()).toEqual(before);
    },
    EXAMPLES_TIMEOUT_MS,
  );
});
