/** `npm start` and `npm test` refuse an older Node.js in one line (bin/require-node.cjs). */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../bin/require-node.cjs', import.meta.url));

/** Runs the check in a Node.js that reports `version` (the real one when absent). */
const check = (version?: string) =>
  spawnSync(
    process.execPath,
    [
      ...(version
        ? [
            '--import',
            `data:text/javascript,Object.defineProperty(process,"versions",{value:{...process.versions,node:"${version}"}});Object.defineProperty(process,"version",{value:"v${version}"})`,
          ]
        : []),
      SCRIPT,
    ],
    { encoding: 'utf8' },
  );

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
});
