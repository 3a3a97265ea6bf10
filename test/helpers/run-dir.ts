/**
 * A global setup: one temporary directory for the whole run (`inject('runDir')`), removed at its
 * end, for what files of a run share on disk (bundled-synth.ts, the heavy project's lock in
 * one-at-a-time.ts). Several projects take it; each loads this file in modules of its own, so the
 * directory is kept on globalThis of the run's main process and removed after the last of them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A temporary directory for the whole run, removed at its end. */
    runDir: string | undefined;
  }
}

const RUN_WIDE = Symbol.for('pdf-render-service.run-dir');
interface RunWide {
  readonly dir: Promise<string>;
  users: number;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const global = globalThis as { [RUN_WIDE]?: RunWide };
  global[RUN_WIDE] ??= { dir: mkdtemp(join(tmpdir(), 'pdf-service-run-')), users: 0 };
  const shared = global[RUN_WIDE];
  shared.users++;
  const dir = await shared.dir;
  project.provide('runDir', dir);
  return async () => {
    if (--shared.users > 0) return;
    delete global[RUN_WIDE];
    await rm(dir, { recursive: true, force: true });
  };
}
