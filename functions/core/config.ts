/**
 * The only module that reads `process.env`. Each consumer reads its section once, at cold start,
 * and a missing or malformed variable fails fast with the variable's name.
 */
import { readFileSync } from 'node:fs';

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

const env = (name: string): string | undefined => {
  const v = process.env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
};

const required = (name: string): string => {
  const v = env(name);
  if (v === undefined) throw new ConfigError(name, 'is required');
  return v;
};

const integer = (name: string, fallback: number, min = 0): number => {
  const v = env(name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min)
    throw new ConfigError(name, `must be an integer >= ${min}, got "${v}"`);
  return n;
};

import type { PlanLimits } from '../domain/usage.js';

export type Plan = PlanLimits;

export const DEFAULT_PLANS: Readonly<Record<string, Plan>> = {
  free: { monthlyRenders: 100, rendersPerMinute: 10 },
  starter: { monthlyRenders: 2000, rendersPerMinute: 60 },
  pro: { monthlyRenders: 25000, rendersPerMinute: 300 },
};

/** `PLANS`: JSON `{"free":{"monthlyRenders":100,"rendersPerMinute":10},...}`; must define `free`. */
export const parsePlans = (raw: string | undefined): Record<string, Plan> => {
  if (raw === undefined) return { ...DEFAULT_PLANS };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('PLANS', 'is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(
      'PLANS',
      'must be a JSON object of plan name to {monthlyRenders, rendersPerMinute}',
    );
  }
  const plans: Record<string, Plan> = {};
  for (const [name, value] of Object.entries(parsed)) {
    const p = value as Partial<Plan> | null;
    const ok = (n: unknown) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
    if (!p || !ok(p.monthlyRenders) || !ok(p.rendersPerMinute)) {
      throw new ConfigError('PLANS', `plan "${name}" needs integer monthlyRenders and rendersPerMinute`);
    }
    plans[name] = {
      monthlyRenders: p.monthlyRenders as number,
      rendersPerMinute: p.rendersPerMinute as number,
    };
  }
  if (!plans.free) throw new ConfigError('PLANS', 'must define the "free" plan (new accounts start on it)');
  return plans;
};

export interface Limits {
  readonly maxInlineHtmlBytes: number;
  readonly maxRenderedHtmlBytes: number;
  readonly maxVariablesBytes: number;
  readonly maxRequestBodyBytes: number;
  readonly maxTemplateHtmlBytes: number;
  readonly renderBudgetMs: number;
  readonly maxPdfBytes: number;
  readonly maxPdfPages: number;
  readonly downloadUrlTtlSeconds: number;
  readonly pdfRetentionDays: number;
}

const MiB = 1024 * 1024;

export const readLimits = (): Limits => ({
  maxInlineHtmlBytes: integer('MAX_INLINE_HTML_BYTES', 5 * MiB, 1),
  maxRenderedHtmlBytes: integer('MAX_RENDERED_HTML_BYTES', 10 * MiB, 1),
  maxVariablesBytes: integer('MAX_VARIABLES_BYTES', 1 * MiB, 1),
  maxRequestBodyBytes: integer('MAX_REQUEST_BODY_BYTES', 6 * MiB, 1),
  maxTemplateHtmlBytes: integer('MAX_TEMPLATE_HTML_BYTES', 1 * MiB, 1),
  renderBudgetMs: integer('RENDER_BUDGET_MS', 25_000, 1000),
  maxPdfBytes: integer('MAX_PDF_BYTES', 50 * MiB, 1),
  maxPdfPages: integer('MAX_PDF_PAGES', 1000, 1),
  downloadUrlTtlSeconds: integer('DOWNLOAD_URL_TTL_SECONDS', 900, 1),
  pdfRetentionDays: integer('PDF_RETENTION_DAYS', 30, 1),
});

export interface AwsConfig {
  readonly region: string;
  /** Local stack only: dynalite's endpoint. */
  readonly dynamoDbEndpoint: string | undefined;
  /** Local stack only: s3rver's endpoint (path-style addressing). */
  readonly s3Endpoint: string | undefined;
  /** Local tests only: an endpoint that answers Lambda Invoke (the bundle smoke test). */
  readonly lambdaEndpoint: string | undefined;
}

