/**
 * The one settings schema: every plan, limit and duration the service can be configured with,
 * its default (the contract's), its bounds and the environment variable that carries it. The CDK
 * stack validates a deployment's settings with it at synth time and writes the variables; the
 * Lambdas and the local stack parse the same variables back with it. Like routes.ts and
 * table.ts, this is data both sides read, so it depends on nothing but zod.
 */
import { z } from 'zod';

const MiB = 1024 * 1024;

/** A plan that does not say how many renders it may run at once gets this many. */
export const DEFAULT_CONCURRENT_RENDERS = 5;

/** A plan that does not say how many async renders it may queue gets this many (issue 37). */
export const DEFAULT_QUEUED_RENDERS = 100;

export const planSchema = z.strictObject({
  monthlyRenders: z.number().int().min(0),
  rendersPerMinute: z.number().int().min(0),
  /** @default DEFAULT_CONCURRENT_RENDERS (left unset, so that a deployment's PLANS reads back as given) */
  concurrentRenders: z.number().int().min(1).optional(),
  /**
   * Renders past `monthlyRenders` counted as overage units instead of refused, at most `max_units`
   * of them a month (then 429 PLAN_QUOTA_EXCEEDED). Absent or not allowed: the quota is a wall.
   */
  overage: z.strictObject({ allowed: z.boolean(), max_units: z.number().int().min(0) }).optional(),
  /** What the plan costs a month, in `currency`: the estimated charge's base (issue 39). */
  monthly_price: z.number().min(0).optional(),
  /** What one overage unit costs, in `currency`. */
  unit_price_overage: z.number().min(0).optional(),
  /** ISO 4217 code of the prices. @default "USD" when a price is given */
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .optional(),
  /**
   * Async renders (POST /v1/pdf, not a batch's items) the account may have queued or running at
   * once; past it: 429 QUEUE_DEPTH_EXCEEDED. @default DEFAULT_QUEUED_RENDERS
   */
  queuedRenders: z.number().int().min(1).optional(),
});
/**
 * A plan's allowance: completed renders per calendar month (UTC), render requests per minute, and
 * renders running at once (past it: 429 CONCURRENCY_LIMIT_EXCEEDED, nothing held).
 */
export type Plan = z.output<typeof planSchema>;

export const DEFAULT_PLANS: Readonly<Record<string, Plan>> = {
  free: { monthlyRenders: 100, rendersPerMinute: 10, concurrentRenders: 2, queuedRenders: 20 },
  starter: { monthlyRenders: 2000, rendersPerMinute: 60, concurrentRenders: 5, queuedRenders: 100 },
  pro: { monthlyRenders: 25000, rendersPerMinute: 300, concurrentRenders: 10, queuedRenders: 500 },
};

/** Units a month past which a plan refuses: its quota, and its overage when allowed. */
export const unitCap = (plan: Plan): number =>
  plan.monthlyRenders + (plan.overage?.allowed ? plan.overage.max_units : 0);

/** The plan new accounts start on; every plan table must define it. */
export const DEFAULT_PLAN = 'free';

export const plansSchema = z
  .record(z.string().min(1), planSchema)
  .refine((plans) => Object.hasOwn(plans, DEFAULT_PLAN), {
    error: `must define the "${DEFAULT_PLAN}" plan (new accounts start on it)`,
  });

interface IntegerSetting {
  readonly variable: string;
  readonly default: number;
  readonly min: number;
  readonly max?: number;
}

/** SigV4 presigned URLs live at most 7 days. */
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

