/**
 * The `heavy` project's setup file (vitest.config.ts): its files run one at a time, so that
 * nothing else competes with the controls of the files that judge time, and the files that load
 * the machine on purpose do not load it for one another.
 *
 * vitest sizes its pools once for the whole run (maxWorkers), not per project, so the project
 * cannot ask for one worker; instead each file takes a lock in the run's directory before it is
 * even imported, and gives it back after its last hook. A worker that waits for it only waits
 * (no CPU). A holder that died without giving it back (a crash, a kill) is found by its pid.
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, inject } from 'vitest';

const runDir = inject('runDir');
if (!runDir) throw new Error('the heavy project needs the run directory (test/helpers/run-dir.ts)');
const lock = join(runDir, 'heavy.lock');
const holderFile = join(lock, 'pid');

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Whether the lock's holder is gone: its pid no longer runs, or it never wrote one within 30 s. */
const abandoned = (): boolean => {
  try {
    return !alive(Number(readFileSync(holderFile, 'utf8')));
  } catch {
    try {
      return Date.now() - statSync(lock).mtimeMs > 30_000;
    } catch {
      return false; // released meanwhile
    }
  }
};

for (;;) {
  try {
    await mkdir(lock);
    break;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (abandoned()) rmSync(lock, { recursive: true, force: true });
    else await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
await writeFile(holderFile, String(process.pid));

/** Removes the lock if this process holds it (a process that vitest reuses may hold it again later). */
const release = () => {
  try {
    if (Number(readFileSync(holderFile, 'utf8')) === process.pid)
      rmSync(lock, { recursive: true, force: true });
  } catch {
    // not held
  }
};
process.once('exit', release);
// Registered before the file's own hooks, so it runs after all of them (hooks run as a stack).
afterAll(release);
