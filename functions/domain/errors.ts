/**
 * Every error the service answers with, and its HTTP status: the one table (contract.md).
 * Domain and core code throw `ServiceError`; only the HTTP error middleware turns it into a
 * response. Anything else thrown becomes a generic 500 INTERNAL_ERROR.
 */
export const errorStatus = {
  INVALID_JSON: 400,
  UNAUTHENTICATED: 401,
  INVALID_API_KEY: 401,
  INVALID_SESSION_TOKEN: 401,
  SESSION_REQUIRED: 403,
  NOT_FOUND: 404,
  PDF_JOB_NOT_FOUND: 404,
  PDF_TEMPLATE_NOT_FOUND: 404,
  API_KEY_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  API_KEY_LIMIT_REACHED: 409,
  REQUEST_TOO_LARGE: 413,
  PDF_TOO_LARGE: 413,
  VALIDATION_ERROR: 422,
  INVALID_HTML_CONTENT: 422,
  HTML_CONTENT_TOO_LARGE: 422,
  INVALID_HTML_TEMPLATE: 422,
  INVALID_PDF_OPTIONS: 422,
  INVALID_PAGE_LOAD_OPTIONS: 422,
  PDF_TOO_MANY_PAGES: 422,
  INVALID_TEMPLATE_NAME: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  USAGE_LIMIT_EXCEEDED: 429,
  PLAN_QUOTA_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  PDF_RENDERING_FAILED: 502,
  PDF_STORAGE_FAILED: 502,
  PDF_RENDERING_TIMEOUT: 504,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface ErrorDetail {
  readonly field: string;
  readonly issue: string;
  /** INVALID_HTML_TEMPLATE: the template's line (1-based), when known. */
  readonly line?: number;
  /** INVALID_HTML_TEMPLATE: the undefined variable. */
  readonly name?: string;
}

export interface ServiceErrorOptions {
  readonly details?: readonly ErrorDetail[];
  readonly jobId?: string;
  /** Extra response headers (Allow, Retry-After, WWW-Authenticate, RateLimit-*). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly cause?: unknown;
}

/** An error that is deliberately exposed to the caller with its code and message. */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: readonly ErrorDetail[] | undefined;
  readonly jobId: string | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, options: ServiceErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.status = errorStatus[code];
    this.details = options.details;
    this.jobId = options.jobId;
    this.headers = options.headers ?? {};
  }
}
