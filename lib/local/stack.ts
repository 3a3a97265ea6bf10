/**
 * The whole service on one machine: dynalite for DynamoDB, s3rver for S3, the local token
 * issuer for Cognito, the in-process renderer for the renderer Lambda, and the local API Gateway
 * in front of the same handlers the cloud runs. Data lives under DATA_DIR and survives restarts.
 *
 * Each resource's handler is made by its `createHandler(environment, parts)` with this stack's
 * configuration (endpoints, table, bucket, issuer, settings) and the in-process renderer handed
 * in, as a Lambda's is made from its environment at cold start; process.env is left alone.
 * Each stack has a renderer of its own (its browser, egress proxy and templating workers), so
 * several stacks, each with its own DATA_DIR, can run in one process.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import { readRendererConfig } from '../../functions/core/config.js';
import type { Renderer } from '../../functions/renderer/contract.js';
import { createInProcessRenderer } from '../../functions/renderer/in-process.js';
import { apiResources, FALLBACK_RESOURCE } from '../../functions/routes.js';
import { corsPolicy } from '../cors.js';
import { localFontconfigFile } from '../layer-fonts.js';
import {
  createLocalDashboard,
  LOCAL_DASHBOARD_CLIENT_ID,
  LOCAL_DASHBOARD_PATH,
  type LocalDashboardParts,
} from './dashboard.js';
import {
  closeServer,
  createLocalHttpServer,
  type HandlerLoader,
  type LambdaHandler,
  listen,
} from './http-server.js';
import {
  type IssueTokenOptions,
  LOCAL_CLIENT_ID,
  LOCAL_REGION,
  LOCAL_USER_POOL_ID,
  loadOrCreateIssuer,
} from './issuer.js';
import { DEFAULT_DATA_DIR, readServiceEnvironment } from './options.js';
import { ensureTable } from './table.js';

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The HMAC key for API key digests (Secrets Manager in the cloud): made once, kept in DATA_DIR,
 * so that keys stay valid across restarts.
 */
const loadOrCreateApiKeySecret = async (dataDir: string): Promise<string> => {
  const file = join(dataDir, 'api-key-secret');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const secret = randomBytes(32).toString('hex');
  await writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'wx' }).catch(
    async (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    },
  );
  return (await readFile(file, 'utf8')).trim();
};

/**
 * Where a running stack says how to reach its table (dynalite listens on a random port), so that
 * tools such as the admin command (lib/admin.ts) can work on the same data while it runs.
 */
export const RUNNING_STACK_FILE = 'local-stack.json';

export interface RunningStack {
  readonly pid: number;
  readonly dynamoDbEndpoint: string;
  readonly tableName: string;
  readonly region: string;
}

const writeRunningStack = (dataDir: string, stack: Omit<RunningStack, 'pid'>): Promise<void> =>
  writeFile(join(dataDir, RUNNING_STACK_FILE), `${JSON.stringify({ pid: process.pid, ...stack })}\n`, {
    mode: 0o600,
  });

/** s3rver's bucket CORS: GET from the dashboard's origins (the cloud's PDF bucket has the same rule). */
const pdfBucketCors = (origins: readonly string[]): string =>
  `<CORSConfiguration>${origins
    .map(
      (o) =>
        `<CORSRule><AllowedOrigin>${o}</AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>600</MaxAgeSeconds></CORSRule>`,
    )
    .join('')}</CORSConfiguration>`;

export const LOCAL_TABLE_NAME = 'pdf-service-local';
export const LOCAL_BUCKET_NAME = 'pdf-service-local';
/**
 * Dummy credentials: the SDK insists on signing. Neither emulator checks SigV4 signatures, but
 * s3rver knows exactly one access key id, `S3RVER`.
 */
export const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

export interface LocalStackOptions {
  /** 0 picks a free port. @default 0 */
  readonly port?: number;
  /** @default '127.0.0.1' (the stack has no authentication of its own beyond tokens: never expose it) */
  readonly host?: '127.0.0.1';
  /** Where DynamoDB items, S3 objects and the signing key live. @default `.data/` */
  readonly dataDir?: string;
  /**
   * Settings for the handlers and the renderer (PLANS, RENDER_BUDGET_MS, limits, PDF_TAGGED, ...),
   * as environment variables, over those of this process's environment.
   */
  readonly env?: Readonly<Record<string, string>>;
  /** No request log lines and no notices. */
  readonly quiet?: boolean;
  /** Tests only: the renderer to use instead of the in-process Chromium one, e.g. to inject a fault. */
  readonly renderer?: Renderer;
  /** Origins browsers may call the API from (CORS, as the cloud's corsAllowedOrigins). @default none */
  readonly corsAllowedOrigins?: readonly string[];
  /** Tests only: the lifetime of the dashboard's local sign-in tokens. @default 3600 s */
  readonly dashboardSessionTtlSeconds?: number;
  /**
   * Open each render's page ahead of it, as the renderer Lambda does (functions/renderer/browser.ts).
   * @default 0: tests fault and inspect pages opened at render time
   */
  readonly rendererSpareSessions?: 0 | 1;
}

