/**
 * `npm start` and `npm test` refuse an older Node.js in one line (bin/require-node.cjs), and
 * `npm install` refuses it before installing anything (`engine-strict` in .npmrc).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../bin/require-node.cjs', import.meta.url));

/** Node.js flags that make it report `version`. */
const pretend = (version: string) => [
  '--import',
  `data:text/javascript,Object.defineProperty(process,"versions",{value:{...process.versions,node:"${version}"}});Object.defineProperty(process,"version",{value:"v${version}"})`,
];

/** Runs the check in a Node.js that reports `version` (the real one when absent). */
const check = (version?: string) =>
  spawnSync(process.execPath, [...(version ? pretend(version) : []), SCRIPT], { encoding: 'utf8' });

/** npm's own script: the one running the tests, else the one on PATH. */
const npmCli = (): string =>
  process.env.npm_execpath?.endsWith('npm-cli.js')
    ? process.env.npm_execpath
    : realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim());

describe('require-node', () => {
  it('lets this Node.js through, silently', () => {
    const run = check();
    expect(run.status).toBe(0);
    expect(run.stdout + run.stderr).toBe('');
  });

  it('refuses Node.js 20 with one line that says what to install', () => {
    const run = check('20.11.1');
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.trimEnd().split('\n')).toEqual([
      'This project needs Node.js 22 or newer, and this is v20.11.1: install Node.js 22 (nvm install 22, or https://nodejs.org/) and run it again.',
    ]);
  });

  // 22.12, not 22: with engine-strict, npm refuses every package whose engines refuse the Node.js
  // it runs on, and some of ours (asn1js, pkijs, @redocly/cli) need 22.12 or newer.
  it('makes npm install on Node.js 20 stop before installing anything, naming the Node.js needed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'engine-strict-'));
    try {
      for (const file of ['package.json', 'package-lock.json', '.npmrc']) {
        copyFileSync(fileURLToPath(new URL(`../../${file}`, import.meta.url)), join(dir, file));
      }
      // Offline, with an empty cache: were the engine let through, npm would fail on its first
      // package instead (ENOTCACHED), not on the engine.
      const run = spawnSync(
        process.execPath,
        [
          ...pretend('20.20.2'),
          npmCli(),
          'install',
          '--offline',
          '--ignore-scripts',
          '--no-audit',
          '--no-fund',
        ],
        { cwd: dir, encoding: 'utf8', env: { ...process.env, npm_config_cache: join(dir, '.npm') } },
      );
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('npm error code EBADENGINE');
      expect(run.stderr).toContain('Required: {"node":">=22.12"}');
      expect(existsSync(join(dir, 'node_modules'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
