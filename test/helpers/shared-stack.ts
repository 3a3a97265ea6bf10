/**
 * The integration project's global setup: ONE local stack for the whole run, in a child process
 * of the vitest main process (its handlers' work stays off the process that runs the reporter),
 * with the default settings, on a fresh temporary DATA_DIR. Test files reach it through
 * useLocalStack() without options (local-stack.ts), each with accounts of its own; a file that
 * needs other settings, faults or the handlers in its own process starts a stack of its own.
 */
import type { TestProject } from 'vitest/node';
import { type StackDescription, startStackProcess } from './child-stack.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The shared stack's description, or undefined when the run has none (a unit-only run). */
    sharedStack: StackDescription | undefined;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The environment the vitest config gives test files, which the main process does not have.
  const env = Object.entries(project.config.env).filter(
    (e): e is [string, string] => typeof e[1] === 'string',
  );
  const stack = await startStackProcess({}, 120_000, Object.fromEntries(env));
  const {
    pid: _pid,
    sessionToken: _sessionToken,
    stderrTail: _stderrTail,
    kill: _kill,
    stop,
    ...description
  } = stack;
  project.provide('sharedStack', description);
  return () => stop();
}
