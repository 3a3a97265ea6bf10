/**
 * Integration tests run against the real local stack: the run's shared one (shared-stack.ts),
 * or one of the file's own when it needs other settings (in a child process when they are plain
 * data, else in the test's process), on a temporary DATA_DIR and a random port, quiet.
 *
 *   const local = useLocalStack();
 *   it('renders', async () => {
 *     const token = await local.sessionToken();
 *     const res = await local.api('/v1/pdf', { method: 'POST', token, body: { html: '<p>hi</p>' } });
 *     expect(res.status).toBe(201);
 *   });
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, inject } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../lib/local/credentials.js';
import { loadOrCreateIssuer } from '../../lib/local/issuer.js';
import type { LocalStack, LocalStackOptions } from '../../lib/local/stack.js';
import { startStackProcess } from './child-stack.js';
import {
  type ChildOnlyStackOptions,
  type ChildStackOptions,
  childStackTakes,
  localStackOptionsOf,
} from './child-stack-options.js';
import { type CapturedOutput, captureFileOutput, captureOutput } from './process-output.js';
import { probeBuiltInPrototypes, type ThreadPrototypes } from './prototype-probe.js';
import { SHARED_STACK_ENV, type SharedPlan, type SharedStackDescription } from './shared-stack.js';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by assertions, not by types
export type Json = any;

export interface ApiOptions {
  /** @default 'GET' */
  readonly method?: string;
  /** Sent as `Authorization: Bearer <token>` (a session token or an API key). */
  readonly token?: string;
  /** An object is sent as JSON; a string or bytes as they are (set Content-Type in `headers`). */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface ApiResponse {
  readonly status: number;
  readonly headers: Headers;
  /** The parsed body when it is JSON, else undefined. */
  readonly json: Json;
  readonly text: string;
}

export type Api = (path: string, options?: ApiOptions) => Promise<ApiResponse>;

export const createApi =
  (baseUrl: string): Api =>
  async (path, { method = 'GET', token, body, headers = {} } = {}) => {
    const h: Record<string, string> = { ...headers };
    if (token !== undefined) h.authorization = `Bearer ${token}`;
    let payload: string | Uint8Array | undefined;
    if (typeof body === 'string' || body instanceof Uint8Array) {
      payload = body;
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      if (!Object.keys(h).some((k) => k.toLowerCase() === 'content-type'))
        h['content-type'] = 'application/json';
    }
    const res = await fetch(`${baseUrl}${path}`, { method, headers: h, body: payload });
    const text = await res.text();
    let json: Json;
    if (/json/.test(res.headers.get('content-type') ?? '') && text !== '') json = JSON.parse(text);
    return { status: res.status, headers: res.headers, json, text };
  };

export const createTempDataDir = (): Promise<string> => mkdtemp(join(tmpdir(), 'pdf-service-test-'));

/** SDK clients pointed at the stack's emulators, for arranging or inspecting state directly. */
export const dynamoDbClient = (stack: LocalStack): DynamoDBClient =>
  new DynamoDBClient({
    region: stack.region,
    endpoint: stack.dynamoDbEndpoint,
    credentials: LOCAL_CREDENTIALS,
  });

export const s3Client = (stack: LocalStack): S3Client =>
  new S3Client({
    region: stack.region,
    endpoint: stack.s3Endpoint,
    forcePathStyle: true,
    credentials: LOCAL_CREDENTIALS,
  });

/**
 * Puts the account `sub` on `plan` directly in the table (before its first request, or to change
 * it); with `onlyIfNew`, leaves an account that already exists as it is.
 */
export const putAccountOnPlan = async (
  target: { readonly dynamoDbEndpoint: string; readonly tableName: string; readonly region: string },
  sub: string,
  plan: string,
  { onlyIfNew = false }: { readonly onlyIfNew?: boolean } = {},
): Promise<void> => {
  const client = new DynamoDBClient({
    region: target.region,
    endpoint: target.dynamoDbEndpoint,
    credentials: LOCAL_CREDENTIALS,
  });
  try {
    await DynamoDBDocumentClient.from(client).send(
      new PutCommand({
        TableName: target.tableName,
        Item: {
          PK: `ACCOUNT#${sub}`,
          SK: 'ACCOUNT',
          type: 'account',
          id: sub,
          email: null,
          plan,
          created_at: new Date().toISOString(),
        },
        ...(onlyIfNew ? { ConditionExpression: 'attribute_not_exists(PK)' } : {}),
      }),
    );
  } catch (error) {
    if (!(onlyIfNew && error instanceof ConditionalCheckFailedException)) throw error;
  } finally {
    client.destroy();
  }
};

