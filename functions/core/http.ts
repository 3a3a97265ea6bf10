/**
 * The shared HTTP middleware stack (middy). A route file states its route key, how to read its
 * body and query, and makes one call into the domain; this stack does the rest, in the contract's
 * order: request id → credentials (401) → credential type (403) → body size and JSON (413/400)
 * → route hook (the render rate limit, 429) → validation (422) → handler. Errors become answers
 * here and only here: a ServiceError with its code, anything else a generic 500.
 */
import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { ServiceError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { findRoute } from '../routes.js';
import type { Authenticate } from './auth.js';
import { logger } from './logger.js';

export type Event = APIGatewayProxyEventV2;
export type Result = APIGatewayProxyStructuredResultV2;
export type Query = Readonly<Record<string, string | undefined>>;

export interface ApiRequest<B, Q> {
  readonly requestId: string;
  readonly principal: Principal;
  readonly body: B;
  readonly query: Q;
  readonly pathParameters: Readonly<Record<string, string | undefined>>;
  /** Lower-cased names, as API Gateway v2 delivers them. */
  readonly headers: Readonly<Record<string, string | undefined>>;
}

export interface ApiResponse {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface RouteSpec<B, Q> {
  /** Must name an entry of the route table: its credential kinds are enforced. */
  readonly routeKey: string;
  /** Reads the parsed JSON object body (throwing 422s); routes without it ignore any body. */
  readonly body?: (body: Record<string, unknown>) => B;
  readonly query?: (query: Query) => Q;
  /** Runs after credentials and body parsing, before validation; returns headers for the answer. */
  readonly beforeValidation?: (principal: Principal) => Promise<Readonly<Record<string, string>>>;
}

export interface HttpDeps {
  readonly authenticate: Authenticate;
  readonly maxRequestBodyBytes: number;
}

interface State {
  requestId: string;
  principal?: Principal;
  body?: unknown;
  headers: Record<string, string>;
}

const JSON_TYPE = 'application/json; charset=utf-8';

type ApiContext = Context & { api?: State };
const state = (request: { context: Context }): State => (request.context as ApiContext).api as State;

export const jsonResult = (
  status: number,
  body: unknown,
  requestId: string,
  headers: Readonly<Record<string, string>> = {},
): Result => ({
  statusCode: status,
  headers: {
    ...(body === undefined ? {} : { 'Content-Type': JSON_TYPE }),
    ...headers,
    'X-Request-Id': requestId,
  },
  ...(body === undefined ? {} : { body: JSON.stringify(body) }),
});

/** The contract's error body for `error`; anything not deliberately exposed is a generic 500. */
export const errorResult = (
  error: unknown,
  requestId: string,
  headers: Readonly<Record<string, string>> = {},
) => {
  if (error instanceof ServiceError) {
    return jsonResult(
      error.status,
      {
        error: {
          code: error.code,
          message: error.message,
          ...(error.details ? { details: error.details } : {}),
          request_id: requestId,
          ...(error.jobId ? { job_id: error.jobId } : {}),
        },
      },
      requestId,
      { ...headers, ...error.headers },
    );
  }
  logger.error('unhandled error', { requestId, error: error as Error });
  return jsonResult(
    500,
    { error: { code: 'INTERNAL_ERROR', message: 'An internal error occurred', request_id: requestId } },
    requestId,
    headers,
  );
};

const requestIdOf = (event: Event, context: Context) =>
  event.requestContext?.requestId ?? context.awsRequestId ?? crypto.randomUUID();

/** Request id first, error mapping last: every answer carries X-Request-Id. */
const responder = (): MiddlewareObj<Event, Result> => ({
  before: (request) => {
    const requestId = requestIdOf(request.event, request.context);
    (request.context as ApiContext).api = { requestId, headers: {} };
    logger.appendKeys({ requestId, routeKey: request.event.routeKey });
  },
  onError: (request) => {
    const s = (request.context as ApiContext).api ?? {
      requestId: requestIdOf(request.event, request.context),
      headers: {},
    };
    request.response = errorResult(request.error, s.requestId, s.headers);
    logger.resetKeys();
  },
  after: () => {
    logger.resetKeys();
  },
});

const credentials = (routeKey: string, authenticate: Authenticate): MiddlewareObj<Event, Result> => {
  const route = findRoute(routeKey);
  if (!route) throw new Error(`route ${routeKey} is not in the route table`);
  return {
    before: async (request) => {
      const s = state(request);
      s.principal = await authenticate(request.event.headers?.authorization, route.credentials);
      logger.appendKeys({ accountId: s.principal.accountId, credential: s.principal.credential });
    },
  };
};

const jsonBody = (maxBytes: number): MiddlewareObj<Event, Result> => ({
  before: (request) => {
    const { body, isBase64Encoded } = request.event;
    const text =
      body === undefined ? '' : isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
    if (Buffer.byteLength(text, 'utf8') > maxBytes) {
      throw new ServiceError('REQUEST_TOO_LARGE', `The request body is larger than ${maxBytes} bytes`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ServiceError('INVALID_JSON', 'The request body is not valid JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ServiceError('INVALID_JSON', 'The request body must be a JSON object');
    }
    state(request).body = parsed;
  },
});

/** One route: middleware stack + the route's single call into the domain. */
export const createRoute =
  (deps: HttpDeps) =>
  <B = undefined, Q = undefined>(
    spec: RouteSpec<B, Q>,
    handle: (request: ApiRequest<B, Q>) => Promise<ApiResponse>,
  ) => {
    const chain = middy<Event, Result>().use(responder()).use(credentials(spec.routeKey, deps.authenticate));
    if (spec.body) chain.use(jsonBody(deps.maxRequestBodyBytes));
    return chain.handler(async (event, context) => {
      const s = (context as ApiContext).api as State;
      const principal = s.principal as Principal;
      if (spec.beforeValidation) Object.assign(s.headers, await spec.beforeValidation(principal));
      const request: ApiRequest<B, Q> = {
        requestId: s.requestId,
        principal,
        body: spec.body ? spec.body(s.body as Record<string, unknown>) : (undefined as B),
        query: spec.query ? spec.query(event.queryStringParameters ?? {}) : (undefined as Q),
        pathParameters: event.pathParameters ?? {},
        headers: event.headers ?? {},
      };
      const response = await handle(request);
      return jsonResult(response.status, response.body, s.requestId, { ...s.headers, ...response.headers });
    });
  };
