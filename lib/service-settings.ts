/**
 * The deployment's service settings (plans, limits, render budget, retention): checked at synth
 * time so a bad value fails `cdk synth` with its name instead of a cold start in production, and
 * turned into the environment variables functions/core/config.ts reads.
 *
 * The settings, their defaults, bounds and variable names are those of functions/settings.ts;
 * this adds what only the cloud imposes (API Gateway's 30 s, the renderer's memory). Settings
 * left unset are not written, so the handlers' defaults apply, except those the infrastructure
 * itself depends on (timeouts, the bucket lifecycle), which the stack always sets.
 */
import {
  renderWorkerTimeoutSeconds as consumerTimeout,
  RENDER_RUN_SLICE_MS,
  RENDER_WORKER_OVERHEAD_SECONDS,
} from '../functions/consumers.js';
import {
  checkSettings,
  INTEGER_SETTINGS,
  type Plan,
  type Settings,
  SettingsError,
  type SettingsInput,
  settingsEnvironment,
} from '../functions/settings.js';

export type PlanSettings = Plan;

/** Byte and page limits; each `@default` is the contract's (functions/settings.ts). */
export interface LimitSettings {
  /** @default 5 MiB */
  readonly maxInlineHtmlBytes?: number;
  /** @default 5 MiB in the cloud (see CLOUD_MAX_RENDERED_HTML_BYTES) */
  readonly maxRenderedHtmlBytes?: number;
  /** @default 1 MiB */
  readonly maxVariablesBytes?: number;
  /** @default 6 MiB */
  readonly maxRequestBodyBytes?: number;
  /** @default 1 MiB */
  readonly maxTemplateHtmlBytes?: number;
  /** @default 50 MiB */
  readonly maxPdfBytes?: number;
  /** @default 1000 */
  readonly maxPdfPages?: number;
}

export interface ServiceSettings {
  /**
   * Plans by name; must define `free` (new accounts start on it).
   * @default free 100/10, starter 2,000/60, pro 25,000/300 (monthly renders / renders per minute)
   */
  readonly plans?: Readonly<Record<string, PlanSettings>>;
  readonly limits?: LimitSettings;
  /**
   * The server's render budget: a request's page_load.timeout_ms is clamped to it.
   * @default 25,000 ms, the most that fits behind API Gateway's 30 s limit
   */
  readonly renderBudgetMs?: number;
  /**
   * Lifetime of presigned download links.
   * @default 900 seconds
   */
  readonly downloadUrlTtlSeconds?: number;
  /**
   * Days a PDF is kept after its job's creation; the bucket's lifecycle rule deletes it afterwards,
   * and the API stops linking it then. Job records are kept twice as long (DynamoDB TTL).
   * @default 30 days
   */
  readonly pdfRetentionDays?: number;
  /**
   * Days a usage ledger entry (one per billable job, issue 39) is kept after its job completed
   * (DynamoDB TTL); the operator's billing reads it (`npm run admin -- usage`).
   * @default 400 days (13 months and more)
   */
  readonly usageLedgerRetentionDays?: number;
  /**
   * Async renders (POST /v1/pdf with "async": true): their budget, attempts, retry backoff, how long
   * a job may wait in the queue, and how many the consumer runs at once.
   * @default budget 600,000 ms, 3 attempts, 10 s × 2^n backoff, 6 h in the queue, 10 at once
   */
  readonly asyncRenders?: AsyncRenderSettings;
}

export interface AsyncRenderSettings {
  /** page_load.timeout_ms is clamped to it; the consumer's timeout is sized from it (at most 840,000). */
  readonly renderBudgetMs?: number;
  readonly maxAttempts?: number;
  readonly retryBaseSeconds?: number;
  readonly queueLeaseSeconds?: number;
  /** The event source mapping's maximum concurrency (2-1000): consumers (and Chromium instances) at once. */
  readonly concurrency?: number;
}