export interface TestStack {
  readonly stack: LocalStack;
  readonly api: Api;
  /** A session token for a new account each call, unless `sub` is given. */
  sessionToken(sub?: string, options?: { email?: string; ttlSeconds?: number }): Promise<string>;
  /** A session token for a new account already on `plan`. */
  accountOn(plan: string): Promise<string>;
  /**
   * What the stack's handlers log from now on (stdout and stderr): this process's output for a
   * stack in this process, the stack process's output file for a stack in a child process; the
   * shared stack's holds every file's lines (assert on what never appears, or on your own
   * accounts' lines).
   */
  captureOutput(): CapturedOutput;
  /**
   * What changed on the built-in prototypes in the threads where the stack runs templates: the
   * stack's main thread and its workers (prototype-probe.ts), in its process, wherever that is.
   */
  builtInPrototypes(): Promise<ThreadPrototypes[]>;
}

export type TestStackOptions = Omit<LocalStackOptions, 'port' | 'quiet'>;

/**
 * A TestStack's helpers around a running stack; new accounts start on `plan` when given. The
 * stack's output goes to `outputFile` when it runs in a process of its own, else to this process's.
 */
const testStackOf = (
  stack: LocalStack,
  plan?: string,
  outputFile?: string,
  /** The stack process's prototype probe; none for a stack in this process, probed here. */
  prototypeProbeUrl?: string,
): TestStack => {
  const sessionToken: TestStack['sessionToken'] = async (
    sub = `user-${randomUUID()}`,
    { email = `${sub}@example.com`, ttlSeconds } = {},
  ) => {
    if (plan !== undefined) await putAccountOnPlan(stack, sub, plan, { onlyIfNew: true });
    return stack.issueToken({ sub, email, ttlSeconds });
  };
  return {
    stack,
    api: createApi(stack.baseUrl),
    sessionToken,
    async accountOn(plan) {
      const sub = `acct-${plan}-${randomUUID()}`;
      await putAccountOnPlan(stack, sub, plan);
      return sessionToken(sub);
    },
    captureOutput: () => (outputFile === undefined ? captureOutput() : captureFileOutput(outputFile)),
    async builtInPrototypes() {
      if (prototypeProbeUrl === undefined) return probeBuiltInPrototypes();
      const res = await fetch(prototypeProbeUrl);
      if (!res.ok) throw new Error(`the stack process's prototype probe: ${res.status} ${await res.text()}`);
      return (await res.json()) as ThreadPrototypes[];
    },
  };
};

/** Starts a quiet stack on a random port; on a fresh temporary DATA_DIR unless one is given. */
export const startTestStack = async (options: TestStackOptions = {}): Promise<TestStack> => {
  const dataDir = options.dataDir ?? (await createTempDataDir());
  // Loaded only here: a file whose stack is elsewhere (the shared one, a child's) needs none of it.
  const { startLocalStack } = await import('../../lib/local/stack.js');
  return testStackOf(await startLocalStack({ ...options, dataDir, port: 0, quiet: true }));
};

/**
 * The shared stack of the calling worker (by VITEST_POOL_ID, so that the files of one worker use
 * one stack and the workers spread over all of them), or undefined when the run has none.
 */
export const sharedStackOfThisWorker = (): SharedStackDescription | undefined => {
  const stacks = inject('sharedStacks');
  if (!stacks || stacks.length === 0) return undefined;
  const worker = Number(process.env.VITEST_POOL_ID ?? '1');
  return stacks[(Number.isInteger(worker) && worker > 0 ? worker - 1 : 0) % stacks.length];
};

/**
 * The run's shared stack (started by shared-stack.ts in a process of its own), or undefined when
 * this run has none. Its tokens are signed here with the key in its DATA_DIR.
 */
const sharedTestStack = async (plan?: string): Promise<TestStack | undefined> => {
  const description = sharedStackOfThisWorker();
  if (!description) return undefined;
  const { outputFile, canary: _canary, prototypeProbeUrl, ...stack } = description;
  const issuer = await loadOrCreateIssuer(stack.dataDir);
  return testStackOf(
    {
      ...stack,
      issueToken: (o) => issuer.issueToken(o),
      close: () =>
        Promise.reject(new Error('the shared stack is closed by the global teardown, not by a test')),
    },
    plan,
    outputFile,
    prototypeProbeUrl,
  );
};