export interface LocalStack {
  /** e.g. `http://127.0.0.1:3000`, no trailing slash. */
  readonly baseUrl: string;
  /** The dashboard, served beside the API with its local sign-in: `<baseUrl>/dashboard/`. */
  readonly dashboardUrl: string;
  readonly s3Endpoint: string;
  readonly dynamoDbEndpoint: string;
  readonly dataDir: string;
  readonly tableName: string;
  readonly bucketName: string;
  readonly region: string;
  /** The JWKS the API verifies session tokens against (LOCAL_JWKS_FILE). */
  readonly jwksFile: string;
  /** The environment the handlers were made with (as a Lambda's environment would be). */
  readonly handlerEnv: Readonly<Record<string, string>>;
  /** A Cognito-style ID token for the local user pool. */
  issueToken(options: IssueTokenOptions): Promise<string>;
  /** Stops the server, the renderer's browser and the emulators. Safe to call twice. */
  close(): Promise<void>;
}

/** What every resource folder's index.ts exports: its handler, made from a configuration. */
interface ResourceModule {
  createHandler(env: Readonly<Record<string, string>>, parts: { renderer?: Renderer }): LambdaHandler;
}

/**
 * Makes each resource's handler from `functions/<resource>/index.ts` with `env` and `parts`,
 * once: a warm Lambda keeps its clients and configuration at module scope the same way.
 */
const resourceLoader = (
  env: Readonly<Record<string, string>>,
  parts: { renderer?: Renderer },
): HandlerLoader => {
  const made = new Map<string, Promise<LambdaHandler>>();
  return (resource) => {
    if (!/^[a-z0-9-]+$/.test(resource))
      return Promise.reject(new Error(`invalid resource name "${resource}"`));
    let handler = made.get(resource);
    if (!handler) {
      const url = new URL(`../../functions/${resource}/index.ts`, import.meta.url);
      handler = (import(url.href) as Promise<Partial<ResourceModule>>).then((mod) => {
        if (typeof mod.createHandler !== 'function') {
          throw new Error(`functions/${resource}/index.ts does not export createHandler`);
        }
        return mod.createHandler(env, parts);
      });
      // A module that failed to load (a syntax error being fixed) is tried again next request.
      handler.catch(() => made.delete(resource));
      made.set(resource, handler);
    }
    return handler;
  };
};

export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Claims DATA_DIR for this process. dynalite's LevelDB store cannot be shared, and when it finds
 * the store locked it fails with an uncaught error, so a second stack is refused here first.
 */
export const lockDataDir = async (dataDir: string): Promise<() => Promise<void>> => {
  const file = join(dataDir, 'local-stack.pid');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: 'wx' });
      return () => rm(file, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
      throw new Error(
        `DATA_DIR ${dataDir} is in use by another local stack (pid ${pid}): stop it, or set another DATA_DIR`,
      );
    }
    await rm(file, { force: true }); // left behind by a stack that did not shut down
  }
  throw new Error(`cannot claim DATA_DIR ${dataDir}`);
};