export { RENDER_WORKER_OVERHEAD_SECONDS } from '../functions/consumers.js';
/** Lambda's longest timeout. */
export const LAMBDA_MAX_TIMEOUT_SECONDS = 900;
/** The event source mapping's concurrency in the cloud unless set: ten renders of large documents at once. */
export const DEFAULT_CLOUD_ASYNC_CONCURRENCY = 10;

export class ServiceSettingsError extends Error {
  constructor(setting: string, problem: string) {
    super(`service settings: ${setting} ${problem}`);
    this.name = 'ServiceSettingsError';
  }
}

const MiB = 1024 * 1024;

/**
 * API Gateway HTTP APIs end every integration at 30 s. The pdf function waits for the renderer,
 * so a render (page load, waits and printing, all within the budget) plus the renderer's own
 * start and upload (RENDERER_OVERHEAD_SECONDS) plus the pdf function's work must fit in it.
 */
export const API_GATEWAY_LIMIT_SECONDS = 30;
export const PDF_FUNCTION_TIMEOUT_SECONDS = 29;
/**
 * The renderer's time outside the budget. A cold start inflates Chromium into /tmp (1.2 s for
 * 200 MB, measured on 2 cores) and launches it (0.6 s to a first PDF); the upload of a PDF of up
 * to 50 MiB to S3 in-region takes about a second.
 */
export const RENDERER_OVERHEAD_SECONDS = 3;
export const MAX_RENDER_BUDGET_MS = (PDF_FUNCTION_TIMEOUT_SECONDS - 1 - RENDERER_OVERHEAD_SECONDS) * 1000;

/**
 * The cloud's limit on HTML after templating: 5 MiB instead of the contract's 10 MiB, and a larger
 * setting is refused. It was set because the HTML travelled to the renderer inside a synchronous
 * invoke (6 MB at most); it no longer does (the renderer executes the template and enforces the
 * limit, the invoke carries the template and its variables). It stays because the renderer's
 * memory (lib/renderer-function.ts) was sized by measuring up to 5 MiB of HTML: raise it together
 * with a measurement at 10 MiB.
 */
export const CLOUD_MAX_RENDERED_HTML_BYTES = 5 * MiB;

export interface ResolvedSettings {
  readonly renderBudgetMs: number;
  readonly downloadUrlTtlSeconds: number;
  readonly pdfRetentionDays: number;
  /** The renderer's Lambda timeout: the budget plus its own start and upload. */
  readonly rendererTimeoutSeconds: number;
  /** The render queue consumer's timeout: the async budget plus its overhead, at most Lambda's 900 s. */
  readonly renderWorkerTimeoutSeconds: number;
  /** The async renderer's timeout: the async budget plus its own start and upload, within the consumer's. */
  readonly asyncRendererTimeoutSeconds: number;
  /** Attempts of an async render: the render queue's maxReceiveCount. */
  readonly asyncMaxAttempts: number;
  /** The event source mapping's maximum concurrency. */
  readonly asyncConcurrency: number;
  /** The settings' environment variables, for the functions that read them. */
  readonly environment: Readonly<Record<string, string>>;
  /** Every setting, checked, defaults applied: what the functions read back from `environment`. */
  readonly settings: Settings;
}

const LIMIT_NAMES: ReadonlySet<string> = new Set<keyof LimitSettings>([
  'maxInlineHtmlBytes',
  'maxRenderedHtmlBytes',
  'maxVariablesBytes',
  'maxRequestBodyBytes',
  'maxTemplateHtmlBytes',
  'maxPdfBytes',
  'maxPdfPages',
]);
/** `limits.maxPdfPages` as the stack props name it, `maxPdfPages` as functions/settings.ts does. */
const propName = (setting: string): string => (LIMIT_NAMES.has(setting) ? `limits.${setting}` : setting);

const cloudBound = (setting: string, value: number, max: number, why: string): number => {
  if (value > max) throw new ServiceSettingsError(setting, `must be at most ${max} (${why}), got ${value}`);
  return value;
};