/** The integer settings. Each `default` is the contract's. */
export const INTEGER_SETTINGS = {
  maxInlineHtmlBytes: { variable: 'MAX_INLINE_HTML_BYTES', default: 5 * MiB, min: 1 },
  maxRenderedHtmlBytes: { variable: 'MAX_RENDERED_HTML_BYTES', default: 10 * MiB, min: 1 },
  maxVariablesBytes: { variable: 'MAX_VARIABLES_BYTES', default: 1 * MiB, min: 1 },
  maxRequestBodyBytes: { variable: 'MAX_REQUEST_BODY_BYTES', default: 6 * MiB, min: 1 },
  maxTemplateHtmlBytes: { variable: 'MAX_TEMPLATE_HTML_BYTES', default: 1 * MiB, min: 1 },
  renderBudgetMs: { variable: 'RENDER_BUDGET_MS', default: 25_000, min: 1000 },
  maxPdfBytes: { variable: 'MAX_PDF_BYTES', default: 50 * MiB, min: 1 },
  maxPdfPages: { variable: 'MAX_PDF_PAGES', default: 1000, min: 1 },
  downloadUrlTtlSeconds: {
    variable: 'DOWNLOAD_URL_TTL_SECONDS',
    default: 900,
    min: 1,
    max: MAX_PRESIGN_SECONDS,
  },
  pdfRetentionDays: { variable: 'PDF_RETENTION_DAYS', default: 30, min: 1 },
  /**
   * How long a usage ledger entry (one per billable job: issue 39) is kept after its job completed:
   * 13 months and a few days by default, so last year's same month can be billed again.
   */
  usageLedgerRetentionDays: { variable: 'USAGE_LEDGER_RETENTION_DAYS', default: 400, min: 1 },
  /**
   * How long a pending or rendering job stays its request's without a renewal (renewed every third
   * of it): past it, the sweeper fails the job with PDF_RENDERING_INTERRUPTED and gives its unit
   * back. Longer than a DynamoDB call's worst case (3 attempts of 2 s), so a live holder never loses it.
   */
  jobLeaseSeconds: { variable: 'JOB_LEASE_SECONDS', default: 30, min: 10, max: 900 },
  /** How often the local stack's sweeper runs (the cloud's runs every minute, EventBridge's finest rate). */
  sweepIntervalSeconds: { variable: 'SWEEP_INTERVAL_SECONDS', default: 5, min: 1, max: 3600 },
  /**
   * One webhook attempt, end to end (connect, send, the answer's first bytes): past it the attempt
   * failed. Short, so a slow receiver costs the sender little; receivers should answer at once and
   * do their work after.
   */
  webhookTimeoutMs: { variable: 'WEBHOOK_TIMEOUT_MS', default: 10_000, min: 100, max: 30_000 },
  /** The wait before a webhook's first retry; each later wait doubles (30 s, 1 min, 2 min, …). */
  webhookFirstRetrySeconds: { variable: 'WEBHOOK_FIRST_RETRY_SECONDS', default: 30, min: 1, max: 3600 },
  /**
   * A delivery is retried for at most this long after its first attempt (or its redelivery), then
   * marked failed: with the defaults, 12 attempts over about 17 hours.
   */
  webhookRetryWindowSeconds: {
    variable: 'WEBHOOK_RETRY_WINDOW_SECONDS',
    default: 86_400,
    min: 1,
    max: 3 * 86_400,
  },
  /**
   * A pending webhook delivery this long past its next attempt's time is taken for one whose
   * message never came (the process died between recording it and queueing it, or the message was
   * dead-lettered): the sweeper queues its attempt again. Longer than a message held back by the
   * webhook queue after a fault of ours (its visibility timeout); a late message is harmless all
   * the same (an attempt is recorded once).
   */
  webhookOverdueSeconds: { variable: 'WEBHOOK_OVERDUE_SECONDS', default: 900, min: 1, max: 86_400 },
  /**
   * An async job's lease while it waits in the render queue: longer than the queue can take to
   * reach it (a batch of 1,000 at the slowest rate). Past it the sweeper sends its message again
   * (a message lost, a consumer that died before claiming it). The local stack defaults to 900 s.
   */
  asyncQueueLeaseSeconds: { variable: 'ASYNC_QUEUE_LEASE_SECONDS', default: 21_600, min: 10, max: 1_209_600 },
  /**
   * Attempts an async render gets: a retryable failure (the renderer crashed, busy, a storage or
   * service fault) is retried until this many began; the render queue's maxReceiveCount.
   */
  asyncMaxAttempts: { variable: 'ASYNC_MAX_ATTEMPTS', default: 3, min: 1, max: 10 },
  /** An async retry waits this × 2^(attempt - 1) seconds (10 s, 20 s, 40 s, ...; at most 900). */
  asyncRetryBaseSeconds: { variable: 'ASYNC_RETRY_BASE_SECONDS', default: 10, min: 0, max: 900 },
  /**
   * Async renders consumed at once: the event source mapping's maximum concurrency in the cloud
   * (at least 2 there), the local poller's consumers.
   */
  asyncConcurrency: { variable: 'ASYNC_CONCURRENCY', default: 2, min: 1, max: 1000 },
  /**
   * An async render's budget, as RENDER_BUDGET_MS is a sync one's: page_load.timeout_ms is clamped
   * to it. No API Gateway answer waits for it; the consumer Lambda's timeout is sized from it.
   */
  asyncRenderBudgetMs: { variable: 'ASYNC_RENDER_BUDGET_MS', default: 600_000, min: 1000, max: 840_000 },
} as const satisfies Record<string, IntegerSetting>;

