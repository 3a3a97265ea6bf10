/**
 * The integration project's global setup: ONE local stack for the whole run, in a child process
 * of the vitest main process (its handlers' work stays off the process that runs the reporter),
 * with the default settings, on a fresh temporary DATA_DIR. Test files reach it through
 * useLocalStack() without options (local-stack.ts), each with accounts of its own; a file that
 * needs other settings, faults or the handlers in its own process starts a stack of its own.
 */
import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { DEFAULT_PLANS, PLANS_VARIABLE } from '../../functions/settings.js';
import { type StackDescription, startStackProcess } from './child-stack.js';

/**
 * The shared stack's plans: the default ones, unchanged (new accounts start on `free`, as
 * deployed), and plans for files whose tests need other allowances, used through
 * `useLocalStack({ plan })` so those files need no stack of their own.
 */
export const SHARED_PLANS = {
  ...DEFAULT_PLANS,
  /** For files that send many requests (hostile input, faults, template injection). */
  roomy: { monthlyRenders: 1_000_000, rendersPerMinute: 1_000_000 },
  /** Runs out after two renders: for tests of what the quota does and does not count. */
  'two-a-month': { monthlyRenders: 2, rendersPerMinute: 1000 },
} as const;

export type SharedPlan = keyof typeof SHARED_PLANS;

/** Names the shared stack's webhook sender resolves itself (test/helpers/child-stack-options.ts). */
export const SHARED_WEBHOOK_HOSTS = { 'hooks.example.com': [['93.184.216.34'], []] };

/** The handler settings of the shared stack, and of a file's own stack standing in for it. */
export const SHARED_STACK_ENV: Readonly<Record<string, string>> = {
  [PLANS_VARIABLE]: JSON.stringify(SHARED_PLANS),
};

/**
 * The variable of the shared stack's process that holds a random canary: a test that attacks the
 * stack (template-injection) looks for its value in what the stack answers. It is in the stack
 * process's environment, not the handlers' settings, as a secret of the host would be.
 */
export const CANARY_VARIABLE = 'TEMPLATE_CANARY_SECRET';

/** The shared stack as test files see it: its description, and the file its output goes to. */
export type SharedStackDescription = StackDescription & {
  readonly outputFile: string;
  /** The value of CANARY_VARIABLE in the stack's process. */
  readonly canary: string;
};

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * The shared stacks' descriptions (SHARED_STACKS of them), or undefined when the run has none
     * (a unit-only run). A file takes one of them: sharedStackOfThisWorker().
     */
    sharedStacks: readonly SharedStackDescription[] | undefined;
  }
}

/**
 * How many shared stacks the run starts. Each is one Node process whose handlers, DynamoDB, S3
 * and queues share one event loop: with one, that loop was the run's bottleneck (busy 41 of the
 * 43 s template-injection took, while the test workers waited on it). Two, one per core, each
 * serving the files of some workers.
 */
export const SHARED_STACKS = 2;

/**
 * One shared stack for the run, though two projects take it (`integration`, and `heavy` after
 * it): each project loads this file in modules of its own, so the stack is kept on globalThis of
 * the run's main process and stopped when the last project that took it tears down.
 */
const RUN_WIDE = Symbol.for('pdf-render-service.shared-stack');
interface RunWide {
  readonly started: Promise<{ description: SharedStackDescription; stop: () => Promise<void> }[]>;
  users: number;
}

const startShared = async (project: TestProject) => {
  // The environment the vitest config gives test files, which the main process does not have.
  const env = Object.entries(project.config.env).filter(
    (e): e is [string, string] => typeof e[1] === 'string',
  );
  const canary = `envcanary${randomBytes(12).toString('hex')}`;
  const stack = await startStackProcess(
    SHARED_STACK_ENV,
    120_000,
    { ...Object.fromEntries(env), [CANARY_VARIABLE]: canary },
    undefined,
    // A webhook host does not resolve on this machine, and one that does not resolve is refused
    // at creation: this one is public there, then gone (its attempts refused before connecting).
    { webhookHosts: SHARED_WEBHOOK_HOSTS },
  );
  const {
    pid: _pid,
    sessionToken: _sessionToken,
    stderrTail: _stderrTail,
    kill: _kill,
    stop,
    ...description
  } = stack;
  return { description: { ...description, canary }, stop: () => stop() };
};

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const global = globalThis as { [RUN_WIDE]?: RunWide };
  global[RUN_WIDE] ??= {
    started: Promise.all(Array.from({ length: SHARED_STACKS }, () => startShared(project))),
    users: 0,
  };
  const shared = global[RUN_WIDE];
  shared.users++;
  project.provide(
    'sharedStacks',
    (await shared.started).map((s) => s.description),
  );
  return async () => {
    if (--shared.users > 0) return;
    delete global[RUN_WIDE];
    await Promise.all((await shared.started).map((s) => s.stop()));
  };
}