export const startLocalStack = async (options: LocalStackOptions = {}): Promise<LocalStack> => {
  const dataDir = resolve(options.dataDir ?? DEFAULT_DATA_DIR);
  const settingsEnv = { ...readServiceEnvironment(), ...options.env };
  const host = options.host ?? '127.0.0.1';
  // Shutdown runs the API server's close first (no new requests), then the rest in reverse order.
  const cleanups: (() => Promise<void>)[] = [];
  let closeApi: (() => Promise<void>) | undefined;
  const closeAll = async () => {
    const steps = [...(closeApi ? [closeApi] : []), ...cleanups.splice(0).reverse()];
    closeApi = undefined;
    for (const cleanup of steps) {
      await cleanup().catch((e: unknown) => console.error('local stack: shutdown step failed:', e));
    }
  };

  // The API port is bound first so that a taken PORT fails before anything else starts.
  // Requests that arrive meanwhile wait for `ready`.
  let markReady: (v?: unknown) => void = () => {};
  let markFailed: (e: unknown) => void = () => {};
  const ready = new Promise((res, rej) => {
    markReady = res;
    markFailed = rej;
  });
  ready.catch(() => {});
  // Set once the handlers can be made (the emulators' endpoints are known); requests wait for `ready`.
  let loadHandler: HandlerLoader = () => Promise.reject(new Error('the local stack is not ready'));
  const cors = corsPolicy(options.corsAllowedOrigins ?? []);
  let dashboardParts: (parts: LocalDashboardParts) => void = () => {};
  const localPages = createLocalDashboard({
    parts: new Promise((res) => {
      dashboardParts = res;
    }),
    sessionTtlSeconds: options.dashboardSessionTtlSeconds,
  });
  const api = createLocalHttpServer({
    quiet: options.quiet,
    ready,
    loadHandler: (r) => loadHandler(r),
    ...(cors ? { cors } : {}),
    localPages,
  });
  try {
    const apiPort = (await listen(api, options.port ?? 0, host)).port;
    closeApi = () => closeServer(api);

    await mkdir(dataDir, { recursive: true });
    cleanups.push(await lockDataDir(dataDir));
    const issuer = await loadOrCreateIssuer(dataDir);

    // The renderer needs only its own settings (CHROME_EXECUTABLE_PATH, PDF_TAGGED, ...), known
    // already: Chromium starts now, beside the emulators, not after them.
    let renderer = options.renderer;
    if (!renderer) {
      const own = createInProcessRenderer(
        // The Chromium layer's fonts, from node_modules, unless FONTCONFIG_FILE names others.
        readRendererConfig({ FONTCONFIG_FILE: localFontconfigFile(PROJECT_ROOT), ...settingsEnv }),
        { spareSessions: options.rendererSpareSessions ?? 0 },
      );
      cleanups.push(() => own.close());
      renderer = own;
    }

    const dynamo = dynalite({
      path: join(dataDir, 'dynamodb'),
      createTableMs: 0,
      deleteTableMs: 0,
      updateTableMs: 0,
    });
    const dynamoDbPort = (await listen(dynamo, 0, '127.0.0.1')).port;
    cleanups.push(() => closeServer(dynamo, 1000));

    // The dashboard's preview downloads PDFs from the page (a cross-origin GET), as in the cloud.
    const dashboardOrigins = [`http://${host}:${apiPort}`, `http://localhost:${apiPort}`];
    const s3 = new S3rver({
      silent: true,
      directory: join(dataDir, 's3'),
      vhostBuckets: false,
      configureBuckets: [{ name: LOCAL_BUCKET_NAME, configs: [pdfBucketCors(dashboardOrigins)] }],
    });
    await s3.configureBuckets();
    const s3Server = createServer(s3.callback());
    const s3Port = (await listen(s3Server, 0, '127.0.0.1')).port;
    cleanups.push(() => closeServer(s3Server, 1000));

    const dynamoDbEndpoint = `http://127.0.0.1:${dynamoDbPort}`;
    const s3Endpoint = `http://127.0.0.1:${s3Port}`;

    const setup = new DynamoDBClient({
      region: LOCAL_REGION,
      endpoint: dynamoDbEndpoint,
      credentials: LOCAL_CREDENTIALS,
    });
    try {
      await ensureTable(setup, LOCAL_TABLE_NAME, dataDir);
    } finally {
      setup.destroy();
    }
    await writeRunningStack(dataDir, { dynamoDbEndpoint, tableName: LOCAL_TABLE_NAME, region: LOCAL_REGION });
    cleanups.push(() => rm(join(dataDir, RUNNING_STACK_FILE), { force: true }));

    const handlerEnv: Record<string, string> = {
      ...settingsEnv,
      AWS_REGION: LOCAL_REGION,
      AWS_DEFAULT_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      TABLE_NAME: LOCAL_TABLE_NAME,
      BUCKET_NAME: LOCAL_BUCKET_NAME,
      DYNAMODB_ENDPOINT: dynamoDbEndpoint,
      S3_ENDPOINT: s3Endpoint,
      COGNITO_USER_POOL_ID: LOCAL_USER_POOL_ID,
      COGNITO_CLIENT_ID: `${LOCAL_CLIENT_ID},${LOCAL_DASHBOARD_CLIENT_ID}`,
      LOCAL_JWKS_FILE: issuer.jwksFile,
      API_KEY_SECRET: await loadOrCreateApiKeySecret(dataDir),
    };

    loadHandler = resourceLoader(handlerEnv, { renderer });
    // Make every handler now, as Lambda runs a function's init before its first request.
    await Promise.all([...apiResources(), FALLBACK_RESOURCE].map((resource) => loadHandler(resource)));

    dashboardParts({ issuer, s3Endpoint });
    markReady();
    const stack: LocalStack = {
      baseUrl: `http://${host}:${apiPort}`,
      dashboardUrl: `http://${host}:${apiPort}${LOCAL_DASHBOARD_PATH}`,
      s3Endpoint,
      dynamoDbEndpoint,
      dataDir,
      tableName: LOCAL_TABLE_NAME,
      bucketName: LOCAL_BUCKET_NAME,
      region: LOCAL_REGION,
      jwksFile: issuer.jwksFile,
      handlerEnv,
      issueToken: (o) => issuer.issueToken(o),
      close: closeAll,
    };
    return stack;
  } catch (e) {
    markFailed(e);
    await closeAll();
    throw e;
  }
};