export type IntegerSettingName = keyof typeof INTEGER_SETTINGS;

export const PLANS_VARIABLE = 'PLANS';

/**
 * List endpoints page with `limit`/`offset`; DynamoDB cannot skip items, so a page at `offset`
 * reads `offset` items first. The offset is capped so that no request costs more than this.
 */
export const MAX_LIST_OFFSET = 10_000;

/**
 * How deeply `variables` may nest objects and arrays (the object itself is level 1). Templates
 * read a few levels; the bound keeps every recursive walk of the value (size checks, hashing,
 * templating) far from the stack's limit.
 */
export const MAX_VARIABLES_DEPTH = 64;

/**
 * A header's or footer's html (POST /v1/pdf `header_html`/`footer_html`, and a saved template's),
 * as given and after templating (UTF-8). Fixed rather than a setting: a header is a line or two
 * printed on every page, and Chromium lays it out again for each page, so a large one only makes
 * every page slower.
 */
export const MAX_HEADER_FOOTER_BYTES = 1 * MiB;

const integerSchema = (s: IntegerSetting) => {
  const range = `an integer from ${s.min} to ${s.max ?? Number.MAX_SAFE_INTEGER}`;
  return z
    .number({ error: `must be ${range}` })
    .int({ error: `must be ${range}` })
    .min(s.min, { error: `must be ${range}` })
    .max(s.max ?? Number.MAX_SAFE_INTEGER, { error: `must be ${range}` });
};

const integerShape = Object.fromEntries(
  Object.entries(INTEGER_SETTINGS).map(([name, s]) => [name, integerSchema(s).default(s.default)]),
) as { [K in IntegerSettingName]: z.ZodDefault<z.ZodNumber> };

export const settingsSchema = z.strictObject({
  plans: plansSchema.default({ ...DEFAULT_PLANS }),
  ...integerShape,
});

/** Every setting, defaults applied. */
export type Settings = z.output<typeof settingsSchema>;
/** Settings as a deployment gives them: each optional. */
export type SettingsInput = z.input<typeof settingsSchema>;
export type Limits = Omit<Settings, 'plans'>;

export class SettingsError extends Error {
  /** The setting's name (e.g. `limits.maxPdfPages`) or environment variable (e.g. `MAX_PDF_PAGES`). */
  readonly setting: string;
  constructor(setting: string, problem: string) {
    super(`${setting} ${problem}`);
    this.name = 'SettingsError';
    this.setting = setting;
  }
}

const firstIssue = (error: z.ZodError): { path: string; message: string } => {
  const issue = error.issues[0];
  return { path: issue?.path.map(String).join('.') ?? '', message: issue?.message ?? 'is invalid' };
};

/** Checks settings as given (names as in the schema); throws SettingsError naming the first bad one. */
export const checkSettings = (input: SettingsInput): Settings => {
  const result = settingsSchema.safeParse(input);
  if (result.success) return result.data;
  const { path, message } = firstIssue(result.error);
  throw new SettingsError(path, message);
};

