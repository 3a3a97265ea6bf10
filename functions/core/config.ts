/**
 * The only module that reads `process.env`. A Lambda reads it once, at cold start
 * (`lambdaEnvironment()`), and hands it to its resource's `createHandler`; the local stack hands
 * its own configuration in the same way instead. A missing or malformed variable fails fast with
 * the variable's name.
 */
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';
import type { ResourceWiring } from '../route-declaration.js';
import {
  type Environment,
  type Limits,
  plansFromVariable,
  type Settings,
  SettingsError,
  settingsFromEnvironment,
} from '../settings.js';
import {
  BINDINGS,
  FALLBACK_VARIABLES,
  FETCHED_FONTS_VARIABLES,
  LOCAL_VARIABLES,
  REGION_VARIABLES,
  RENDERER_VARIABLES,
} from '../wiring.js';

export type { Environment } from '../settings.js';
/** A configuration problem: names the variable. */
export { SettingsError as ConfigError } from '../settings.js';

/** The process's environment, as Lambda gives it. */
export const lambdaEnvironment = (): Environment => process.env;

/** Whether this process is a Lambda function's: Lambda names the function in its environment. */
export const runsInLambda = (env: Environment = lambdaEnvironment()): boolean =>
  env.AWS_LAMBDA_FUNCTION_NAME !== undefined;

const variable = (env: Environment, name: string): string | undefined => {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
};

const required = (env: Environment, name: string): string => {
  const v = variable(env, name);
  if (v === undefined) throw new SettingsError(name, 'is required');
  return v;
};

export const parsePlans = plansFromVariable;

export const readLimits = (env: Environment = lambdaEnvironment()): Limits => {
  const { plans: _plans, ...limits } = settingsFromEnvironment(env);
  return limits;
};

export interface AwsConfig {
  readonly region: string;
  /** Local stack only: dynalite's endpoint. */
  readonly dynamoDbEndpoint: string | undefined;
  /** Local stack only: s3rver's endpoint (path-style addressing). */
  readonly s3Endpoint: string | undefined;
  /** Local tests only: an endpoint that answers Lambda Invoke (the bundle smoke test). */
  readonly lambdaEndpoint: string | undefined;
  /** Local stack only: its SQS server (AWS_ENDPOINT_URL_SQS). */
  readonly sqsEndpoint: string | undefined;
  /** With local endpoints only: the emulators' credentials (in the cloud the role's are used). */
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string } | undefined;
}

const readAwsConfig = (env: Environment): AwsConfig => {
  const endpoints = {
    dynamoDbEndpoint: variable(env, LOCAL_VARIABLES.dynamoDbEndpoint),
    s3Endpoint: variable(env, LOCAL_VARIABLES.s3Endpoint),
    lambdaEndpoint: variable(env, LOCAL_VARIABLES.lambdaEndpoint),
    sqsEndpoint: variable(env, LOCAL_VARIABLES.sqsEndpoint),
  };
  const local = Object.values(endpoints).some((e) => e !== undefined);
  return {
    region:
      variable(env, REGION_VARIABLES.region) ?? variable(env, REGION_VARIABLES.defaultRegion) ?? 'us-east-1',
    ...endpoints,
    // In the cloud the SDK's own provider chain finds (and renews) the role's credentials.
    credentials: local
      ? {
          accessKeyId: required(env, LOCAL_VARIABLES.accessKeyId),
          secretAccessKey: required(env, LOCAL_VARIABLES.secretAccessKey),
        }
      : undefined,
  };
};

export interface AuthConfig {
  readonly userPoolId: string;
  /**
   * The app clients whose ID tokens the API accepts (`aud`): the service's own and the
   * dashboard's. `COGNITO_CLIENT_ID`, comma-separated.
   */
  readonly clientIds: readonly string[];
  /** Local stack only: a JWKS file to give the verifier instead of fetching it over https. */
  readonly jwks: unknown | undefined;
}

const readAuthConfig = (env: Environment): AuthConfig => {
  const jwksFile = variable(env, LOCAL_VARIABLES.jwksFile);
  let jwks: unknown;
  if (jwksFile !== undefined) {
    try {
      jwks = JSON.parse(readFileSync(jwksFile, 'utf8'));
    } catch (e) {
      throw new SettingsError(LOCAL_VARIABLES.jwksFile, `cannot be read as JSON: ${(e as Error).message}`);
    }
  }
  const clientIds = required(env, BINDINGS.userPool.clientIds)
    .split(',')
    .map((id) => id.trim());
  if (clientIds.some((id) => !/^[\w-]+$/.test(id))) {
    throw new SettingsError(BINDINGS.userPool.clientIds, 'must be app client ids separated by commas');
  }
  return { userPoolId: required(env, BINDINGS.userPool.userPoolId), clientIds, jwks };
};

