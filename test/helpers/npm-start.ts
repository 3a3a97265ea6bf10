/**
 * `npm start` as a user runs it, in a child process group of its own (as a terminal would: Ctrl-C
 * is SIGINT to the whole group), for tests that signal, stop or starve the local stack.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadOrCreateIssuer } from '../../lib/local/issuer.js';
import { sleep } from './template-abuse.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface NpmStart {
  readonly baseUrl: string;
  readonly dataDir: string;
  /** npm's pid, also the process group's id. */
  readonly pid: number;
  /** Resolves with npm's exit code (or signal) and when it exited (performance.now()). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  sessionToken(sub?: string): Promise<string>;
  output(): string;
  /** The whole group: SIGKILL; then DATA_DIR is removed unless `keepDataDir`. */
  kill(): Promise<void>;
}

export interface NpmStartOptions {
  /** @default a new temporary directory, removed by kill() */
  readonly dataDir?: string;
  readonly env?: Readonly<Record<string, string>>;
  /** @default 120000 */
  readonly startTimeoutMs?: number;
}

export const npmStart = async (options: NpmStartOptions = {}): Promise<NpmStart> => {
  const ownDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'pdf-service-npm-start-')));
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name.startsWith('VITEST') || name.startsWith('npm_') || name === 'TINYPOOL_WORKER_ID')
      delete env[name];
  }
  Object.assign(env, { PORT: '0', DATA_DIR: dataDir, POWERTOOLS_DEV: 'false' }, options.env);
  const child: ChildProcess = spawn('npm', ['start', '--silent'], {
    cwd: REPO_ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid as number;
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-50_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: performance.now() })),
  );
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const kill = async () => {
    if (!gone) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await Promise.race([exited, sleep(5_000)]);
    }
    if (ownDataDir) await rm(dataDir, { recursive: true, force: true }).catch(() => {});
  };

  const timeoutMs = options.startTimeoutMs ?? 120_000;
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const found = /listening on (http:\/\/\S+) /.exec(output);
      if (found) {
        clearInterval(timer);
        resolve(found[1] as string);
      }
    }, 50);
    void exited.then(({ code, signal }) => {
      clearInterval(timer);
      reject(new Error(`npm start exited (${code ?? signal}) before listening:\n${output}`));
    });
    setTimeout(() => {
      clearInterval(timer);
      reject(new Error(`npm start did not listen within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs).unref();
  }).catch(async (e) => {
    await kill();
    throw e;
  });

  const issuer = await loadOrCreateIssuer(dataDir);
  return {
    baseUrl,
    dataDir,
    pid,
    exited,
    sessionToken: (sub = `user-${randomUUID()}`) => issuer.issueToken({ sub, email: `${sub}@example.com` }),
    output: () => output,
    kill,
  };
};

/** SIGSTOP or SIGCONT (or any signal) to the whole group: npm, node and Chromium alike. */
export const signalGroup = (pid: number, signal: NodeJS.Signals): void => {
  process.kill(-pid, signal);
};
