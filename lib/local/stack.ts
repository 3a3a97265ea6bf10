/**
 * The whole service on one machine: dynalite for DynamoDB, s3rver for S3, the local token
 * issuer for Cognito, the in-process renderer for the renderer Lambda, and the local API Gateway
 * in front of the same handlers the cloud runs. Data lives under DATA_DIR and survives restarts.
 *
 * Handlers read their configuration once, at module load (functions/core/config.ts), so this
 * sets process.env before any handler module is imported. Because of that, a process hosts one
 * stack at a time, and restarting it in the same process reuses the same DATA_DIR and emulator
 * ports (test files each get their own process from vitest, so each may use its own DATA_DIR).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join, resolve } from 'node:path';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import type { Renderer } from '../../functions/renderer/contract.js';
import { apiResources } from '../../functions/routes.js';
import { tableSchema } from '../../functions/table.js';
import {
  closeServer,
  createLocalHttpServer,
  FALLBACK_RESOURCE,
  importHandler,
  listen,
} from './http-server.js';
import {
  type IssueTokenOptions,
  LOCAL_CLIENT_ID,
  LOCAL_REGION,
  LOCAL_USER_POOL_ID,
  loadOrCreateIssuer,
} from './issuer.js';
import { DEFAULT_DATA_DIR } from './options.js';

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
  /** Extra environment for the handlers (PLANS, RENDER_BUDGET_MS, limits, ...), set before they load. */
  readonly env?: Readonly<Record<string, string>>;
  /** No request log lines and no notices. */
  readonly quiet?: boolean;
  /** Tests only: the renderer to use instead of the in-process Chromium one, e.g. to inject a fault. */
  readonly renderer?: Renderer;
}

export interface LocalStack {
  /** e.g. `http://127.0.0.1:3000`, no trailing slash. */
  readonly baseUrl: string;
  readonly s3Endpoint: string;
  readonly dynamoDbEndpoint: string;
  readonly dataDir: string;
  readonly tableName: string;
  readonly bucketName: string;
  readonly region: string;
  /** The JWKS the API verifies session tokens against (LOCAL_JWKS_FILE). */
  readonly jwksFile: string;
  /** What was set in process.env for the handlers. */
  readonly handlerEnv: Readonly<Record<string, string>>;
  /** A Cognito-style ID token for the local user pool. */
  issueToken(options: IssueTokenOptions): Promise<string>;
  /** Stops the server, the renderer's browser and the emulators. Safe to call twice. */
  close(): Promise<void>;
}

interface InProcessRendererModule {
  createInProcessRenderer(): Renderer;
  closeRenderer(): Promise<void>;
}

/** What handlers already loaded in this process were configured with; see the module comment. */
let processBinding: { dataDir: string; dynamoDbPort: number; s3Port: number } | undefined;
let running = false;

const listenOrExplain = async (server: Server, port: number, what: string): Promise<number> => {
  try {
    return (await listen(server, port, '127.0.0.1')).port;
  } catch (e) {
    if (port === 0) throw e;
    throw new Error(`${what}: cannot listen on port ${port} again after a restart in this process`, {
      cause: e,
    });
  }
};

