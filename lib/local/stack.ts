/**
 * The whole service on one machine: dynalite for DynamoDB, s3rver for S3, the local SQS server
 * (lib/local/sqs) for every queue of the queue table, and every consumer of the consumer table
 * started as the cloud runs it (lib/local/consumers.ts: the render worker and the webhook sender
 * behind their event source mappings, the sweeper on a timer), the local token issuer for Cognito,
 * the in-process renderer for the renderer Lambda,
 * and the local API Gateway in front of the same handlers the cloud runs. Data lives under
 * DATA_DIR and survives restarts.
 *
 * Each resource's handler is made by its `createHandler(environment, parts)` (functions/handlers.ts,
 * by the route table's resource names) with this stack's configuration (endpoints, table, bucket,
 * issuer, settings; each resource only its wiring's bindings, functions/wiring.ts) and the
 * in-process renderer handed in, as a Lambda's is made from its environment at cold start;
 * process.env is left alone.
 * Each stack has a renderer of its own (its browser, egress proxy and templating workers), so
 * several stacks, each with its own DATA_DIR, can run in one process.
 */

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import { createStsDestinationWriter } from '../../functions/adapters/sts/destination-writer.js';
import {
  type ConsumerDeclaration,
  consumerOf,
  consumers as serviceConsumers,
} from '../../functions/consumers.js';
import type { LookupAll } from '../../functions/core/public-addresses.js';
import { type HandlerParts, handlerFactory, servedResources } from '../../functions/handlers.js';
import {
  batchOutputQueue,
  deliveryQueue,
  localDeadLetterQueueName,
  localQueueName,
  type QueueDeclaration,
  renderQueue,
  queues as serviceQueues,
  webhookQueue,
} from '../../functions/queues.js';
import type { Renderer } from '../../functions/renderer/contract.js';
import type { RendererInstance } from '../../functions/renderer/renderer.js';
import { type ResourceWiring, wiringOf } from '../../functions/route-declaration.js';
import { resources } from '../../functions/routes.js';
import { settingsFromEnvironment } from '../../functions/settings.js';
import {
  BINDING_NAMES,
  type Binding,
  bindingEnvironment,
  LOCAL_VARIABLES,
  REGION_VARIABLES,
} from '../../functions/wiring.js';
import { corsPolicy } from '../cors.js';
import { seedStarters } from '../starters/seed.js';
import { ensureLocalQueues, startLocalConsumers } from './consumers.js';
import { LOCAL_CREDENTIALS } from './credentials.js';
import {
  createLocalDashboard,
  LOCAL_DASHBOARD_CLIENT_ID,
  LOCAL_DASHBOARD_PATH,
  type LocalDashboardParts,
  type LocalPages,
} from './dashboard.js';
import { createLocalDocs } from './docs-site.js';
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
import { localKmsParts } from './kms.js';
import { startLocalRenderer } from './local-renderer.js';
import { DEFAULT_DATA_DIR, readServiceEnvironment } from './options.js';
import { startLocalSqs } from './sqs/server.js';
import { createStorageWatch, guardLevelDb, guardS3rverWrites } from './storage-faults.js';
import { LOCAL_ROLES_FILE, startLocalSts } from './sts.js';
import { ensureTable } from './table.js';
import { createJsonLinesUsageBus, USAGE_EVENTS_FILE } from './usage-events.js';

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
  /** Absent in files written before the admin command's export and delete needed the bucket. */
  readonly s3Endpoint?: string;
  readonly bucketName?: string;
}

const writeRunningStack = (dataDir: string, stack: Omit<RunningStack, 'pid'>): Promise<void> =>
  writeFile(join(dataDir, RUNNING_STACK_FILE), `${JSON.stringify({ pid: process.pid, ...stack })}\n`, {
    mode: 0o600,
  });

/**
 * The origins the stack answers as: its host, and for a loopback host the other loopback spellings
 * (a browser opened on localhost signs in as on 127.0.0.1). Fixed at start, never from a request.
 */
