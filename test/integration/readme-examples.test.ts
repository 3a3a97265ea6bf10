/**
 * The README's examples run as written: every `sh` block of the Quickstart and the API sections,
 * in order, in one shell, against the run's local stack, with the port they name (3000, where
 * `npm start` listens) replaced by the stack's free one, so that the test runs beside a running
 * `npm start`; `npm install`, `npm start` and `npm test` are left to the test itself. Any request that answers an error fails the
 * run (curl with --fail-with-body), and the examples must leave the repository as they found it.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { putAccountOnPlan, useLocalStack } from '../helpers/local-stack.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The `sh` blocks between `## Quickstart` and the next section after `## API`. */
const runnableBlocks = (markdown: string): string[] => {
  const start = markdown.indexOf('\n## Quickstart');
  const api = markdown.indexOf('\n## API', start);
  const end = markdown.indexOf('\n## ', api + 1);
  const part = markdown.slice(start, end === -1 ? undefined : end);
  return [...part.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
};

/** Lines the test does itself: installing, starting the server, running the tests. */
const LEFT_TO_THE_TEST = /^npm (install|ci|start|test|run test(:[\w-]+)?)\b/;

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
const withIdlePause = (block: string): string =>
  block.includes('"wait_until": "networkidle0"') ? `sleep ${IDLE_PAUSE_S}\n${block}` : block;

describe('README examples', () => {
  it('finds the examples it runs', () => {
    const blocks = runnableBlocks(README);
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    expect(blocks.join('\n')).toContain('POST $BASE/v1/pdf');
    // The page-load example the idle pause goes before.
    expect(blocks.filter((b) => withIdlePause(b) !== b)).toHaveLength(1);
  });

  it('run as written, in order, without an error answer and without writing into the repository', async () => {
    const script = [
      'set -euo pipefail',
      // An error answer fails the command, and with it the run.
      'curl() { command curl --fail-with-body "$@"; }',
      ...runnableBlocks(README).map((block) =>
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
        timeout: 120_000,
        maxBuffer: 32 * 1024 * 1024,
      });
    } catch (e) {
      const failed = e as { stdout?: string; stderr?: string; code?: number };
      throw new Error(
        `the README's examples failed (exit ${failed.code}):\n--- stderr\n${failed.stderr?.slice(-3000)}\n--- stdout\n${failed.stdout?.slice(-3000)}`,
      );
    }
    expect(output.stdout).toContain('"status":"completed"');
    expect(await gitStatus()).toEqual(before);
  });
});
