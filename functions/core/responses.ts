/**
 * Errors and results as HTTP: the status of every error code (the one table, contract.md), the
 * headers some codes carry, and the contract's error body. Anything not deliberately exposed is
 * a generic 500 that is logged and never shown.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { RateLimitState } from '../domain/accounts/usage.js';
import { type ErrorCode, isOverload, overloaded, ServiceError } from '../domain/common/errors.js';
import { stringifyWithJsonText } from '../domain/common/json-text.js';
import { logger } from './logger.js';

export type Result = APIGatewayProxyStructuredResultV2;
export type Headers = Readonly<Record<string, string>>;

export const errorStatus = {
  INVALID_JSON: 400,
  UNAUTHENTICATED: 401,
  INVALID_API_KEY: 401,
  INVALID_SESSION_TOKEN: 401,
  SESSION_REQUIRED: 403,
  NOT_FOUND: 404,
  PDF_JOB_NOT_FOUND: 404,
  PDF_TEMPLATE_NOT_FOUND: 404,
  BATCH_NOT_FOUND: 404,
  API_KEY_NOT_FOUND: 404,
  WEBHOOK_ENDPOINT_NOT_FOUND: 404,
  WEBHOOK_DELIVERY_NOT_FOUND: 404,
  SIGNING_KEY_NOT_FOUND: 404,
  ASSET_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  API_KEY_LIMIT_REACHED: 409,
  WEBHOOK_LIMIT_REACHED: 409,
  SIGNING_KEY_LIMIT_REACHED: 409,
  ASSET_LIMIT_REACHED: 409,
  REQUEST_TOO_LARGE: 413,
  PDF_TOO_LARGE: 413,
  ASSET_TOO_LARGE: 413,
  ASSET_QUOTA_EXCEEDED: 413,
  VALIDATION_ERROR: 422,
  INVALID_HTML_CONTENT: 422,
  HTML_CONTENT_TOO_LARGE: 422,
  INVALID_HTML_TEMPLATE: 422,
  INVALID_PDF_OPTIONS: 422,
  INVALID_PAGE_LOAD_OPTIONS: 422,
  INVALID_E_INVOICE: 422,
  INVALID_SIGNING_KEY: 422,
  SIGNING_KEY_PASSPHRASE_INCORRECT: 422,
  SIGNING_CERTIFICATE_EXPIRED: 422,
  INVALID_ASSET: 422,
  PDF_TOO_MANY_PAGES: 422,
  /** The document needs more memory than the renderer has: the document's doing, not retried. */
  PDF_TOO_COMPLEX: 422,
  INVALID_TEMPLATE_NAME: 422,
  WEBHOOK_URL_NOT_ALLOWED: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  USAGE_LIMIT_EXCEEDED: 429,
  PLAN_QUOTA_EXCEEDED: 429,
  CONCURRENCY_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  PDF_RENDERING_FAILED: 502,
  PDF_STORAGE_FAILED: 502,
  PDF_RENDERING_TIMEOUT: 504,
  /** The render's holder stopped or timed out (the sweeper failed its job): the service's fault, retryable. */
  PDF_RENDERING_INTERRUPTED: 503,
  SERVICE_BUSY: 503,
  INSUFFICIENT_STORAGE: 507,
  // Issue 37.
  /** The job is rendering or ended already (or a sync render, which ends with its request). */
  JOB_NOT_CANCELLABLE: 409,
  /** The account's queued async renders are at its plan's queue depth: retry once some ended. */
  QUEUE_DEPTH_EXCEEDED: 429,
  INVALID_FILE_NAME: 422,
  // Issue 36.
  DESTINATION_NOT_FOUND: 404,
  DESTINATION_LIMIT_REACHED: 409,
  INVALID_DESTINATION: 422,
  /** Creating it assumed the role and wrote a probe object: which step the customer's side refused. */
  DESTINATION_UNREACHABLE: 422,
} as const satisfies Record<ErrorCode, number>;

export const rateLimitHeaders = (state: RateLimitState): Record<string, string> => ({
  'RateLimit-Limit': String(state.limit),
  'RateLimit-Remaining': String(state.remaining),
  'RateLimit-Reset': String(state.resetSeconds),
});

/** On an idempotent replay's answer, success or error (as Stripe and the IETF draft name it). */
export const REPLAYED: Headers = { 'Idempotent-Replayed': 'true' };

/** RFC 6750: a missing credential gets the bare challenge, a bad one says why. */
const CHALLENGES: Partial<Record<ErrorCode, string>> = {
  UNAUTHENTICATED: 'Bearer',
  INVALID_API_KEY: 'Bearer error="invalid_token"',
  INVALID_SESSION_TOKEN: 'Bearer error="invalid_token"',
};

const errorHeaders = (error: ServiceError): Record<string, string> => {
  const challenge = CHALLENGES[error.code];
  return {
    ...(error.rateLimit ? rateLimitHeaders(error.rateLimit) : {}),
    ...(error.retryAfterSeconds !== undefined ? { 'Retry-After': String(error.retryAfterSeconds) } : {}),
    ...(challenge ? { 'WWW-Authenticate': challenge } : {}),
    ...(error.replayed ? REPLAYED : {}),
  };
};

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * On every answer: bodies are JSON and only JSON (never sniffed into HTML), and no cache may keep
 * one (they carry presigned links, account data, or errors that echo input).
 */
export const SAFE_RESPONSE_HEADERS: Headers = {
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
};

export const jsonResult = (
  status: number,
  body: unknown,
  requestId: string,
  headers: Headers = {},
): Result => ({
  statusCode: status,
  headers: {
    ...(body === undefined ? {} : { 'Content-Type': JSON_TYPE }),
    ...headers,
    ...SAFE_RESPONSE_HEADERS,
    'X-Request-Id': requestId,
  },
  // JsonText (a template's sample data) is written as the caller sent it.
  ...(body === undefined ? {} : { body: stringifyWithJsonText(body) }),
});

/** The contract's error body for `error`; anything not deliberately exposed is a generic 500. */
export const errorResult = (error: unknown, requestId: string, headers: Headers = {}): Result => {
  if (error instanceof ServiceError) {
    return jsonResult(
      errorStatus[error.code],
      {
        error: {
          code: error.code,
          message: error.message,
          ...(error.details ? { details: error.details } : {}),
          request_id: requestId,
          ...(error.jobId ? { job_id: error.jobId } : {}),
          ...(error.diagnostics ? { diagnostics: error.diagnostics } : {}),
        },
      },
      requestId,
      { ...headers, ...errorHeaders(error) },
    );
  }
  // A store or storage call that timed out or was throttled: back-pressure, not a fault.
  if (isOverload(error)) {
    logger.warn('dependency overloaded', { requestId, error: error as Error });
    return errorResult(overloaded(error), requestId, headers);
  }
  logger.error('unhandled error', { requestId, error: error as Error });
  return jsonResult(
    500,
    { error: { code: 'INTERNAL_ERROR', message: 'An internal error occurred', request_id: requestId } },
    requestId,
    headers,
  );
};
