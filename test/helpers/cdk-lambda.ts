/**
 * Runs the function bundles that `cdk synth` produced the way Lambda does, one process per
 * function: the handler export of the built file in the asset directory, loaded once (init),
 * with only the environment the template gives the function, and its layers' `nodejs/node_modules`
 * on NODE_PATH (Lambda mounts layers at /opt and puts /opt/nodejs/node_modules there). Each
 * process answers Lambda's Invoke API, so the pdf bundle's LambdaClient can reach the renderer
 * bundle through LAMBDA_ENDPOINT.
 *
 * What this catches and unit tests cannot: missing externals, ESM/CJS mix-ups, a layer that does
 * not match the bundle, environment variables the template forgot.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IConstruct } from 'constructs';
import type { Synthesized } from './cdk-synth.js';
import { createSandbox, type Sandbox } from './lambda-sandbox.js';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON
type Json = any;

export interface BundledFunction {
  readonly logicalId: string;
  /** The asset directory that becomes /var/task. */
  readonly codeDir: string;
  /** e.g. `index.handler`. */
  readonly handler: string;
  /** Asset directories of the function's layers (each becomes /opt). */
  readonly layerDirs: readonly string[];
  /** The template's variables: strings, or CloudFormation references to other resources. */
  readonly environment: Readonly<Record<string, unknown>>;
  readonly timeoutSeconds: number;
  readonly memorySizeMiB: number;
  /** The template's runtime, e.g. `nodejs24.x`. */
  readonly runtime: string;
}

const assetDir = (s: Synthesized, resource: Json): string => {
  const path = resource.Metadata?.['aws:asset:path'];
  if (typeof path !== 'string') throw new Error('resource has no aws:asset:path: was the stack bundled?');
  return join(s.assembly.directory, path);
};

/** Where synth put a function's bundle and layers, read from the template. */
export const bundledFunction = (s: Synthesized, fn: IConstruct): BundledFunction => {
  const logicalId = s.logicalId(fn);
  const resources = s.template.toJSON().Resources as Record<string, Json>;
  const resource = resources[logicalId];
  const props = resource.Properties;
  return {
    logicalId,
    codeDir: assetDir(s, resource),
    handler: props.Handler,
    layerDirs: (props.Layers ?? []).map((layer: Json) => assetDir(s, resources[layer.Ref])),
    environment: props.Environment?.Variables ?? {},
    timeoutSeconds: props.Timeout ?? 3,
    memorySizeMiB: props.MemorySize ?? 128,
    runtime: props.Runtime,
  };
};

/**
 * The template's environment with each CloudFormation reference replaced by its local stand-in,
 * found by variable name. A variable the local side cannot stand in for fails loudly.
 */
export const resolveEnvironment = (
  fn: BundledFunction,
  standIns: Readonly<Record<string, string>>,
): Record<string, string> => {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(fn.environment)) {
    if (typeof value === 'string') {
      env[name] = value;
      continue;
    }
    const standIn = standIns[name];
    if (standIn === undefined) {
      throw new Error(
        `${fn.logicalId}: ${name} is ${JSON.stringify(value)} in the template, with no local stand-in`,
      );
    }
    env[name] = standIn;
  }
  return env;
};

/**
 * The API-key secret's local stand-in for a bundled function that reads it (the API functions,
 * the webhook sender, the render worker): its template names a Secrets Manager secret
 * (API_KEY_SECRET_ID, a reference no Secrets Manager here resolves), so the reference stands in
 * as '' and the local stack's own secret is given beside it as API_KEY_SECRET, which a function
 * takes in place of the ID (functions/core/config.ts). `standIns` go to resolveEnvironment,
 * `environment` beside what it resolves.
 */
export const apiKeySecretStandIn = (localEnv: Readonly<Record<string, string | undefined>>) => {
  const secret = localEnv.API_KEY_SECRET;
  if (!secret) throw new Error('the local stack has no API_KEY_SECRET to stand in for the secret');
  return {
    standIns: { API_KEY_SECRET_ID: '' },
    environment: { API_KEY_SECRET: secret },
  } as const;
};

