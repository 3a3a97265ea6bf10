/**
 * The service end to end: `bin/local.ts` (the local stack: API Gateway emulation, handlers,
 * dynalite, s3rver, in-process renderer) in its own process on a fresh DATA_DIR and a free port,
 * started as `npm start` starts it (bin/start.mjs, from its bundle), with test/bench/probe.ts
 * preloaded for per-request timings, driven over HTTP.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { loadOrCreateIssuer } from '../../lib/local/issuer.js';
import { currentBuild } from '../../lib/local/start-bundle.mjs';

export const ROOT = new URL('../..', import.meta.url).pathname;

/** Plenty of quota and rate so that the benchmark measures rendering, not 429s. */
const BENCH_PLANS = JSON.stringify({
  free: { monthlyRenders: 1_000_000_000, rendersPerMinute: 1_000_000_000 },
});

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/**
 * The probe as JavaScript, so that the service process runs no TypeScript loader, as `npm start`'s
 * does not; and the start bundle built ahead, so that a cold start is not a build's.
 */
const prepare = async (): Promise<string> => {
  const probe = join(ROOT, 'node_modules', '.cache', 'pdf-render-service', 'bench-probe.mjs');
  await build({
    entryPoints: [join(ROOT, 'test', 'bench', 'probe.ts')],
    outfile: probe,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    logLevel: 'error',
  });
  await currentBuild();
  return probe;
};

export interface ProbeTrace {
  readonly ms: number;
  readonly status: number;
  readonly calls: readonly { kind: 'dynamodb' | 's3'; op: string; at: number; ms: number }[];
}

export interface RenderAnswer {
  readonly status: number;
  readonly ms: number;
  readonly pageCount?: number;
  readonly renderDurationMs?: number;
  readonly code?: string;
}

export interface ServiceProcess {
  readonly pid: number;
  readonly baseUrl: string;
  /** The bench user's session token, for requests of its own. */
  readonly token: string;
  /**
   * Spawn → first TCP connection accepted, and spawn → first 201 with a PDF; `built`: the process
   * built its bundle first (a source changed after this process prepared it), so it was no cold start.
   */
  readonly coldStart: { readonly listeningMs: number; readonly firstPdfMs: number; readonly built: boolean };
  /** POST /v1/pdf with `body` (and `headers`, e.g. an Idempotency-Key). */
  render(body: unknown, headers?: Readonly<Record<string, string>>): Promise<RenderAnswer>;
  traces(): Promise<ProbeTrace[]>;
  stop(): Promise<void>;
}

export const startService = async (firstBody: unknown, spare: boolean): Promise<ServiceProcess> => {
  const dataDir = await mkdtemp(join(tmpdir(), 'pdf-bench-'));
  const issuer = await loadOrCreateIssuer(dataDir);
  const token = await issuer.issueToken({
    sub: 'bench-user',
    email: 'bench@example.com',
    ttlSeconds: 4 * 3600,
  });
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const stderr: string[] = [];
  const probe = await prepare();

  const started = performance.now();
  const child: ChildProcess = spawn(
    process.execPath,
    ['--require', './bin/require-node.cjs', '--import', probe, 'bin/start.mjs'],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        DATA_DIR: dataDir,
        PLANS: BENCH_PLANS,
        POWERTOOLS_LOG_LEVEL: 'ERROR',
        // The renderer's spare session, as the renderer Lambda's handler turns it on (lib/local/options.ts).
        RENDERER_SPARE_SESSIONS: spare ? '1' : '0',
      },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    },
  );
  let built = false;
  child.stderr?.on('data', (chunk: Buffer) => {
    if (chunk.toString().includes('local stack: building')) built = true;
    stderr.push(chunk.toString());
    if (stderr.length > 50) stderr.shift();
  });
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });

  const render = async (
    body: unknown,
    headers: Readonly<Record<string, string>> = {},
  ): Promise<RenderAnswer> => {
    const t = performance.now();
    const res = await fetch(`${baseUrl}/v1/pdf`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as {
      page_count?: number;
      render_duration_ms?: number;
      error?: { code: string };
    };
    return {
      status: res.status,
      ms: performance.now() - t,
      pageCount: json.page_count,
      renderDurationMs: json.render_duration_ms,
      code: json.error?.code,
    };
  };

  // The stack binds its port first and holds requests until it is ready: keep trying to connect.
  let listeningMs = Number.NaN;
  let first: RenderAnswer | undefined;
  while (!first) {
    if (exited) throw new Error(`the service exited during start:\n${stderr.join('')}`);
    if (performance.now() - started > 60_000) throw new Error('the service did not answer within 60 s');
    try {
      const t = performance.now();
      first = await render(firstBody);
      listeningMs = t - started;
    } catch {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  const firstPdfMs = performance.now() - started;
  if (first.status !== 201) throw new Error(`the first render answered ${first.status} ${first.code ?? ''}`);

  const traces = (): Promise<ProbeTrace[]> =>
    new Promise((resolve) => {
      const onMessage = (m: { type?: string; traces?: ProbeTrace[] }) => {
        if (m?.type !== 'probe:traces') return;
        child.off('message', onMessage);
        resolve(m.traces ?? []);
      };
      child.on('message', onMessage);
      child.send({ type: 'probe:take' });
    });

  return {
    pid: child.pid as number,
    baseUrl,
    token,
    coldStart: {
      listeningMs: Math.round(listeningMs),
      firstPdfMs: Math.round(firstPdfMs),
      built,
    },
    render,
    traces,
    async stop() {
      if (!exited) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await gone;
        clearTimeout(timer);
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
};

/** `total` requests from `concurrency` workers; latencies and wall time. */
export const load = async (
  service: ServiceProcess,
  body: unknown,
  total: number,
  concurrency: number,
  onDone: (done: number) => void,
): Promise<{ answers: RenderAnswer[]; wallMs: number }> => {
  const answers: RenderAnswer[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < total) {
      next++;
      answers.push(await service.render(body));
      onDone(answers.length);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { answers, wallMs: performance.now() - started };
};