export interface UseLocalStackOptions extends TestStackOptions, ChildOnlyStackOptions {
  /**
   * A stack of the file's own although it needs no special settings: for tests that page through
   * every account's data, or whose stack nothing else may share.
   */
  readonly ownStack?: boolean;
  /**
   * The file's own stack in this process, though its settings would let it run in a child: for
   * tests that read the handlers' log lines from this process's output, or that raise the
   * handlers' log level in this process before their modules load.
   */
  readonly inProcess?: boolean;
  /**
   * The plan the file's new accounts start on (sessionToken() puts a new account on it before
   * its first request): one of the shared stack's plans, so a file that needs more (or fewer)
   * renders than `free` allows still shares the run's stack. Not with other settings.
   * @default 'free', as deployed
   */
  readonly plan?: SharedPlan;
}

/**
 * A stack of the file's own in a child process (child-stack.ts), from the bundle: starting one
 * costs about a quarter of the CPU of the same stack loaded into this process through vite's
 * module loader, and leaves the test process nothing of the stack's, so the file can run in a
 * worker with other files. Its tokens are signed here with the key in its DATA_DIR.
 */
const childTestStack = async (options: ChildStackOptions, plan?: string): Promise<TestStack> => {
  const { env = {}, ...rest } = options;
  const child = await startStackProcess(env, 120_000, {}, undefined, rest);
  const {
    pid: _pid,
    sessionToken: _token,
    stderrTail: _tail,
    stop,
    kill: _kill,
    outputFile,
    prototypeProbeUrl,
    ...stack
  } = child;
  const issuer = await loadOrCreateIssuer(stack.dataDir);
  return testStackOf(
    { ...stack, issueToken: (o) => issuer.issueToken(o), close: () => stop() },
    plan,
    outputFile,
    prototypeProbeUrl,
  );
};

/**
 * The stack for the calling test file. Without options (or with only `plan`), the run's shared
 * stack (every file makes its own accounts, so files do not see each other's data). With
 * settings, or `ownStack`, one of the file's own, started in beforeAll and closed (its temporary
 * DATA_DIR removed) in afterAll: in a child process when every setting is plain data
 * (CHILD_STACK_OPTIONS: env, CORS origins, ...), else (a renderer, a lookup function, or
 * `inProcess`) in this process, which such a file then needs to itself (vitest.config.ts's
 * OWN_PROCESS). Read its members inside tests or hooks, not at the top level.
 */
export const useLocalStack = ({
  ownStack = false,
  inProcess = false,
  plan,
  ...options
}: UseLocalStackOptions = {}): TestStack => {
  const shares = !ownStack && !inProcess && Object.keys(options).length === 0;
  if (plan !== undefined && !shares)
    throw new Error('plan is for the shared stack: set PLANS in env instead');
  const inChild = !inProcess && childStackTakes(options);
  let current: TestStack | undefined;
  let owned = false;
  let tempDir: string | undefined;
  beforeAll(async () => {
    if (shares) current = await sharedTestStack(plan);
    if (current) return;
    // Without a shared stack (a run outside the integration project), one like it. The options
    // are read now, not when the file called: a reachable host's env is filled in its beforeAll.
    const env = plan === undefined ? options.env : { ...SHARED_STACK_ENV, ...options.env };
    owned = true;
    if (inChild) {
      current = await childTestStack({ ...(options as ChildStackOptions), env }, plan);
      return;
    }
    if (!options.dataDir) tempDir = await createTempDataDir();
    const { webhookHosts, ...inProcessOptions } = options;
    const own = await startTestStack({
      ...inProcessOptions,
      ...localStackOptionsOf({ webhookHosts }),
      env,
      dataDir: options.dataDir ?? tempDir,
    });
    current = plan === undefined ? own : testStackOf(own.stack, plan);
  });
  afterAll(async () => {
    if (owned) await current?.stack.close();
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
  });
  const started = (): TestStack => {
    if (!current) throw new Error('the local stack is not started yet: use it inside tests or hooks');
    return current;
  };
  return {
    get stack() {
      return started().stack;
    },
    get api() {
      return started().api;
    },
    sessionToken: (...args) => started().sessionToken(...args),
    accountOn: (plan) => started().accountOn(plan),
    captureOutput: () => started().captureOutput(),
    builtInPrototypes: () => started().builtInPrototypes(),
  };
};