const tableDefinition = (tableName: string): CreateTableCommandInput => {
  const keyNames = [
    tableSchema.partitionKey,
    tableSchema.sortKey,
    ...tableSchema.globalSecondaryIndexes.flatMap((i) => [i.partitionKey, i.sortKey]),
  ];
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: keyNames.map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
    KeySchema: [
      { AttributeName: tableSchema.partitionKey, KeyType: 'HASH' },
      { AttributeName: tableSchema.sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: tableSchema.globalSecondaryIndexes.map((i) => ({
      IndexName: i.indexName,
      KeySchema: [
        { AttributeName: i.partitionKey, KeyType: 'HASH' },
        { AttributeName: i.sortKey, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'ALL' },
    })),
  };
};

const describe = async (client: DynamoDBClient, tableName: string): Promise<TableDescription | undefined> => {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (e) {
    if (e instanceof ResourceNotFoundException) return undefined;
    throw e;
  }
};

/** Creates the table from functions/table.ts unless it is there; refuses a table of another shape. */
const ensureTable = async (client: DynamoDBClient, tableName: string, dataDir: string): Promise<void> => {
  let table = await describe(client, tableName);
  if (!table) {
    try {
      await client.send(new CreateTableCommand(tableDefinition(tableName)));
    } catch (e) {
      if (!(e instanceof ResourceInUseException)) throw e;
    }
    table = await describe(client, tableName);
  }
  const wanted = tableSchema.globalSecondaryIndexes.map((i) => i.indexName).sort();
  const present = (table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName).sort();
  const key = (table?.KeySchema ?? []).map((k) => k.AttributeName).join(',');
  if (key !== `${tableSchema.partitionKey},${tableSchema.sortKey}` || wanted.join() !== present.join()) {
    throw new Error(
      `the table in ${join(dataDir, 'dynamodb')} does not match functions/table.ts (indexes ${present.join(', ') || 'none'}); ` +
        'delete that directory to start with a fresh table',
    );
  }
  // dynalite runs with createTableMs 0, so this is at most a few polls.
  while ((await describe(client, tableName))?.TableStatus !== 'ACTIVE') {
    await new Promise((r) => setTimeout(r, 20));
  }
};

const isMissingModule = (e: unknown, file: string): boolean =>
  (e as NodeJS.ErrnoException | null)?.code === 'ERR_MODULE_NOT_FOUND' &&
  String((e as Error).message).includes(file);

/** The in-process renderer module, or undefined while it does not exist yet. */
const importInProcessRenderer = async (): Promise<InProcessRendererModule | undefined> => {
  const url = new URL('../../functions/renderer/in-process.ts', import.meta.url);
  try {
    const mod = (await import(url.href)) as Partial<InProcessRendererModule>;
    if (typeof mod.createInProcessRenderer !== 'function' || typeof mod.closeRenderer !== 'function') {
      throw new Error(
        'functions/renderer/in-process.ts must export createInProcessRenderer and closeRenderer',
      );
    }
    return mod as InProcessRendererModule;
  } catch (e) {
    if (isMissingModule(e, 'in-process')) return undefined;
    throw e;
  }
};

const isAlive = (pid: number): boolean => {
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
const lockDataDir = async (dataDir: string): Promise<() => Promise<void>> => {
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
  if (running)
    throw new Error('a local stack is already running in this process (handlers share process.env)');
  const dataDir = resolve(options.dataDir ?? DEFAULT_DATA_DIR);
  if (processBinding && processBinding.dataDir !== dataDir) {
    throw new Error(
      `this process already ran a local stack on ${processBinding.dataDir}; its handlers keep that configuration, ` +
        'so start a stack on another DATA_DIR in another process',
    );
  }
  running = true;
  const host = options.host ?? '127.0.0.1';
  const notice = options.quiet ? () => {} : (line: string) => process.stderr.write(`${line}\n`);
  // Shutdown runs the API server's close first (no new requests), then the rest in reverse order.
  const cleanups: (() => Promise<void>)[] = [];
  let closeApi: (() => Promise<void>) | undefined;
  const closeAll = async () => {
    const steps = [...(closeApi ? [closeApi] : []), ...cleanups.splice(0).reverse()];
    closeApi = undefined;
    for (const cleanup of steps) {
      await cleanup().catch((e: unknown) => console.error('local stack: shutdown step failed:', e));
    }
    running = false;
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
  const api = createLocalHttpServer({ quiet: options.quiet, ready });
  try {
    const apiPort = (await listen(api, options.port ?? 0, host)).port;
    closeApi = () => closeServer(api);

    await mkdir(dataDir, { recursive: true });
    cleanups.push(await lockDataDir(dataDir));
    const issuer = await loadOrCreateIssuer(dataDir);

    // The renderer reads only its own settings (CHROME_EXECUTABLE_PATH, PDF_TAGGED, ...), which are
    // in the environment already: Chromium starts now, beside the emulators, not after them.
    if (options.env) Object.assign(process.env, options.env);
    const rendererStart = options.renderer
      ? undefined
      : importInProcessRenderer().then((mod) => mod && { mod, renderer: mod.createInProcessRenderer() });
    rendererStart?.catch(() => {});
    cleanups.push(async () => {
      const started = await rendererStart?.catch(() => undefined);
      await started?.mod.closeRenderer();
    });

    const dynamo = dynalite({
      path: join(dataDir, 'dynamodb'),
      createTableMs: 0,
      deleteTableMs: 0,
      updateTableMs: 0,
    });
    const dynamoDbPort = await listenOrExplain(dynamo, processBinding?.dynamoDbPort ?? 0, 'dynalite');
    cleanups.push(() => closeServer(dynamo, 1000));

    const s3 = new S3rver({
      silent: true,
      directory: join(dataDir, 's3'),
      vhostBuckets: false,
      configureBuckets: [{ name: LOCAL_BUCKET_NAME }],
    });
    await s3.configureBuckets();
    const s3Server = createServer(s3.callback());
    const s3Port = await listenOrExplain(s3Server, processBinding?.s3Port ?? 0, 's3rver');
    cleanups.push(() => closeServer(s3Server, 1000));
    processBinding = { dataDir, dynamoDbPort, s3Port };

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

    const handlerEnv: Record<string, string> = {
      AWS_REGION: LOCAL_REGION,
      AWS_DEFAULT_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      TABLE_NAME: LOCAL_TABLE_NAME,
      BUCKET_NAME: LOCAL_BUCKET_NAME,
      DYNAMODB_ENDPOINT: dynamoDbEndpoint,
      S3_ENDPOINT: s3Endpoint,
      COGNITO_USER_POOL_ID: LOCAL_USER_POOL_ID,
      COGNITO_CLIENT_ID: LOCAL_CLIENT_ID,
      LOCAL_JWKS_FILE: issuer.jwksFile,
      API_KEY_SECRET: await loadOrCreateApiKeySecret(dataDir),
      ...(options.quiet && !process.env.POWERTOOLS_LOG_LEVEL ? { POWERTOOLS_LOG_LEVEL: 'ERROR' } : {}),
      ...options.env,
    };
    // Locally the renderer runs in-process; a RENDERER_FUNCTION_NAME left in the shell would
    // send renders to a real Lambda. Same for a session token that belongs to real credentials.
    for (const name of ['RENDERER_FUNCTION_NAME', 'LAMBDA_ENDPOINT', 'AWS_SESSION_TOKEN', 'AWS_PROFILE']) {
      if (!(name in handlerEnv)) delete process.env[name];
    }
    Object.assign(process.env, handlerEnv);

    // Only now may anything under functions/ that reads configuration be imported.
    const { registerLocalRenderer } = await import('../../functions/core/renderer-client.js');
    // Load every handler now, as Lambda runs a function's init before its first request, while
    // Chromium is still starting.
    await Promise.all([...apiResources(), FALLBACK_RESOURCE].map((resource) => importHandler(resource)));
    const inProcess = await rendererStart;
    if (options.renderer) {
      registerLocalRenderer(options.renderer);
    } else if (inProcess) {
      registerLocalRenderer(inProcess.renderer);
    } else {
      notice('local stack: functions/renderer/in-process.ts does not exist yet, so renders will fail');
    }

    markReady();
    const stack: LocalStack = {
      baseUrl: `http://${host}:${apiPort}`,
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
