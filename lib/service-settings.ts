/**
 * The deployment's service settings (plans, limits, render budget, retention): checked at synth
 * time so a bad value fails `cdk synth` with its name instead of a cold start in production, and
 * turned into the environment variables functions/core/config.ts reads.
 *
 * Settings left unset are not written: the handlers' own defaults (the contract's) apply, so
 * there is one place that holds them. The exceptions below are settings the infrastructure
 * itself depends on (timeouts, the bucket lifecycle), which the stack therefore always sets.
 */

export interface PlanSettings {
  readonly monthlyRenders: number;
  readonly rendersPerMinute: number;
}

/** Byte and page limits; each `@default` is the contract's. */
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
   * Days a PDF is kept; the bucket's lifecycle rule deletes it afterwards.
   * @default 30 days
   */
  readonly pdfRetentionDays?: number;
}

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

/** SigV4 presigned URLs live at most 7 days. */
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

export interface ResolvedSettings {
  readonly renderBudgetMs: number;
  readonly downloadUrlTtlSeconds: number;
  readonly pdfRetentionDays: number;
  /** The renderer's Lambda timeout: the budget plus its own start and upload. */
  readonly rendererTimeoutSeconds: number;
  /** Environment variables for every API function. */
  readonly environment: Readonly<Record<string, string>>;
}

const checkInteger = (setting: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ServiceSettingsError(setting, `must be an integer from ${min} to ${max}, got ${value}`);
  }
  return value;
};

const LIMIT_VARIABLES: Readonly<Record<keyof LimitSettings, string>> = {
  maxInlineHtmlBytes: 'MAX_INLINE_HTML_BYTES',
  maxRenderedHtmlBytes: 'MAX_RENDERED_HTML_BYTES',
  maxVariablesBytes: 'MAX_VARIABLES_BYTES',
  maxRequestBodyBytes: 'MAX_REQUEST_BODY_BYTES',
  maxTemplateHtmlBytes: 'MAX_TEMPLATE_HTML_BYTES',
  maxPdfBytes: 'MAX_PDF_BYTES',
  maxPdfPages: 'MAX_PDF_PAGES',
};

export const resolveSettings = (settings: ServiceSettings = {}): ResolvedSettings => {
  const renderBudgetMs = checkInteger(
    'renderBudgetMs',
    settings.renderBudgetMs ?? 25_000,
    1000,
    MAX_RENDER_BUDGET_MS,
  );
  const downloadUrlTtlSeconds = checkInteger(
    'downloadUrlTtlSeconds',
    settings.downloadUrlTtlSeconds ?? 900,
    1,
    MAX_PRESIGN_SECONDS,
  );
  const pdfRetentionDays = checkInteger('pdfRetentionDays', settings.pdfRetentionDays ?? 30, 1);
  const environment: Record<string, string> = {
    RENDER_BUDGET_MS: String(renderBudgetMs),
    DOWNLOAD_URL_TTL_SECONDS: String(downloadUrlTtlSeconds),
    PDF_RETENTION_DAYS: String(pdfRetentionDays),
    MAX_RENDERED_HTML_BYTES: String(CLOUD_MAX_RENDERED_HTML_BYTES),
  };
  for (const [key, variable] of Object.entries(LIMIT_VARIABLES) as [keyof LimitSettings, string][]) {
    const value = settings.limits?.[key];
    if (value === undefined) continue;
    const max = key === 'maxRenderedHtmlBytes' ? CLOUD_MAX_RENDERED_HTML_BYTES : undefined;
    environment[variable] = String(checkInteger(`limits.${key}`, value, 1, max));
  }
  if (settings.plans !== undefined) {
    if (!settings.plans.free) throw new ServiceSettingsError('plans', 'must define the "free" plan');
    const plans: Record<string, PlanSettings> = {};
    for (const [name, plan] of Object.entries(settings.plans)) {
      plans[name] = {
        monthlyRenders: checkInteger(`plans.${name}.monthlyRenders`, plan.monthlyRenders, 0),
        rendersPerMinute: checkInteger(`plans.${name}.rendersPerMinute`, plan.rendersPerMinute, 0),
      };
    }
    environment.PLANS = JSON.stringify(plans);
  }
  return {
    renderBudgetMs,
    downloadUrlTtlSeconds,
    pdfRetentionDays,
    rendererTimeoutSeconds: Math.ceil(renderBudgetMs / 1000) + RENDERER_OVERHEAD_SECONDS,
    environment,
  };
};
