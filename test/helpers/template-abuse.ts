/**
 * Helpers for the tests that attack templating over HTTP (template-injection, template-bombs):
 *
 * - timedApi: like createApi, but every request has a deadline (AbortSignal.timeout), and a
 *   request that gets no answer (timeout, refused connection) resolves with status 0 instead of
 *   throwing, so a hung or crashed stack is reported as a failed assertion, not a hung test;
 * - pdfText: download a job's PDF (with a deadline) and read its text;
 * - startStackProcess: the local stack in a child process (test/helpers/stack-process.ts), for
 *   requests that may block the event loop serving them: the test process keeps its timers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadOrCreateIssuer } from '../../lib/local/issuer.js';
import type { Json } from './local-stack.js';
import { readPdf } from './pdf.js';

export interface TimedOptions {
  /** @default 'GET' */
  readonly method?: string;
  readonly token?: string;
  /** An object is sent as JSON; a string as it is, with Content-Type application/json. */
  readonly body?: unknown;
  /** @default 20000 */
  readonly timeoutMs?: number;
}

export interface TimedResponse {
  /** 0 when no answer arrived (deadline passed, connection refused or reset). */
  readonly status: number;
  readonly headers: Headers | undefined;
  /** The parsed body when it is JSON, else undefined. */
  readonly json: Json;
  readonly text: string;
  /** Milliseconds from sending to the whole body read (or to giving up). */
  readonly ms: number;
  readonly timedOut: boolean;
}

export type TimedApi = (path: string, options?: TimedOptions) => Promise<TimedResponse>;

export const timedApi =
  (baseUrl: string): TimedApi =>
  async (path, { method = 'GET', token, body, timeoutMs = 20_000 } = {}) => {
    const headers: Record<string, string> = {};
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    const started = performance.now();
    try {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers,
        body: payload,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.text();
      let json: Json;
      if (/json/.test(res.headers.get('content-type') ?? '') && text !== '') {
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
      }
      return {
        status: res.status,
        headers: res.headers,
        json,
        text,
        ms: performance.now() - started,
        timedOut: false,
      };
    } catch (e) {
      const timedOut = (e as Error).name === 'TimeoutError' || (e as Error).name === 'AbortError';
      return {
        status: 0,
        headers: undefined,
        json: undefined,
        text: timedOut
          ? `no answer within ${timeoutMs} ms`
          : `no answer: ${(e as Error).message} ${String((e as { cause?: unknown }).cause ?? '')}`,
        ms: performance.now() - started,
        timedOut,
      };
    }
  };

/** The text of the PDF behind a presigned download link. */
export const pdfText = async (downloadUrl: string, timeoutMs = 20_000): Promise<string> => {
  const res = await fetch(downloadUrl, { signal: AbortSignal.timeout(timeoutMs) });
  if (res.status !== 200) throw new Error(`download answered ${res.status}`);
  return (await readPdf(new Uint8Array(await res.arrayBuffer()))).text;
};

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface StackProcess {
  readonly baseUrl: string;
  readonly dynamoDbEndpoint: string;
  readonly tableName: string;
  readonly region: string;
  readonly dataDir: string;
  readonly pid: number;
  /** A session token for `sub` (a new account each call unless given). */
  sessionToken(sub?: string): Promise<string>;
  /** The last lines the stack wrote to stderr, for failure messages. */
  stderrTail(): string;
  /** SIGTERM to the stack's process group, SIGKILL after `graceMs`; removes its DATA_DIR. */
  stop(graceMs?: number): Promise<void>;
}

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Starts the local stack in a child process (as `npm start` runs it: tsx), in its own process
 * group, on a fresh temporary DATA_DIR, with `handlerEnv` for the handlers (PLANS, limits, ...).
 */
export const startStackProcess = async (
  handlerEnv: Readonly<Record<string, string>> = {},
  startTimeoutMs = 90_000,
): Promise<StackProcess> => {
  const dataDir = await mkdtemp(join(tmpdir(), 'pdf-service-stack-process-'));
  const childEnv: Record<string, string | undefined> = { ...process.env };
  for (const name of Object.keys(childEnv)) {
    if (name.startsWith('VITEST') || name === 'TINYPOOL_WORKER_ID') delete childEnv[name];
  }
  childEnv.STACK_DATA_DIR = dataDir;
  childEnv.STACK_HANDLER_ENV = JSON.stringify(handlerEnv);
  const child: ChildProcess = spawn(
    join(REPO_ROOT, 'node_modules', '.bin', 'tsx'),
    [join(REPO_ROOT, 'test', 'helpers', 'stack-process.ts')],
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
    await rm(dataDir, { recursive: true, force: true });
  };

  const info = await new Promise<{
    baseUrl: string;
    dynamoDbEndpoint: string;
    tableName: string;
    region: string;
  }>((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(
      () => reject(new Error(`the stack process did not start within ${startTimeoutMs} ms:\n${stderr}`)),
      startTimeoutMs,
    );
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      buffer = (buffer + chunk).slice(-100_000);
      for (const line of buffer.split('\n')) {
        if (!line.startsWith('{"baseUrl"')) continue;
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
    ...info,
    dataDir,
    pid,
    sessionToken: (sub = `user-${randomUUID()}`) => issuer.issueToken({ sub, email: `${sub}@example.com` }),
    stderrTail: () => stderr.slice(-4_000),
    stop,
  };
};