/**
 * The HMAC key behind API key digests: in the cloud a Secrets Manager secret (API_KEY_SECRET_ID),
 * read once per cold start; locally the value itself (API_KEY_SECRET), kept in DATA_DIR.
 */
export type ApiKeySecretSource =
  | { readonly kind: 'value'; readonly value: string }
  | { readonly kind: 'secretsManager'; readonly secretId: string };

const readApiKeySecretSource = (env: Environment): ApiKeySecretSource => {
  const value = variable(env, LOCAL_VARIABLES.apiKeySecret);
  if (value !== undefined) {
    if (value.length < 32)
      throw new SettingsError(LOCAL_VARIABLES.apiKeySecret, 'must be at least 32 characters');
    return { kind: 'value', value };
  }
  const secretId = variable(env, BINDINGS.apiKeySecret.secretId);
  if (secretId === undefined) {
    throw new SettingsError(
      BINDINGS.apiKeySecret.secretId,
      `is required (or ${LOCAL_VARIABLES.apiKeySecret} locally)`,
    );
  }
  return { kind: 'secretsManager', secretId };
};

/** What one API resource's Lambda is configured with: only what its wiring gives it. */
export interface ResourceConfig {
  readonly settings: Settings;
  readonly aws: AwsConfig;
  readonly tableName: string | undefined;
  readonly auth: AuthConfig | undefined;
  readonly apiKeySecret: ApiKeySecretSource | undefined;
  readonly bucketName: string | undefined;
  /** Cloud: the renderer Lambda's name. Unset: the local stack hands its renderer in. */
  readonly rendererFunctionName: string | undefined;
  /** Cloud: the webhook queue's URL. Unset: the local stack hands its queue in. */
  readonly webhookQueueUrl: string | undefined;
  readonly batchOutputQueueUrl: string | undefined;
  readonly deliveryQueueUrl: string | undefined;
  /** `WEBHOOK_EGRESS_ALLOW_HOSTS`: see LOCAL_VARIABLES.webhookAllowHosts. */
  readonly webhookAllowHosts: readonly string[];
  /** The render queue's URL (async renders). */
  readonly renderQueueUrl: string | undefined;
  /** Cloud: the usage event bus's name. Unset: the local stack hands its bus in. */
  readonly usageEventBusName: string | undefined;
}

/** The fallback function's configuration (wiring.ts FALLBACK_VARIABLES). */
export interface FallbackConfig {
  /** Where `GET /` redirects; absent: `/` answers 404 like any path the API does not have. */
  readonly dashboardUrl?: string;
}