export const stackOrigins = (host: string, port: number): string[] => {
  const loopback = ['127.0.0.1', 'localhost', '[::1]'];
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const names = loopback.includes(bracketed) ? loopback : [bracketed];
  return names.map((name) => `http://${name}:${port}`);
};

/** s3rver's bucket CORS: GET from the dashboard's origins (the cloud's PDF bucket has the same rule). */
const pdfBucketCors = (origins: readonly string[]): string =>
  `<CORSConfiguration>${origins
    .map(
      (o) =>
        `<CORSRule><AllowedOrigin>${o}</AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>600</MaxAgeSeconds></CORSRule>`,
    )
    .join('')}</CORSConfiguration>`;

export const LOCAL_TABLE_NAME = 'pdf-service-local';
/**
 * The local SQS server's queues (functions/queues.ts), kept in the data directory's journal: async
 * renders and webhook attempts, and the messages no consumer could process.
 */
export const LOCAL_RENDER_QUEUE = localQueueName(renderQueue);
export const LOCAL_BATCH_OUTPUT_QUEUE = localQueueName(batchOutputQueue);
export const LOCAL_RENDER_DLQ = localDeadLetterQueueName(renderQueue);
export const LOCAL_WEBHOOK_QUEUE = localQueueName(webhookQueue);
export const LOCAL_WEBHOOK_DLQ = localDeadLetterQueueName(webhookQueue);
/**
 * ASYNC_QUEUE_LEASE_SECONDS unless given. The local queue keeps its messages across a kill (its
 * journal), so the lease only recovers a job whose message was never sent (the stack died between
 * the two writes): 15 minutes locally, where the cloud's default is 6 h. Shorter, a long backlog
 * (a batch of 1,000 at two at a time) would be sent again while it waits, harmlessly but uselessly.
 */
export const LOCAL_ASYNC_QUEUE_LEASE_SECONDS = 900;
export const LOCAL_BUCKET_NAME = 'pdf-service-local';
export { LOCAL_CREDENTIALS } from './credentials.js';

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
  /**
   * The in-process renderer, started ahead by the caller (startLocalRenderer, with this stack's
   * settings): bin/local.ts starts Chromium before it loads the stack. The stack closes it.
   */
  readonly startedRenderer?: RendererInstance;
  /** Origins browsers may call the API from (CORS, as the cloud's corsAllowedOrigins). @default none */
  readonly corsAllowedOrigins?: readonly string[];
  /** Tests only: the lifetime of the dashboard's local sign-in tokens. @default 3600 s */
  readonly dashboardSessionTtlSeconds?: number;
  /**
   * Open each render's page ahead of it, as the renderer Lambda does (functions/renderer/browser.ts).
   * @default 0: tests fault and inspect pages opened at render time
   */
  readonly rendererSpareSessions?: 0 | 1;
  /**
   * Tests only: the resolver webhook hosts are judged with, at creation and at delivery (a name
   * that resolves to a public address, then to a private one). @default the system's
   */
  readonly webhookLookup?: LookupAll;
  /**
   * Tests only: false leaves the render queue to the test (the bundle smoke test feeds it to the
   * consumer's bundle). @default true: the stack's event source mapping runs the consumer
   */
  readonly asyncConsumer?: boolean;
  /**
   * Tests only: consumers (by name, functions/consumers.ts) the stack does not run, their queue
   * left to the test (the Lambda-like sandbox feeds the batch output queue to its bundle).
   * @default none
   */
  readonly skipConsumers?: readonly string[];
  /**
   * Tests only: the queue table and the consumer table the stack starts.
   * @default the service's (functions/queues.ts, functions/consumers.ts); a test adds a fixture's
   */
  readonly asyncTables?: {
    readonly queues: readonly QueueDeclaration[];
    readonly consumers: readonly ConsumerDeclaration[];
  };
}

