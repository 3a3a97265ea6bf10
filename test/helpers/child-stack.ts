/**
 * The local stack in a child process (test/helpers/stack-process.ts, from an esbuild bundle as
 * `npm start` runs its stack: lib/local/start-bundle.mjs), in its own process group, on a fresh
 * temporary DATA_DIR. Two users:
 *
 * - the shared stack (shared-stack.ts), started once per `npm test` by the integration project's
 *   global setup: it outlives every worker, and each worker reaches it from its description;
 * - tests whose requests may block the event loop serving them (template-bombs): the test
 *   process keeps its own timers, so it can tell a hung stack from a slow one;
 * - test files with a stack of their own whose settings are plain data (useLocalStack in
 *   local-stack.ts): a bundled stack starts for far less CPU than the same stack loaded into the
 *   test process through vite's module loader, and leaves the test process nothing to share.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadOrCreateIssuer } from '../../lib/local/issuer.js';
import type { LocalStack } from '../../lib/local/stack.js';
import { type BundleTarget, currentBuild } from '../../lib/local/start-bundle.mjs';
import { type ChildStackOptions, serializeChildStackOptions } from './child-stack-options.js';

/**
 * What stack-process.ts prints about its stack: the LocalStack without its methods, and where to
 * ask what changed on the built-in prototypes of the stack's threads (prototype-probe.ts).
 */
export type StackDescription = Omit<LocalStack, 'issueToken' | 'close'> & {
  readonly prototypeProbeUrl: string;
};

export interface StackProcess extends StackDescription {
  readonly pid: number;
  /** Everything the stack process wrote to stdout and stderr (its handlers' log lines), as it wrote it. */
  readonly outputFile: string;
  /** A session token for `sub` (a new account each call unless given). */
  sessionToken(sub?: string): Promise<string>;
  /** The last lines the stack wrote to stderr, for failure messages. */
  stderrTail(): string;
  /** SIGTERM to the stack's process group, SIGKILL after `graceMs`; removes its DATA_DIR (unless the caller's). */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL to the stack's process group, at once (a crash): nothing is cleaned up, DATA_DIR stays. */
  kill(): Promise<void>;
}

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A bound on a wait that is raced against the stack's exit: unref'd, so that once the stack has
 * exited it does not keep the process that waited alive (the run's main process held on for the
 * rest of a 5 s grace after the shared stack had stopped).
 */
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

const STACK_PROCESS: BundleTarget = {
  name: 'stack-process',
  entry: 'test/helpers/stack-process.ts',
  out: 'stack-process',
};

let bundled: Promise<string | undefined> | undefined;

/**
 * The stack process's bundle, built once per change of its sources (whichever test process gets
 * there first; the others find it): through tsx, each start spent about 1.4 s of a core loading
 * the stack's modules before it listened, and the crash tests start theirs twice. Undefined when
 * it cannot be built: the stack then runs through tsx, as before.
 */
const stackProcessScript = (): Promise<string | undefined> => {
  bundled ??= currentBuild(REPO_ROOT, STACK_PROCESS).catch(() => undefined);
  return bundled;
};

/**
 * Starts the stack with `handlerEnv` for the handlers (PLANS, limits, ...), `processEnv` over
 * this process's environment for the child (e.g. the log level), and the stack's other plain
 * settings in `stackOptions`.
 */
export const startStackProcess = async (
  handlerEnv: Readonly<Record<string, string>> = {},
  startTimeoutMs = 90_000,
  processEnv: Readonly<Record<string, string>> = {},
  /** A DATA_DIR of the caller's (e.g. to restart on the same data), which `stop` leaves in place. */
  ownDataDir?: string,
  stackOptions: Omit<ChildStackOptions, 'env'> = {},
): Promise<StackProcess> => {
  const serializedOptions = serializeChildStackOptions({ ...stackOptions, env: handlerEnv });
  const dataDir = ownDataDir ?? (await mkdtemp(join(tmpdir(), 'pdf-service-stack-process-')));
  const childEnv: Record<string, string | undefined> = { ...process.env };
  for (const name of Object.keys(childEnv)) {
    if (name.startsWith('VITEST') || name === 'TINYPOOL_WORKER_ID') delete childEnv[name];
  }
  Object.assign(childEnv, processEnv);
  childEnv.STACK_DATA_DIR = dataDir;
  const outputFile = join(dataDir, 'stack-output.log');
  childEnv.STACK_OUTPUT_FILE = outputFile;
  childEnv.STACK_OPTIONS = serializedOptions;
  const script = await stackProcessScript();
  // V8's code for the bundle, kept beside it, as npm start keeps its own (bin/start.mjs).
  if (script) childEnv.NODE_COMPILE_CACHE = join(dirname(script), '.compile-cache');
  const child: ChildProcess = spawn(
    script ? process.execPath : join(REPO_ROOT, 'node_modules', '.bin', 'tsx'),
    [script ?? join(REPO_ROOT, 'test', 'helpers', 'stack-process.ts')],
    { cwd: REPO_ROOT, env: childEnv, detached: true, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const pid = child.pid as number;
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-20_000);
  });
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
  });

  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-pid, signal);
    } catch {
      // already gone
    }
  };
  const stop = async (graceMs = 5_000) => {
    if (!exited) {
      killGroup('SIGTERM');
      await Promise.race([exit, sleep(graceMs)]);
      if (!exited) {
        killGroup('SIGKILL');
        await Promise.race([exit, sleep(5_000)]);
      }
    }
    child.stdin?.destroy();
    if (!ownDataDir) await rm(dataDir, { recursive: true, force: true });
  };

  const description = await new Promise<StackDescription>((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(
      () => reject(new Error(`the stack process did not start within ${startTimeoutMs} ms:\n${stderr}`)),
      startTimeoutMs,
    );
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      buffer = (buffer + chunk).slice(-100_000);
      for (const line of buffer.split('\n')) {
        if (!line.startsWith('{') || !line.includes('"baseUrl"')) continue;
        try {
          clearTimeout(timer);
          resolve(JSON.parse(line));
        } catch {
          // an incomplete line: wait for the rest
        }
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the stack process exited (${code ?? signal}) before starting:\n${stderr}`));
    });
  }).catch(async (e) => {
    await stop(1_000);
    throw e;
  });

  const issuer = await loadOrCreateIssuer(dataDir);
  return {
    ...description,
    pid,
    outputFile,
    sessionToken: (sub = `user-${randomUUID()}`) => issuer.issueToken({ sub, email: `${sub}@example.com` }),
    stderrTail: () => stderr.slice(-4_000),
    stop,
    kill: async () => {
      killGroup('SIGKILL');
      await Promise.race([exit, sleep(5_000)]);
      child.stdin?.destroy();
    },
  };
};