/** The Lambda Node.js runtime, small: init once, then one invocation at a time over Invoke. */
const RUNTIME_SOURCE = String.raw`
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const functionName = process.env.AWS_LAMBDA_FUNCTION_NAME;
const timeoutMs = Number(process.env.SMOKE_TIMEOUT_SECONDS) * 1000;
const MAX_PAYLOAD = 6 * 1024 * 1024;

// Lambda: "<file>.<export>"; index.mjs is an ES module, index.cjs and index.js CommonJS (a bundle
// directory has no package.json saying otherwise).
const [file, exportName] = process.env._HANDLER.split('.');
const load = async () => {
  const base = join(process.env.LAMBDA_TASK_ROOT, file);
  if (existsSync(base + '.mjs')) return (await import(pathToFileURL(base + '.mjs').href))[exportName];
  for (const ext of ['.cjs', '.js']) {
    if (existsSync(base + ext)) return createRequire(base + ext)(base + ext)[exportName];
  }
  throw new Error('Cannot find module ' + base);
};

// Lambda ends the whole sandbox; here the process's descendants (Chromium) go with it.
const killDescendants = () => {
  const parents = new Map();
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync('/proc/' + pid + '/stat', 'utf8');
      parents.set(Number(pid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {}
  }
  const doomed = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parents) {
      if (doomed.has(ppid) && !doomed.has(pid)) { doomed.add(pid); grew = true; }
    }
  }
  doomed.delete(process.pid);
  for (const pid of doomed) { try { process.kill(pid, 'SIGKILL'); } catch {} }
};
process.on('SIGTERM', () => { killDescendants(); process.exit(0); });
process.on('disconnect', () => { killDescendants(); process.exit(0); });

let handler;
try {
  handler = await load();
  if (typeof handler !== 'function') throw new Error(process.env._HANDLER + ' is not a function');
} catch (e) {
  process.send({ initError: { errorType: e?.name ?? 'Error', errorMessage: String(e?.message ?? e), stack: String(e?.stack) } });
  process.exit(1);
}

const send = (res, status, body, headers = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST', ...headers });
  res.end(body);
};

const invoke = async (payload, res) => {
  const deadline = Date.now() + timeoutMs;
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:' + process.env.AWS_REGION + ':000000000000:function:' + functionName,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId: randomUUID(),
    logGroupName: '/aws/lambda/' + functionName,
    logStreamName: '$LATEST/' + randomBytes(16).toString('hex'),
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  let timer;
  // As Lambda writes them to the function's log.
  console.log('START RequestId: ' + context.awsRequestId + ' Version: $LATEST');
  try {
    const event = payload === '' ? {} : JSON.parse(payload);
    const timedOut = new Promise((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error('Task timed out after ' + timeoutMs / 1000 + ' seconds'), { name: 'Sandbox.Timedout' })), timeoutMs);
    });
    const result = await Promise.race([handler(event, context), timedOut]);
    const body = JSON.stringify(result ?? null);
    if (Buffer.byteLength(body) > MAX_PAYLOAD) throw Object.assign(new Error('Response payload size exceeded maximum allowed payload size (6291556 bytes).'), { name: 'Function.ResponseSizeTooLarge' });
    send(res, 200, body);
  } catch (e) {
    const error = { errorType: e?.name ?? 'Error', errorMessage: String(e?.message ?? e), trace: String(e?.stack ?? '').split('\n') };
    send(res, 200, JSON.stringify(error), { 'x-amz-function-error': 'Unhandled' });
  } finally {
    clearTimeout(timer);
    console.log('END RequestId: ' + context.awsRequestId);
  }
};

let queue = Promise.resolve();
const server = createServer((req, res) => {
  const match = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec((req.url ?? '').split('?')[0]);
  if (req.method !== 'POST' || !match) return send(res, 404, JSON.stringify({ message: 'Unknown operation' }));
  if (decodeURIComponent(match[1]) !== functionName) {
    return send(res, 404, JSON.stringify({ Type: 'User', message: 'Function not found: ' + match[1] }), { 'x-amzn-errortype': 'ResourceNotFoundException' });
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const payload = Buffer.concat(chunks);
    if (payload.length > MAX_PAYLOAD) {
      return send(res, 413, JSON.stringify({ Type: 'User', message: 'Request must be smaller than 6291456 bytes for the InvokeFunction operation' }), { 'x-amzn-errortype': 'RequestEntityTooLargeException' });
    }
    queue = queue.then(() => invoke(payload.toString('utf8'), res));
  });
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
`;

export interface InvokeResult {
  readonly payload: Json;
  /** Lambda's X-Amz-Function-Error: the handler threw, timed out or returned too much. */
  readonly functionError: string | undefined;
}

export interface LambdaProcess {
  readonly functionName: string;
  /** The function's process (in a sandbox: the Node.js process inside it). */
  readonly pid: number | undefined;
  /** The sandbox it runs in, when started with `sandbox: true`. */
  readonly sandbox: Sandbox | undefined;
  /** From spawning the process to the handler loaded (Lambda's init phase, plus the sandbox's setup). */
  readonly initMs: number;
  /** For LAMBDA_ENDPOINT: the Invoke API of this function. */
  readonly endpoint: string;
  invoke(event: unknown): Promise<InvokeResult>;
  /** What the function wrote to stdout and stderr (its CloudWatch log, here), with Lambda's START and END lines. */
  logs(): string;
  /** Invocations begun so far (START lines in its log). */
  invocations(): number;
  close(): Promise<void>;
}

export interface StartOptions {
  readonly functionName: string;
  /** The function's own environment (see resolveEnvironment) and what the local side adds. */
  readonly environment: Readonly<Record<string, string>>;
  /** Where the runtime script is written. */
  readonly workDir: string;
  /**
   * Run inside Lambda's execution environment as far as this machine reproduces it
   * (lambda-sandbox.ts: not root, read-only file system but /tmp, no /dev/shm, the memory limit).
   * Needs root. @default false
   */
  readonly sandbox?: boolean;
  /** Another memory size than the template's (the bench tries several). @default the template's */
  readonly memorySizeMiB?: number;
  /** Another directory as the layer (the bench tries other layouts). @default the template's one layer */
  readonly layerDir?: string;
}