export const readFallbackConfig = (env: Environment = lambdaEnvironment()): FallbackConfig => {
  const url = env[FALLBACK_VARIABLES.dashboardUrl]?.trim();
  if (!url) return {};
  if (!/^https?:\/\//.test(url)) throw new Error(`${FALLBACK_VARIABLES.dashboardUrl} must be an http(s) URL`);
  return { dashboardUrl: url };
};

export const readResourceConfig = (wiring: ResourceWiring, env: Environment): ResourceConfig => ({
  settings: settingsFromEnvironment(env),
  aws: readAwsConfig(env),
  tableName: wiring.table ? required(env, BINDINGS.table.tableName) : undefined,
  auth: wiring.userPool ? readAuthConfig(env) : undefined,
  apiKeySecret: wiring.apiKeySecret ? readApiKeySecretSource(env) : undefined,
  bucketName: wiring.pdfBucket ? required(env, BINDINGS.pdfBucket.bucketName) : undefined,
  rendererFunctionName: wiring.renderer ? variable(env, BINDINGS.renderer.functionName) : undefined,
  webhookQueueUrl: wiring.webhookQueue ? variable(env, BINDINGS.webhookQueue.queueUrl) : undefined,
  deliveryQueueUrl: wiring.deliveryQueue ? variable(env, BINDINGS.deliveryQueue.queueUrl) : undefined,
  batchOutputQueueUrl: wiring.batchOutputQueue
    ? variable(env, BINDINGS.batchOutputQueue.queueUrl)
    : undefined,
  webhookAllowHosts: wiring.webhookQueue ? hostPorts(env, LOCAL_VARIABLES.webhookAllowHosts) : [],
  renderQueueUrl: wiring.renderQueue ? required(env, BINDINGS.renderQueue.queueUrl) : undefined,
  usageEventBusName: wiring.usageEventBus ? variable(env, BINDINGS.usageEventBus.eventBusName) : undefined,
});

export interface RendererConfig {
  /** A system Chrome/Chromium to use instead of @sparticuz/chromium (machines where it cannot run). */
  readonly chromeExecutablePath: string | undefined;
  /**
   * `CHROMIUM_PACK_DIR`: the layer's Chromium, unpacked (/opt/chromium; functions/renderer/chromium-pack.ts),
   * used instead of @sparticuz/chromium's brotli files. Unset (locally): @sparticuz/chromium's own.
   */
  readonly chromiumPackDir: string | undefined;
  /**
   * `FETCHED_FONTS` (and `FETCHED_FONTS_BUCKET`): the fonts the layer leaves out, fetched from S3
   * on a page's first need (functions/renderer/fetched-fonts.ts). Unset: every font is local.
   */
  readonly fetchedFonts: FetchedFontsConfig | undefined;
  /**
   * `RENDERER_EGRESS_ALLOW_HOSTS`: comma-separated `host:port` pairs that pages may reach although
   * they are not public addresses. Tests and local fixtures only; never set in the cloud.
   */
  readonly egressAllowHosts: readonly string[];
  /**
   * `PDF_TAGGED`: print tagged (accessible) PDFs. Off by default, as in Chromium's own printing and
   * Gotenberg: tagging makes a 30-page table report ~17× larger (3.6 MB instead of 206 KB) and
   * ~70% slower to print. Deployments that need PDF/UA-style structure turn it on.
   */
  readonly taggedPdf: boolean;
  /**
   * `RENDERER_PROCESS_MODEL`: how Chromium runs. `multi` gives each render a browser context of its
   * own on a multi-process browser; `single` runs Chromium with `--single-process`, where a second
   * browser context kills the browser, so renders take turns in the default context and its data
   * is wiped before each one; `auto` (the default) proves at launch that `multi` can open an
   * isolated page and print, and falls back to `single` when it cannot (reports from Lambda show
   * multi-process Chromium failing there).
   */
  readonly processModel: ProcessModelSetting;
  /**
   * `RENDERER_MAX_PAGE_REQUESTS`: the requests one render's page may make (frames and workers
   * included); past it the render fails. Every request is a DevTools round trip on one
   * browser-wide session, so this caps what one page can cost the others.
   */
  readonly maxPageRequests: number;
  /**
   * `RENDERER_MAX_CONCURRENT_RENDERS`: renders one renderer runs at once; as many again wait in a
   * queue, and past that a render is refused at once with SERVICE_BUSY (503, Retry-After) instead
   * of every render slowing down together (functions/renderer/admission.ts). A renderer Lambda
   * runs one render per instance; the local stack's one renderer serves every request.
   * @default DEFAULT_MAX_CONCURRENT_RENDERS
   */
  readonly maxConcurrentRenders: number;
  /**
   * `FONTCONFIG_FILE`: the fontconfig file Chromium is launched with, which names the fonts it
   * prints with. The cloud sets the Chromium layer's (/opt/fonts/fonts.conf); the local stack
   * hands in the same set from node_modules. Unset: the machine's own fontconfig.
   */
  readonly fontconfigFile: string | undefined;
  /**
   * `RENDERER_MEMORY_BUDGET_MIB`: the memory the renderer may use (MiB); a render that would take
   * it over is stopped with PDF_TOO_COMPLEX (functions/renderer/memory-watch.ts). In Lambda it
   * defaults to the function's memory size (AWS_LAMBDA_FUNCTION_MEMORY_SIZE) and counts Node's
   * process with Chromium's; locally it counts Chromium's processes only (the Node process holds
   * the whole stack) and defaults to half the machine's memory.
   */
  readonly memoryBudget: MemoryBudget;
}

/** RendererConfig.fetchedFonts: where each family's files are. */
export interface FetchedFontsConfig {
  readonly bucket: string;
  /** By fontconfig family name ("Noto Sans JP"): its objects, and the file name each gets. */
  readonly families: Readonly<Record<string, readonly { readonly key: string; readonly file: string }[]>>;
}

const fetchedFonts = (env: Environment, name: string): FetchedFontsConfig | undefined => {
  const v = variable(env, name);
  if (v === undefined) return undefined;
  const bucket = variable(env, FETCHED_FONTS_VARIABLES.bucket);
  if (bucket === undefined)
    throw new SettingsError(FETCHED_FONTS_VARIABLES.bucket, `must be set with ${name}`);
  let families: unknown;
  try {
    families = JSON.parse(v);
  } catch {
    throw new SettingsError(name, 'is not JSON');
  }
  const valid =
    typeof families === 'object' &&
    families !== null &&
    Object.values(families).every(
      (files) =>
        Array.isArray(files) &&
        files.every(
          (f) =>
            typeof f?.key === 'string' &&
            typeof f?.file === 'string' &&
            /^[\w.-]+$/.test(f.file) &&
            !f.file.startsWith('.'),
        ),
    );
  if (!valid) throw new SettingsError(name, 'must map font families to [{ key, file }] lists');
  return { bucket, families: families as FetchedFontsConfig['families'] };
};

/** RendererConfig.memoryBudget. */
export interface MemoryBudget {
  /** The renderer's whole budget (MiB): the function's memory size in Lambda. */
  readonly mib: number;
  /** Whether Node's own process counts (a renderer Lambda's does; a local stack's holds the whole stack). */
  readonly includesNode: boolean;
}

export const PROCESS_MODEL_SETTINGS = ['auto', 'multi', 'single'] as const;
export type ProcessModelSetting = (typeof PROCESS_MODEL_SETTINGS)[number];

/**
 * See RendererConfig.maxConcurrentRenders: two per CPU core. Measured on the 2-core machine of the
 * local stack (one-page invoices, a warm browser): 1.78 renders/s at 1 at once, 3.06 at 2, 3.25
 * at 4 (p50 1.3 s), 2.95 at 8 (p50 2.4 s), 2.67 at 16 (p50 5.6 s): past two per core, more at
 * once only makes each render slower.
 */
export const DEFAULT_MAX_CONCURRENT_RENDERS = Math.max(2, 2 * availableParallelism());

/** See RendererConfig.maxPageRequests; README, Configuration. */
export const DEFAULT_MAX_PAGE_REQUESTS = 2000;

const boolean = (env: Environment, name: string, fallback: boolean): boolean => {
  const v = variable(env, name)?.toLowerCase();
  if (v === undefined) return fallback;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new SettingsError(name, `must be true or false, got "${v}"`);
};

const hostPorts = (env: Environment, name: string): string[] => {
  const v = variable(env, name);
  if (v === undefined) return [];
  return v.split(',').map((item) => {
    const hostPort = item.trim().toLowerCase();
    if (!/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):\d{1,5}$/.test(hostPort)) {
      throw new SettingsError(name, `must be comma-separated host:port pairs, got "${item.trim()}"`);
    }
    return hostPort;
  });
};