export const readAwsConfig = (): AwsConfig => ({
  region: env('AWS_REGION') ?? env('AWS_DEFAULT_REGION') ?? 'us-east-1',
  dynamoDbEndpoint: env('DYNAMODB_ENDPOINT'),
  s3Endpoint: env('S3_ENDPOINT'),
  lambdaEndpoint: env('LAMBDA_ENDPOINT'),
});

export interface AuthConfig {
  readonly userPoolId: string;
  readonly clientId: string;
  /** Local stack only: a JWKS file to give the verifier instead of fetching it over https. */
  readonly jwks: unknown | undefined;
}

export const readAuthConfig = (): AuthConfig => {
  const jwksFile = env('LOCAL_JWKS_FILE');
  let jwks: unknown;
  if (jwksFile !== undefined) {
    try {
      jwks = JSON.parse(readFileSync(jwksFile, 'utf8'));
    } catch (e) {
      throw new ConfigError('LOCAL_JWKS_FILE', `cannot be read as JSON: ${(e as Error).message}`);
    }
  }
  return { userPoolId: required('COGNITO_USER_POOL_ID'), clientId: required('COGNITO_CLIENT_ID'), jwks };
};

/**
 * The HMAC key behind API key digests: in the cloud a Secrets Manager secret (API_KEY_SECRET_ID),
 * read once per cold start; locally the value itself (API_KEY_SECRET), kept in DATA_DIR.
 */
export type ApiKeySecretSource =
  | { readonly kind: 'value'; readonly value: string }
  | { readonly kind: 'secretsManager'; readonly secretId: string };

const readApiKeySecretSource = (): ApiKeySecretSource => {
  const value = env('API_KEY_SECRET');
  if (value !== undefined) {
    if (value.length < 32) throw new ConfigError('API_KEY_SECRET', 'must be at least 32 characters');
    return { kind: 'value', value };
  }
  const secretId = env('API_KEY_SECRET_ID');
  if (secretId === undefined)
    throw new ConfigError('API_KEY_SECRET_ID', 'is required (or API_KEY_SECRET locally)');
  return { kind: 'secretsManager', secretId };
};

export interface ApiConfig {
  readonly apiKeySecret: ApiKeySecretSource;
  readonly tableName: string;
  readonly bucketName: string;
  /** Cloud: the renderer Lambda's name. Unset: render in-process (the local stack). */
  readonly rendererFunctionName: string | undefined;
  readonly plans: Record<string, Plan>;
  readonly limits: Limits;
  readonly aws: AwsConfig;
}

export const readApiConfig = (): ApiConfig => ({
  apiKeySecret: readApiKeySecretSource(),
  tableName: required('TABLE_NAME'),
  bucketName: required('BUCKET_NAME'),
  rendererFunctionName: env('RENDERER_FUNCTION_NAME'),
  plans: parsePlans(env('PLANS')),
  limits: readLimits(),
  aws: readAwsConfig(),
});

export interface RendererConfig {
  /** A system Chrome/Chromium to use instead of @sparticuz/chromium (machines where it cannot run). */
  readonly chromeExecutablePath: string | undefined;
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
}

const boolean = (name: string, fallback: boolean): boolean => {
  const v = env(name)?.toLowerCase();
  if (v === undefined) return fallback;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new ConfigError(name, `must be true or false, got "${v}"`);
};

const hostPorts = (name: string): string[] => {
  const v = env(name);
  if (v === undefined) return [];
  return v.split(',').map((item) => {
    const hostPort = item.trim().toLowerCase();
    if (!/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):\d{1,5}$/.test(hostPort)) {
      throw new ConfigError(name, `must be comma-separated host:port pairs, got "${item.trim()}"`);
    }
    return hostPort;
  });
};

export const readRendererConfig = (): RendererConfig => ({
  chromeExecutablePath: env('CHROME_EXECUTABLE_PATH'),
  egressAllowHosts: hostPorts('RENDERER_EGRESS_ALLOW_HOSTS'),
  taggedPdf: boolean('PDF_TAGGED', false),
});
