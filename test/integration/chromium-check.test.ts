/**
 * `npm run chromium:check`, the gate for a Chromium upgrade (docs/deploy.md, Upgrading Chromium):
 * the deploy guide's commands run as written, with the installed @sparticuz/chromium copied to a
 * scratch directory standing in for the next version (the test installs nothing), and the
 * committed baselines pass with the current Chromium. The gate must also fail when a document's
 * print changes: a fixture with one word changed is compared with the baseline of the original.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { runCheck } from '../chromium-check/check.js';
import { CHECK_FIXTURES } from '../chromium-check/fixtures.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const DEPLOY = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');

/** The `sh` block of docs/deploy.md's "Upgrading Chromium". */
const upgradeBlock = (): string[] => {
  const start = DEPLOY.indexOf('\n## Upgrading Chromium');
  const end = DEPLOY.indexOf('\n## ', start + 1);
  const block = /```sh\n([\s\S]*?)```/.exec(DEPLOY.slice(start, end))?.[1] ?? '';
  return block.split('\n').filter((l) => l.trim() !== '');
};

const scratch = mkdtempSync(join(tmpdir(), 'chromium-check-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('npm run chromium:check', () => {
  it("runs the deploy guide's upgrade commands: the installed version stands in for the next, and passes", async () => {
    const [install, check] = upgradeBlock();
    expect(install).toMatch(
      /^npm install --prefix \/tmp\/next-chromium .*@sparticuz\/chromium@\d+\.\d+\.\d+$/,
    );
    expect(check).toMatch(
      /^npm run chromium:check -- --chromium \/tmp\/next-chromium\/node_modules\/@sparticuz\/chromium/,
    );
    // The install's stand-in: the same layout `npm install --prefix` makes, without the registry.
    const prefix = join(scratch, 'next-chromium');
    cpSync(
      join(REPO, 'node_modules', '@sparticuz', 'chromium'),
      join(prefix, 'node_modules', '@sparticuz', 'chromium'),
      {
        recursive: true,
      },
    );
    const command = (check ?? '')
      .replaceAll('/tmp/next-chromium', prefix)
      .replaceAll('/tmp/chromium-diffs', join(scratch, 'diffs'));
    const { stdout } = await run('sh', ['-c', command], { cwd: REPO, maxBuffer: 2 ** 24 });
    const version = JSON.parse(
      readFileSync(join(prefix, 'node_modules', '@sparticuz', 'chromium', 'package.json'), 'utf8'),
    ).version;
    expect(stdout).toContain(`chromium:check: @sparticuz/chromium ${version}`);
    for (const f of CHECK_FIXTURES) expect(stdout).toMatch(new RegExp(`\\| ${f.name} \\| .*\\| ok \\|`));
    expect(stdout).toContain('PASS: every page within its threshold');
  }, 300_000);

  it('fails, naming the page, when one word of a document prints differently', async () => {
    const original = CHECK_FIXTURES.find((f) => f.name === 'starter-e-invoice');
    if (!original) throw new Error('no starter-e-invoice fixture');
    const changed = {
      ...original,
      body: { ...original.body, html: original.body.html.replace('<h1>Invoice', '<h1>Invoiced') },
    };
    expect(changed.body.html).not.toBe(original.body.html);
    const { results, report } = await runCheck({
      chromiumLabel: 'changed',
      runs: 1,
      update: false,
      fixtures: [changed],
    });
    expect(results[0]?.failures.join()).toMatch(/page 1: [\d.]+% of pixels differ/);
    expect(report).toContain('FAIL: 1 of 1 fixtures');
  }, 300_000);
});
