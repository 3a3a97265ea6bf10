/**
 * The errors the service answers with, by code (contract.md). Domain and core code throw
 * `ServiceError`; the HTTP layer (functions/core/responses.ts) alone gives each code its status
 * and headers. Anything else thrown becomes a generic 500 INTERNAL_ERROR.
 */

import type { RateLimitState } from '../accounts/usage.js';
import type { Diagnostics } from '../jobs/diagnostics.js';

export const ERROR_CODES = [
  'INVALID_JSON',
  'UNAUTHENTICATED',
  'INVALID_API_KEY',
  'INVALID_SESSION_TOKEN',
  'SESSION_REQUIRED',
  'NOT_FOUND',
  'PDF_JOB_NOT_FOUND',
  'PDF_TEMPLATE_NOT_FOUND',
  'WEBHOOK_ENDPOINT_NOT_FOUND',
  'BATCH_NOT_FOUND',
  'API_KEY_NOT_FOUND',
  'WEBHOOK_ENDPOINT_NOT_FOUND',
  'WEBHOOK_DELIVERY_NOT_FOUND',
  'SIGNING_KEY_NOT_FOUND',
  'ASSET_NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'API_KEY_LIMIT_REACHED',
  'WEBHOOK_LIMIT_REACHED',
  'SIGNING_KEY_LIMIT_REACHED',
  'ASSET_LIMIT_REACHED',
  'REQUEST_TOO_LARGE',
  'ASSET_TOO_LARGE',
  'ASSET_QUOTA_EXCEEDED',
  'PDF_TOO_LARGE',
  'VALIDATION_ERROR',
  'INVALID_HTML_CONTENT',
  'HTML_CONTENT_TOO_LARGE',
  'INVALID_HTML_TEMPLATE',
  'INVALID_PDF_OPTIONS',
  'INVALID_PAGE_LOAD_OPTIONS',
  'INVALID_E_INVOICE',
  'INVALID_SIGNING_KEY',
  'SIGNING_KEY_PASSPHRASE_INCORRECT',
  'SIGNING_CERTIFICATE_EXPIRED',
  'INVALID_ASSET',
  'PDF_TOO_MANY_PAGES',
  'PDF_TOO_COMPLEX',
  'INVALID_TEMPLATE_NAME',
  'WEBHOOK_URL_NOT_ALLOWED',
  'IDEMPOTENCY_KEY_REUSED',
  'USAGE_LIMIT_EXCEEDED',
  'PLAN_QUOTA_EXCEEDED',
  'CONCURRENCY_LIMIT_EXCEEDED',
  'INTERNAL_ERROR',
  'PDF_RENDERING_FAILED',
  'PDF_STORAGE_FAILED',
  'PDF_RENDERING_TIMEOUT',
  'PDF_RENDERING_INTERRUPTED',
  'SERVICE_BUSY',
  'INSUFFICIENT_STORAGE',
  // Issue 37 (queues, cancel, file names).
  'JOB_NOT_CANCELLABLE',
  'QUEUE_DEPTH_EXCEEDED',
  'INVALID_FILE_NAME',
  // Issue 36 (destinations).
  'DESTINATION_NOT_FOUND',
  'DESTINATION_LIMIT_REACHED',
  'INVALID_DESTINATION',
  'DESTINATION_UNREACHABLE',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorDetail {
  readonly field: string;
  readonly issue: string;
  /** INVALID_HTML_TEMPLATE: the template's line (1-based), when known. */
  readonly line?: number;
  /** INVALID_HTML_TEMPLATE: the undefined variable. */
  readonly name?: string;
  /** INVALID_E_INVOICE: the business rule (BR-CO-10) or schematron assertion the invoice broke. */
  readonly rule?: string;
  /** INVALID_E_INVOICE: where in the XML (an XPath, or a line for the XSD). */
  readonly location?: string;
}

export interface ServiceErrorOptions {
  readonly details?: readonly ErrorDetail[];
  readonly jobId?: string;
  /** A failed render: what happened inside its page (as on its job). */
  readonly diagnostics?: Diagnostics;
  /** When the caller may try again (a limit that resets). */
  readonly retryAfterSeconds?: number;
  /** The rate-limit window the refusal was counted in. */
  readonly rateLimit?: RateLimitState;
  /** The answer repeats an earlier request's (an idempotent replay). */
  readonly replayed?: boolean;
  readonly cause?: unknown;
}

/** An error that is deliberately exposed to the caller with its code and message. */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly details: readonly ErrorDetail[] | undefined;
  readonly jobId: string | undefined;
  readonly diagnostics: Diagnostics | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly rateLimit: RateLimitState | undefined;
  readonly replayed: boolean;

  constructor(code: ErrorCode, message: string, options: ServiceErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.details = options.details;
    this.jobId = options.jobId;
    this.diagnostics = options.diagnostics;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.rateLimit = options.rateLimit;
    this.replayed = options.replayed ?? false;
  }
}

/**
 * The names AWS's SDK gives a call that a dependency (DynamoDB, S3, Lambda…) did not answer in
 * time or refused for load: the service is overloaded, not broken, and the caller should retry.
 */
const OVERLOAD_NAMES = new Set([
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'ThrottlingException',
  'Throttling',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
  'SlowDown',
]);

export const isOverload = (e: unknown): boolean =>
  typeof e === 'object' && e !== null && OVERLOAD_NAMES.has((e as Error).name);

/** How soon a caller refused for the service's own overload may retry. */
export const OVERLOAD_RETRY_SECONDS = 2;

/** The answer to a call that the service's store or storage was too loaded to serve: 503, retry soon. */
export const overloaded = (cause: unknown, jobId?: string): ServiceError =>
  new ServiceError(
    'SERVICE_BUSY',
    `The service is busy${jobId ? `; job ${jobId} did not render and its render unit is given back` : ''}; retry in ${OVERLOAD_RETRY_SECONDS} s.`,
    { retryAfterSeconds: OVERLOAD_RETRY_SECONDS, cause, ...(jobId ? { jobId } : {}) },
  );