export const resolveSettings = (settings: ServiceSettings = {}): ResolvedSettings => {
  const input: SettingsInput = {
    ...settings.limits,
    ...(settings.plans === undefined ? {} : { plans: { ...settings.plans } }),
    // The infrastructure depends on these (timeouts, the bucket lifecycle), so they are always written.
    renderBudgetMs: settings.renderBudgetMs ?? INTEGER_SETTINGS.renderBudgetMs.default,
    downloadUrlTtlSeconds: settings.downloadUrlTtlSeconds ?? INTEGER_SETTINGS.downloadUrlTtlSeconds.default,
    pdfRetentionDays: settings.pdfRetentionDays ?? INTEGER_SETTINGS.pdfRetentionDays.default,
    maxRenderedHtmlBytes: settings.limits?.maxRenderedHtmlBytes ?? CLOUD_MAX_RENDERED_HTML_BYTES,
    ...(settings.asyncRenders?.renderBudgetMs !== undefined
      ? { asyncRenderBudgetMs: settings.asyncRenders.renderBudgetMs }
      : {}),
    ...(settings.asyncRenders?.maxAttempts !== undefined
      ? { asyncMaxAttempts: settings.asyncRenders.maxAttempts }
      : {}),
    ...(settings.asyncRenders?.retryBaseSeconds !== undefined
      ? { asyncRetryBaseSeconds: settings.asyncRenders.retryBaseSeconds }
      : {}),
    ...(settings.asyncRenders?.queueLeaseSeconds !== undefined
      ? { asyncQueueLeaseSeconds: settings.asyncRenders.queueLeaseSeconds }
      : {}),
    asyncConcurrency: settings.asyncRenders?.concurrency ?? DEFAULT_CLOUD_ASYNC_CONCURRENCY,
    ...(settings.usageLedgerRetentionDays !== undefined
      ? { usageLedgerRetentionDays: settings.usageLedgerRetentionDays }
      : {}),
  };
  let environment: Record<string, string>;
  let checked: Settings;
  try {
    checked = checkSettings(input);
    environment = settingsEnvironment(input);
  } catch (e) {
    if (e instanceof SettingsError)
      throw new ServiceSettingsError(propName(e.setting), e.message.slice(e.setting.length + 1));
    throw e;
  }
  cloudBound('renderBudgetMs', checked.renderBudgetMs, MAX_RENDER_BUDGET_MS, "API Gateway's 30 s limit");
  cloudBound(
    'limits.maxRenderedHtmlBytes',
    checked.maxRenderedHtmlBytes,
    CLOUD_MAX_RENDERED_HTML_BYTES,
    "the renderer's memory was sized for it",
  );
  const renderWorkerTimeoutSeconds = consumerTimeout(checked);
  cloudBound(
    'asyncRenders.renderBudgetMs',
    renderWorkerTimeoutSeconds,
    LAMBDA_MAX_TIMEOUT_SECONDS,
    `Lambda's 900 s timeout, less ${RENDER_WORKER_OVERHEAD_SECONDS} s for the consumer's own work`,
  );
  if (checked.asyncConcurrency < 2) {
    throw new ServiceSettingsError(
      'asyncRenders.concurrency',
      'must be at least 2 (the event source mapping’s least)',
    );
  }
  return {
    renderWorkerTimeoutSeconds,
    // A batch run (issue 43) starts no item past its slice, and each item has the budget.
    asyncRendererTimeoutSeconds:
      Math.ceil((checked.asyncRenderBudgetMs + RENDER_RUN_SLICE_MS) / 1000) + RENDERER_OVERHEAD_SECONDS,
    asyncMaxAttempts: checked.asyncMaxAttempts,
    asyncConcurrency: checked.asyncConcurrency,
    renderBudgetMs: checked.renderBudgetMs,
    downloadUrlTtlSeconds: checked.downloadUrlTtlSeconds,
    pdfRetentionDays: checked.pdfRetentionDays,
    rendererTimeoutSeconds: Math.ceil(checked.renderBudgetMs / 1000) + RENDERER_OVERHEAD_SECONDS,
    environment,
    settings: checked,
  };
};
