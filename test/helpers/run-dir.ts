/**
 * A global setup: one temporary directory for the whole run (`inject('runDir')`), removed at its
 * end, for what files of a run share on disk (bundled-synth.ts).
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

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'pdf-service-run-'));
  project.provide('runDir', dir);
  return () => rm(dir, { recursive: true, force: true });
}