export interface LocalStack {
  /** e.g. `http://127.0.0.1:3000`, no trailing slash. */
  readonly baseUrl: string;
  /** The dashboard, served beside the API with its local sign-in: `<baseUrl>/dashboard/`. */
  readonly dashboardUrl: string;
  readonly s3Endpoint: string;
  readonly dynamoDbEndpoint: string;
  /** The local SQS server (AWS_ENDPOINT_URL_SQS). */
  readonly sqsEndpoint: string;
  /** The render queue's URL (RENDER_QUEUE_URL). */
  readonly renderQueueUrl: string;
  /** The webhook queue's URL (WEBHOOK_QUEUE_URL). */
  readonly webhookQueueUrl: string;
  /** The batch output queue's URL (BATCH_OUTPUT_QUEUE_URL). */
  readonly batchOutputQueueUrl: string;
  /** The delivery queue's URL (DELIVERY_QUEUE_URL). */
  readonly deliveryQueueUrl: string;
  readonly dataDir: string;
  readonly tableName: string;
  readonly bucketName: string;
  readonly region: string;
  /** The JWKS the API verifies session tokens against (LOCAL_JWKS_FILE). */
  readonly jwksFile: string;
  /**
   * Every variable the handlers were made with (as a Lambda's environment would be): each handler
   * got the common ones and its own bindings'; this holds every binding's, for handlers made by hand.
   */
  readonly handlerEnv: Readonly<Record<string, string>>;
  /** A Cognito-style ID token for the local user pool. */
  issueToken(options: IssueTokenOptions): Promise<string>;
  /** Stops the server, the renderer's browser and the emulators. Safe to call twice. */
  close(): Promise<void>;
}

/** Where a resource's wiring (which bindings its Lambda has) is declared: the route table. */
const wiringOfResource = (name: string): ResourceWiring | undefined => {
  const declared = resources.find((r) => r.name === name);
  return declared ? wiringOf(declared) : undefined;
};

/**
 * Each binding's variables as this stack sets them, by the wiring declaration (functions/wiring.ts):
 * the cloud's, with the local stand-ins where the cloud has a service the stack does not.
 */
const localBindings = (parts: {
  readonly jwksFile: string;
  readonly apiKeySecret: string;
  readonly renderQueueUrl: string;
  readonly webhookQueueUrl: string;
  readonly batchOutputQueueUrl: string;
  readonly deliveryQueueUrl: string;
}): { readonly [B in Binding]: Readonly<Record<string, string>> } => ({
  table: bindingEnvironment('table', { tableName: LOCAL_TABLE_NAME }),
  userPool: {
    ...bindingEnvironment('userPool', {
      userPoolId: LOCAL_USER_POOL_ID,
      clientIds: `${LOCAL_CLIENT_ID},${LOCAL_DASHBOARD_CLIENT_ID}`,
    }),
    // The verifier is handed the issuer's keys (aws-jwt-verify fetches only https).
    [LOCAL_VARIABLES.jwksFile]: parts.jwksFile,
  },
  // The HMAC key itself, in place of the Secrets Manager secret's id.
  apiKeySecret: { [LOCAL_VARIABLES.apiKeySecret]: parts.apiKeySecret },
  pdfBucket: bindingEnvironment('pdfBucket', { bucketName: LOCAL_BUCKET_NAME }),
  // The in-process renderer is handed in (HandlerParts), not invoked by name.
  renderer: {},
  webhookQueue: bindingEnvironment('webhookQueue', { queueUrl: parts.webhookQueueUrl }),
  renderQueue: bindingEnvironment('renderQueue', { queueUrl: parts.renderQueueUrl }),
  batchOutputQueue: bindingEnvironment('batchOutputQueue', { queueUrl: parts.batchOutputQueueUrl }),
  deliveryQueue: bindingEnvironment('deliveryQueue', { queueUrl: parts.deliveryQueueUrl }),
  // KMS, where there is one, is the AWS SDK's (lib/local/kms.ts).
  kmsSigningKeys: {},
  // The local STS stand-in is handed in (the destination writer, lib/local/sts.ts).
  destinationRoles: {},
  // The JSON-lines file in DATA_DIR is handed in (usageEventBus part), not put to by name.
  usageEventBus: {},
});

/**
 * Makes each resource's handler once, from the factory the route table's map gives it
 * (functions/handlers.ts), with the environment its wiring gives it: the settings and the
 * emulators' endpoints, and the variables of its own bindings only, as its Lambda has in the
 * cloud. A warm Lambda keeps its clients and configuration at module scope the same way.
 */