/**
 * Without the sandbox the layer is not mounted at /opt: a variable that names a file in /opt (the
 * renderer's FONTCONFIG_FILE) is pointed at the same file in the layer's directory.
 */
const atLayerDir = (
  environment: Readonly<Record<string, string>>,
  layerDirs: readonly string[],
): Record<string, string> =>
  Object.fromEntries(
    Object.entries(environment).map(([name, value]) => {
      if (!value.startsWith('/opt/')) return [name, value];
      if (layerDirs.length !== 1) throw new Error(`${name} names a file in /opt, and there is no one layer`);
      return [name, join(layerDirs[0] as string, value.slice('/opt/'.length))];
    }),
  );

/**
 * Writes the runtime script once per directory, named by its content and put in place by a
 * rename. Functions start in parallel in one directory: rewriting one shared file in place let a
 * process start on the truncated (empty) file, which runs nothing and exits 0 "during init".
 */
const writeRuntime = (workDir: string): string => {
  const digest = createHash('sha256').update(RUNTIME_SOURCE).digest('hex').slice(0, 16);
  const runtime = join(workDir, `lambda-runtime-${digest}.mjs`);
  if (!existsSync(runtime)) {
    const partial = `${runtime}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(partial, RUNTIME_SOURCE);
    renameSync(partial, runtime);
  }
  return runtime;
};

/** Starts one function's bundle in its own process and waits for its init to finish. */
export const startLambdaProcess = async (
  fn: BundledFunction,
  options: StartOptions,
): Promise<LambdaProcess> => {
  const memorySizeMiB = options.memorySizeMiB ?? fn.memorySizeMiB;
  const layerDirs = options.layerDir === undefined ? fn.layerDirs : [options.layerDir];
  // What Lambda sets, then the function's environment. Nothing else of this process leaks in.
  const lambdaVariables = {
    LANG: 'en_US.UTF-8',
    TZ: 'UTC',
    _HANDLER: fn.handler,
    AWS_LAMBDA_FUNCTION_NAME: options.functionName,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memorySizeMiB),
    SMOKE_TIMEOUT_SECONDS: String(fn.timeoutSeconds),
  };
  let child: ChildProcess;
  let sandbox: Sandbox | undefined;
  const spawned = performance.now();
  if (options.sandbox) {
    if (layerDirs.length > 1)
      throw new Error(`${options.functionName}: the sandbox mounts one layer at /opt`);
    const runtimeDir = join(options.workDir, `runtime-${options.functionName}`);
    mkdirSync(runtimeDir, { recursive: true });
    writeFileSync(join(runtimeDir, 'lambda-runtime.mjs'), RUNTIME_SOURCE);
    sandbox = await createSandbox(
      { codeDir: fn.codeDir, layerDir: layerDirs[0], runtimeDir },
      { memoryMiB: memorySizeMiB, runtime: fn.runtime },
    );
    const { file, args } = sandbox.command(sandbox.node, ['/var/runtime/lambda-runtime.mjs']);
    child = spawn(file, args, {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: { ...sandbox.environment, ...lambdaVariables, ...options.environment },
    });
  } else {
    const runtime = writeRuntime(options.workDir);
    child = spawn(process.execPath, [runtime], {
      cwd: fn.codeDir,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: {
        PATH: process.env.PATH,
        LAMBDA_TASK_ROOT: fn.codeDir,
        NODE_PATH: layerDirs.map((dir) => join(dir, 'nodejs', 'node_modules')).join(':'),
        ...lambdaVariables,
        ...atLayerDir(options.environment, layerDirs),
      },
    });
  }
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-1024 * 1024);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      child.on('message', (m: Json) => {
        if (m.port) resolve(m.port);
        if (m.initError) reject(new Error(`${options.functionName} failed its init: ${m.initError.stack}`));
      });
      child.once('exit', (code) =>
        reject(new Error(`${options.functionName} exited (${code}) during init:\n${output}`)),
      );
    });
  } catch (e) {
    child.kill('SIGKILL');
    await sandbox?.dispose();
    throw e;
  }
  const initMs = performance.now() - spawned;
  const endpoint = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  return {
    functionName: options.functionName,
    pid: child.pid,
    sandbox,
    initMs,
    endpoint,
    async invoke(event) {
      const res = await fetch(`${endpoint}/2015-03-31/functions/${options.functionName}/invocations`, {
        method: 'POST',
        body: JSON.stringify(event),
      });
      if (res.status !== 200)
        throw new Error(`Invoke ${options.functionName}: ${res.status} ${await res.text()}`);
      return {
        payload: await res.json(),
        functionError: res.headers.get('x-amz-function-error') ?? undefined,
      };
    },
    logs: () => output,
    invocations: () => output.match(/^START RequestId: /gm)?.length ?? 0,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      await sandbox?.dispose();
    },
  };
};