const processModel = (env: Environment, name: string): ProcessModelSetting => {
  const v = variable(env, name)?.toLowerCase();
  if (v === undefined) return 'auto';
  const known = PROCESS_MODEL_SETTINGS.find((m) => m === v);
  if (known === undefined) {
    throw new SettingsError(name, `must be one of ${PROCESS_MODEL_SETTINGS.join(', ')}, got "${v}"`);
  }
  return known;
};

const wholeNumber = (env: Environment, name: string, fallback: number, min: number, max: number): number => {
  const v = variable(env, name);
  if (v === undefined) return fallback;
  const n = /^\d+$/.test(v) ? Number(v) : Number.NaN;
  if (!(Number.isSafeInteger(n) && n >= min && n <= max)) {
    throw new SettingsError(name, `must be a whole number from ${min} to ${max}, got "${v}"`);
  }
  return n;
};

/** A file that must exist: a missing fontconfig file would leave Chromium printing without fonts. */
const existingFile = (env: Environment, name: string): string | undefined => {
  const v = variable(env, name);
  if (v !== undefined && !existsSync(v)) throw new SettingsError(name, `names no file: "${v}"`);
  return v;
};

export const readRendererConfig = (env: Environment = lambdaEnvironment()): RendererConfig => {
  // Typed by the config's fields: the compiler proves that each has its variable (functions/wiring.ts).
  const name: Readonly<Record<keyof RendererConfig, string>> = RENDERER_VARIABLES;
  return {
    chromeExecutablePath: variable(env, name.chromeExecutablePath),
    chromiumPackDir: variable(env, name.chromiumPackDir),
    egressAllowHosts: hostPorts(env, name.egressAllowHosts),
    taggedPdf: boolean(env, name.taggedPdf, false),
    processModel: processModel(env, name.processModel),
    maxPageRequests: wholeNumber(env, name.maxPageRequests, DEFAULT_MAX_PAGE_REQUESTS, 1, 1_000_000),
    maxConcurrentRenders: wholeNumber(
      env,
      name.maxConcurrentRenders,
      DEFAULT_MAX_CONCURRENT_RENDERS,
      1,
      1_000,
    ),
    fontconfigFile: existingFile(env, name.fontconfigFile),
    fetchedFonts: fetchedFonts(env, name.fetchedFonts),
    memoryBudget: memoryBudget(env, name.memoryBudget),
  };
};

const memoryBudget = (env: Environment, name: string): MemoryBudget => {
  const lambdaMiB = variable(env, 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE');
  const fallback = lambdaMiB !== undefined && /^\d+$/.test(lambdaMiB) ? Number(lambdaMiB) : undefined;
  const mib = wholeNumber(env, name, fallback ?? Math.floor(totalmem() / 2 / (1024 * 1024)), 256, 1_048_576);
  return { mib, includesNode: runsInLambda(env) };
};