const makeHandlers = (
  common: Readonly<Record<string, string>>,
  bindings: ReturnType<typeof localBindings>,
  parts: HandlerParts,
): ReadonlyMap<string, LambdaHandler> => {
  const environmentOf = (resource: string): Record<string, string> => {
    const wiring = wiringOfResource(resource);
    const environment = { ...common };
    for (const binding of BINDING_NAMES) if (wiring?.[binding]) Object.assign(environment, bindings[binding]);
    return environment;
  };
  return new Map(servedResources().map((r) => [r, handlerFactory(r)(environmentOf(r), parts)]));
};

export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A killed process that its parent has not reaped yet (a zombie) holds nothing any more.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true; // not Linux: signal 0 answered, so it runs
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
  const settingsEnv = {
    ASYNC_QUEUE_LEASE_SECONDS: String(LOCAL_ASYNC_QUEUE_LEASE_SECONDS),
    ...readServiceEnvironment(),
    ...options.env,
  };
  const settings = settingsFromEnvironment(settingsEnv);
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
  const dashboard = createLocalDashboard({
    parts: new Promise((res) => {
      dashboardParts = res;
    }),
    sessionTtlSeconds: options.dashboardSessionTtlSeconds,
  });
  // The documentation site (npm run docs:build) at /docs/, beside the dashboard's API reference.
  const docs = createLocalDocs();
  const localPages: LocalPages = (req, res) => docs(req, res) || dashboard(req, res);
  // A full DATA_DIR: the emulators' failed writes are answered, not thrown (storage-faults.ts).
  const storage = createStorageWatch(dataDir);
  const api = createLocalHttpServer({
    quiet: options.quiet,
    storage,
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
      const own =
        options.startedRenderer ?? startLocalRenderer(settingsEnv, options.rendererSpareSessions ?? 0);
      cleanups.push(() => own.close());
      renderer = own;
    }

    const unguardLevelDb = guardLevelDb(storage);
    cleanups.push(async () => unguardLevelDb());
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
    guardS3rverWrites(s3, storage);
    await s3.configureBuckets();
    const s3Server = createServer(s3.callback());
    const s3Port = (await listen(s3Server, 0, '127.0.0.1')).port;
    cleanups.push(() => closeServer(s3Server, 1000));

    // Every queue of the table, as the cloud's (functions/queues.ts).
    const tables = options.asyncTables ?? { queues: serviceQueues, consumers: serviceConsumers };
    const sqs = await startLocalSqs(join(dataDir, 'sqs'));
    cleanups.push(() => sqs.close());
    const queueUrls = ensureLocalQueues(sqs, tables.queues, tables.consumers, settings);
    const renderQueueUrl = queueUrls.get(renderQueue.name) as string;
    const webhookQueueUrl = queueUrls.get(webhookQueue.name) as string;
    const batchOutputQueueUrl = queueUrls.get(batchOutputQueue.name) as string;
    const deliveryQueueUrl = queueUrls.get(deliveryQueue.name) as string;

    const dynamoDbEndpoint = `http://127.0.0.1:${dynamoDbPort}`;
    const s3Endpoint = `http://127.0.0.1:${s3Port}`;

    const setup = new DynamoDBClient({
      region: LOCAL_REGION,
      endpoint: dynamoDbEndpoint,
      credentials: LOCAL_CREDENTIALS,
    });
    try {
      await ensureTable(setup, LOCAL_TABLE_NAME, dataDir);
      // The starter templates, as a fresh stack's GET /v1/templates/public lists them (issue 40).
      await seedStarters(DynamoDBDocumentClient.from(setup), LOCAL_TABLE_NAME);
    } finally {
      setup.destroy();
    }
    await writeRunningStack(dataDir, {
      dynamoDbEndpoint,
      tableName: LOCAL_TABLE_NAME,
      region: LOCAL_REGION,
      s3Endpoint,
      bucketName: LOCAL_BUCKET_NAME,
    });
    cleanups.push(() => rm(join(dataDir, RUNNING_STACK_FILE), { force: true }));

    // What every Lambda's environment has: the settings, the region, and the emulators.
    const common: Record<string, string> = {
      ...settingsEnv,
      [REGION_VARIABLES.region]: LOCAL_REGION,
      [REGION_VARIABLES.defaultRegion]: LOCAL_REGION,
      [LOCAL_VARIABLES.accessKeyId]: LOCAL_CREDENTIALS.accessKeyId,
      [LOCAL_VARIABLES.secretAccessKey]: LOCAL_CREDENTIALS.secretAccessKey,
      [LOCAL_VARIABLES.dynamoDbEndpoint]: dynamoDbEndpoint,
      [LOCAL_VARIABLES.s3Endpoint]: s3Endpoint,
      [LOCAL_VARIABLES.sqsEndpoint]: sqs.endpoint,
    };
    const bindings = localBindings({
      jwksFile: issuer.jwksFile,
      apiKeySecret: await loadOrCreateApiKeySecret(dataDir),
      renderQueueUrl,
      webhookQueueUrl,
      batchOutputQueueUrl,
      deliveryQueueUrl,
    });
    // Every binding's variables: what a handler made by hand (tests) is given.
    const handlerEnv: Record<string, string> = Object.assign({ ...common }, ...Object.values(bindings));

    const webhookParts = options.webhookLookup ? { webhookLookup: options.webhookLookup } : {};
    /** A function's environment from its wiring, as its Lambda's in the cloud. */
    const environmentFor = (wiring: ResourceWiring): Record<string, string> => {
      const environment = { ...common };
      for (const binding of BINDING_NAMES) if (wiring[binding]) Object.assign(environment, bindings[binding]);
      return environment;
    };

    // Destinations' roles go through the STS stand-in (the trust policies of LOCAL_ROLES_FILE),
    // their buckets are the local S3 server's.
    const sts = await startLocalSts({ rolesFile: join(dataDir, LOCAL_ROLES_FILE) });
    cleanups.push(() => sts.close());
    const destinationWriter = createStsDestinationWriter({
      stsEndpoint: sts.endpoint,
      s3Endpoint,
      credentials: LOCAL_CREDENTIALS,
    });

    // Every handler is made now, as Lambda runs a function's init before its first request.
    const handlers = makeHandlers(common, bindings, {
      renderer,
      ...webhookParts,
      ...localKmsParts(),
      destinationWriter,
    });
    loadHandler = async (resource) => {
      const handler = handlers.get(resource);
      if (!handler) throw new Error(`no handler for the resource "${resource}"`);
      return handler;
    };

    // Every consumer of the table, as the cloud runs it: the schedules' first runs before the
    // stack serves, then the event source mappings. Stopped before the renderer and the queues
    // (cleanups run in reverse).
    const sqsClient = new SQSClient({
      region: LOCAL_REGION,
      endpoint: sqs.endpoint,
      credentials: LOCAL_CREDENTIALS,
    });
    cleanups.push(async () => sqsClient.destroy());
    cleanups.push(
      await startLocalConsumers({
        consumers: tables.consumers,
        settings,
        sqs,
        client: sqsClient,
        region: LOCAL_REGION,
        environmentFor,
        parts: {
          renderer,
          ...webhookParts,
          usageBus: createJsonLinesUsageBus(join(dataDir, USAGE_EVENTS_FILE)),
          destinationWriter,
        },
        skip: new Set([
          ...((options.asyncConsumer ?? true) ? [] : [consumerOf(renderQueue, tables.consumers).name]),
          ...(options.skipConsumers ?? []),
        ]),
      }),
    );
    dashboardParts({ issuer, s3Endpoint, origins: stackOrigins(host, apiPort) });
    markReady();
    const stack: LocalStack = {
      baseUrl: `http://${host}:${apiPort}`,
      dashboardUrl: `http://${host}:${apiPort}${LOCAL_DASHBOARD_PATH}`,
      s3Endpoint,
      dynamoDbEndpoint,
      sqsEndpoint: sqs.endpoint,
      renderQueueUrl,
      webhookQueueUrl,
      batchOutputQueueUrl,
      deliveryQueueUrl,
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