/** The environment variables that carry `input`; settings left unset are not written. */
export const settingsEnvironment = (input: SettingsInput): Record<string, string> => {
  const checked = checkSettings(input);
  const environment: Record<string, string> = {};
  for (const [name, s] of Object.entries(INTEGER_SETTINGS) as [IntegerSettingName, IntegerSetting][]) {
    if (input[name] !== undefined) environment[s.variable] = String(checked[name]);
  }
  if (input.plans !== undefined) environment[PLANS_VARIABLE] = JSON.stringify(checked.plans);
  return environment;
};

export type Environment = Readonly<Record<string, string | undefined>>;

const variable = (env: Environment, name: string): string | undefined => {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
};

/** `PLANS`: JSON `{"free":{"monthlyRenders":100,"rendersPerMinute":10},...}`; must define `free`. */
export const plansFromVariable = (raw: string | undefined): Record<string, Plan> => {
  if (raw === undefined) return { ...DEFAULT_PLANS };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new SettingsError(PLANS_VARIABLE, 'is not valid JSON');
  }
  const result = plansSchema.safeParse(parsed);
  if (result.success) return result.data;
  const { path, message } = firstIssue(result.error);
  if (path === '') {
    throw new SettingsError(
      PLANS_VARIABLE,
      typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
        ? message
        : 'must be a JSON object of plan name to {monthlyRenders, rendersPerMinute}',
    );
  }
  const plan = path.split('.')[0];
  throw new SettingsError(
    PLANS_VARIABLE,
    `plan "${plan}" needs integer monthlyRenders and rendersPerMinute (and, optionally, concurrentRenders of 1 or more)`,
  );
};

/** Reads every setting from environment variables (unset ones take their defaults). */
export const settingsFromEnvironment = (env: Environment): Settings => {
  const input: Record<string, unknown> = { plans: plansFromVariable(variable(env, PLANS_VARIABLE)) };
  for (const [name, s] of Object.entries(INTEGER_SETTINGS) as [IntegerSettingName, IntegerSetting][]) {
    const raw = variable(env, s.variable);
    if (raw === undefined) continue;
    const value = Number(raw);
    const parsed = integerSchema(s).safeParse(value);
    if (!/^-?\d+$/.test(raw) || !parsed.success) {
      throw new SettingsError(
        s.variable,
        `must be an integer from ${s.min} to ${s.max ?? Number.MAX_SAFE_INTEGER}, got "${raw}"`,
      );
    }
    input[name] = value;
  }
  return settingsSchema.parse(input);
};

/**
 * Template writes (POST and PATCH /v1/templates) an account may make per minute, on every plan:
 * each one is parsed on the API's thread, and a template of up to 1 MiB costs real time there.
 */
export const TEMPLATE_WRITES_PER_MINUTE = 60;

/**
 * Webhook sends on request (POST .../test, .../redeliver) a minute: to one endpoint, and from one
 * account to all its endpoints. Events of renders and batches are not counted: they follow work.
 */
export const WEBHOOK_SENDS_PER_MINUTE = { endpoint: 5, account: 20 } as const;

/**
 * Requests of a rate-limited route refused before any work (401, 403, 400, 413, 422: issue 40) a
 * minute, per account and per client address: they do not spend the plan's render window, so a
 * typing mistake costs nothing, but a flood of them is bounded here (higher than any plan's
 * render rate on the free plan, and the address's higher than the account's: several accounts
 * may share an office's address). Past either, 429 USAGE_LIMIT_EXCEEDED.
 */
export const REFUSED_REQUESTS_PER_MINUTE = { account: 120, ip: 600 } as const;

/**
 * Previews (POST /v1/previews, the dashboard's editor) per account: a minute's and a UTC day's.
 * A preview charges no unit, so these and its PREVIEW mark on every page are what keep it from
 * being a free render (docs/api/previews.md).
 */
export const PREVIEWS_PER_ACCOUNT = { minute: 30, day: 600 } as const;

/** The editor's variable checks (POST /v1/previews/variables) a minute, per account: a parse each. */
export const VARIABLE_CHECKS_PER_MINUTE = 120;
