/**
 * The shared HTTP middleware stack (middy), built for each declared route. A resource's handler
 * is its declarations plus one function per route that makes one call into the domain; this
 * stack does the rest, in the contract's order: request id → credentials (401) → credential
 * type (403) → body size and JSON (413/400) → render rate limit (429) → validation (422) → the
 * route. Errors become answers here and only here (responses.ts). On a rate-limited route, a
 * request refused before any work (401, 403, 400, 413, 422) is not counted in the route's window
 * but in the refused-requests windows of its account and its address (issue 40, `refused`).
 */

import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy, { type MiddlewareObj, type Request } from '@middy/core';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { RateLimitState } from '../domain/accounts/usage.js';
import { ServiceError } from '../domain/common/errors.js';
import type { Principal } from '../domain/common/principal.js';
import { type AnyResource, type RouteDeclaration, routeKey } from '../route-declaration.js';
import type { Settings } from '../settings.js';
import type { Authenticate } from './auth.js';
import { logger } from './logger.js';
import { countWith, MetricUnit, metrics } from './metrics.js';
import { notJsonMessage, tooLargeMessage } from './request-body.js';
import { errorResult, jsonResult, type Result, rateLimitHeaders } from './responses.js';
import { tracer } from './tracing.js';
import { parseOrThrow } from './validation.js';

export type Event = APIGatewayProxyEventV2;
export type { Result } from './responses.js';
export type LambdaHandler = (event: Event, context: Context) => Promise<Result>;

export interface ApiRequest<B, Q> {
  readonly requestId: string;
  readonly principal: Principal;
  readonly body: B;
  readonly query: Q;
  readonly pathParameters: Readonly<Record<string, string | undefined>>;
  /** Lower-cased names, as API Gateway v2 delivers them. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** A route with a file body (rawBody): its bytes. */
  readonly rawBody?: Uint8Array;
}

/** A route's one call into the domain: returns the body of the declared success answer. */
export type RouteImplementation<B, Q> = (request: ApiRequest<B, Q>) => Promise<unknown>;

/** One implementation per declared route, typed by its declaration. */
export type Implementations<R extends AnyResource> = {
  readonly [K in keyof R['routes']]: R['routes'][K] extends RouteDeclaration<infer B, infer Q>
    ? RouteImplementation<B, Q>
    : never;
};

/**
 * Counts a request of a rate-limited route (throws 429 USAGE_LIMIT_EXCEEDED past the limit),
 * given who asks and the route's parsed body (its command). An invalid request (422) is not
 * counted here but as refused (RefusedCounter); `command` is undefined only for a route without a body.
 */
export type RateLimitCounter<C = unknown> = (
  principal: Principal,
  command: C | undefined,
) => Promise<RateLimitState>;

/**
 * A route's answer with headers of its own (the body alone needs no wrapping), or with its
 * declared other status (`accepted`: 202) instead of the success status.
 */
export class Reply {
  constructor(
    readonly body: unknown,
    readonly headers: Readonly<Record<string, string>>,
    readonly status?: 202,
  ) {}
}

/**
 * Counts a request of a rate-limited route refused before any work, in the windows of its account
 * (when known) and of its client address; throws 429 USAGE_LIMIT_EXCEEDED past their caps.
 */
export type RefusedCounter = (who: {
  readonly principal?: Principal | undefined;
  readonly ip?: string | undefined;
}) => Promise<void>;

export interface HttpDeps {
  readonly authenticate: Authenticate;
  readonly settings: Settings;
  /** Counts a request of a rate-limited route; throws 429 USAGE_LIMIT_EXCEEDED past the limit. */
  readonly rateLimit?: RateLimitCounter;
  /** Counts a rate-limited route's requests refused before any work. Absent: not counted. */
  readonly refused?: RefusedCounter;
}

/** What the stack learns about a request as it goes, kept with that request only. */
interface RequestState {
  readonly requestId: string;
  /** performance.now() when the request arrived. */
  readonly startedAt: number;
  principal?: Principal;
  body?: Record<string, unknown>;
  /** The body's text, which `body` was parsed from. */
  bodyText?: string;
  /** The body and query parsed once (into the route's command), or why they are invalid. */
  parsed?: { readonly body: unknown; readonly query: unknown } | { readonly invalid: unknown };
  rateLimit?: RateLimitState;
}

const requestIdOf = (event: Event, context: Context) =>
  event.requestContext?.requestId ?? context.awsRequestId ?? crypto.randomUUID();

/** Keyed by the invocation's event object: each request's state lives exactly as long as it. */
const states = new WeakMap<Event, RequestState>();

const stateOf = ({ event, context }: { event: Event; context: Context }): RequestState => {
  let state = states.get(event);
  if (!state) {
    state = { requestId: requestIdOf(event, context), startedAt: performance.now() };
    states.set(event, state);
  }
  return state;
};

/**
 * Request id first, error mapping last: every answer carries X-Request-Id. Each answered request
 * is one log line (route, status, error code, account, request id, duration) and a count in the
 * metrics; an error code is also counted with its code (quota and rate refusals among them).
 * Fields are passed with the line, not appended to the shared logger: locally one process serves
 * concurrent requests.
 */
const responder = (): MiddlewareObj<Event, Result> => {
  const answered = (request: Request<Event, Result>) => {
    const state = stateOf(request);
    const status = request.response?.statusCode ?? 500;
    const errorCode =
      request.error instanceof ServiceError
        ? request.error.code
        : status >= 500
          ? 'INTERNAL_ERROR'
          : undefined;
    logger.info('request', {
      routeKey: request.event.routeKey,
      status,
      ...(errorCode ? { errorCode } : {}),
      ...(state.principal
        ? { accountId: state.principal.accountId, credential: state.principal.credential }
        : {}),
      requestId: state.requestId,
      durationMs: Math.round(performance.now() - state.startedAt),
    });
    metrics.addMetric('Requests', MetricUnit.Count, 1);
    if (errorCode) countWith('Errors', { ErrorCode: errorCode });
  };
  return {
    before: (request) => {
      stateOf(request);
    },
    onError: (request) => {
      request.response = errorResult(request.error, stateOf(request).requestId);
      answered(request);
    },
    after: (request) => {
      answered(request);
    },
  };
};

const sourceIp = (event: Event): string | undefined => event.requestContext?.http?.sourceIp;

/**
 * A refusal before any work on a rate-limited route: counted in the refused-requests windows; past
 * their cap the answer is their 429 instead of the refusal.
 */
const countRefused = async (refused: RefusedCounter | undefined, request: Request<Event, Result>) => {
  try {
    await refused?.({ principal: stateOf(request).principal, ip: sourceIp(request.event) });
  } catch (e) {
    // Past the cap: its 429. A store that failed to count does not turn the refusal into a 500.
    if (e instanceof ServiceError && e.code === 'USAGE_LIMIT_EXCEEDED') throw e;
    logger.warn('a refused request was not counted', { error: e });
  }
};

const isRefusal = (e: unknown) =>
  e instanceof ServiceError && ['INVALID_JSON', 'REQUEST_TOO_LARGE'].includes(e.code);

const credentials = (
  declaration: RouteDeclaration,
  authenticate: Authenticate,
  refused: RefusedCounter | undefined,
): MiddlewareObj<Event, Result> => ({
  before: async (request) => {
    let principal: Principal;
    try {
      principal = await authenticate(request.event.headers?.authorization, declaration.credentials);
    } catch (e) {
      if (e instanceof ServiceError) await countRefused(refused, request);
      throw e;
    }
    stateOf(request).principal = principal;
  },
});

/** The body's refusals (413, 400) counted as refused requests: the json middleware's before, wrapped. */
const countingRefusals = (
  inner: MiddlewareObj<Event, Result>,
  refused: RefusedCounter | undefined,
): MiddlewareObj<Event, Result> => ({
  before: async (request) => {
    try {
      await inner.before?.(request);
    } catch (e) {
      if (isRefusal(e)) await countRefused(refused, request);
      throw e;
    }
  },
});

const jsonBody = (maxBytes: number): MiddlewareObj<Event, Result> => ({
  before: (request) => {
    const { body, isBase64Encoded } = request.event;
    const text =
      body === undefined ? '' : isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > maxBytes) throw new ServiceError('REQUEST_TOO_LARGE', tooLargeMessage(maxBytes, bytes));
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new ServiceError(
        'INVALID_JSON',
        notJsonMessage(request.event.headers?.['content-type'], text, e),
      );
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ServiceError(
        'INVALID_JSON',
        `The request body must be a JSON object ({"field": …}), not ${Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : `a ${typeof parsed}`}`,
      );
    }
    const state = stateOf(request);
    state.body = parsed as Record<string, unknown>;
    state.bodyText = text;
  },
});

/**
 * Parses the body (with the headers the route reads) and the query once, into what the route's
 * use case takes. A problem is kept, not thrown: it answers 422 after the rate limit's count.
 */
const parseRequest = (declaration: RouteDeclaration, settings: Settings): MiddlewareObj<Event, Result> => {
  const body = declaration.body;
  const schema = body?.schema(settings);
  return {
    before: (request) => {
      const state = stateOf(request);
      const { event } = request;
      try {
        const raw = state.body ?? {};
        state.parsed = {
          body:
            body && schema
              ? body.parse
                ? body.parse(raw, schema, event.headers ?? {}, state.bodyText ?? '{}')
                : parseOrThrow(schema, raw)
              : undefined,
          query: declaration.query
            ? parseOrThrow(declaration.query, event.queryStringParameters ?? {})
            : undefined,
        };
      } catch (e) {
        state.parsed = { invalid: e };
      }
    },
  };
};

/**
 * The render rate limit: counted after credentials and body parsing, for a valid request only (an
 * invalid one is counted as refused, issue 40); its window's headers go on every answer after
 * that, errors included. Counting is the last `before`, the headers the last `after`/`onError`
 * (after the responder has made the error answer).
 */
const rateLimit = (hit: RateLimitCounter, refused: RefusedCounter | undefined) => {
  const decorate = (request: Request<Event, Result>) => {
    const window = stateOf(request).rateLimit;
    if (window && request.response) {
      request.response = {
        ...request.response,
        headers: { ...rateLimitHeaders(window), ...request.response.headers },
      };
    }
  };
  return {
    count: {
      before: async (request) => {
        const state = stateOf(request);
        const parsed = state.parsed;
        if (parsed && 'invalid' in parsed) {
          await countRefused(refused, request);
          return;
        }
        state.rateLimit = await hit(state.principal as Principal, parsed?.body);
      },
    } satisfies MiddlewareObj<Event, Result>,
    headers: { after: decorate, onError: decorate } satisfies MiddlewareObj<Event, Result>,
  };
};

const routeHandler = (
  declaration: RouteDeclaration,
  implementation: RouteImplementation<unknown, unknown>,
  deps: HttpDeps,
): LambdaHandler => {
  const limited = declaration.rateLimited ? rateLimit(requireRateLimit(deps), deps.refused) : undefined;
  const refused = limited ? deps.refused : undefined;
  const chain = middy<Event, Result>();
  if (tracer) chain.use(captureLambdaHandler(tracer));
  chain.use(injectLambdaContext(logger)).use(logMetrics(metrics, { captureColdStartMetric: true }));
  if (limited) chain.use(limited.headers);
  chain.use(responder()).use(credentials(declaration, deps.authenticate, refused));
  if (declaration.body) chain.use(countingRefusals(jsonBody(deps.settings.maxRequestBodyBytes), refused));
  chain.use(parseRequest(declaration, deps.settings));
  if (limited) chain.use(limited.count);
  return chain.handler(async (event, context) => {
    const state = stateOf({ event, context });
    const parsed = state.parsed ?? { body: undefined, query: undefined };
    if ('invalid' in parsed) throw parsed.invalid;
    const { body: sent, isBase64Encoded } = event;
    const raw = declaration.rawBody
      ? sent === undefined
        ? new Uint8Array()
        : new Uint8Array(Buffer.from(sent, isBase64Encoded ? 'base64' : 'utf8'))
      : undefined;
    const request: ApiRequest<unknown, unknown> = {
      ...(raw ? { rawBody: raw } : {}),
      requestId: state.requestId,
      principal: state.principal as Principal,
      body: parsed.body,
      query: parsed.query,
      pathParameters: event.pathParameters ?? {},
      headers: event.headers ?? {},
    };
    const answer = await implementation(request);
    const { body: payload, headers } = answer instanceof Reply ? answer : { body: answer, headers: {} };
    const status =
      answer instanceof Reply && answer.status !== undefined ? answer.status : declaration.success.status;
    return jsonResult(status, status === 204 ? undefined : payload, state.requestId, headers);
  }) as LambdaHandler;
};

const requireRateLimit = (deps: HttpDeps) => {
  if (!deps.rateLimit) throw new Error('a rate-limited route needs HttpDeps.rateLimit');
  return deps.rateLimit;
};

/** The Lambda handler of a resource: dispatches on API Gateway's route key to its routes' stacks. */
export const createResourceHandler = <R extends AnyResource>(
  resource: R,
  deps: HttpDeps,
  implementations: Implementations<R>,
): LambdaHandler => {
  const byKey = new Map<string, LambdaHandler>();
  for (const [name, declaration] of Object.entries(resource.routes)) {
    const implementation = (implementations as Record<string, RouteImplementation<unknown, unknown>>)[name];
    if (!implementation) throw new Error(`${resource.name}: no implementation for route ${name}`);
    byKey.set(routeKey(declaration), routeHandler(declaration, implementation, deps));
  }
  return async (event, context) => {
    const handler = byKey.get(event.routeKey);
    if (handler) return handler(event, context);
    return errorResult(
      new ServiceError('NOT_FOUND', `No route for ${event.routeKey}`),
      requestIdOf(event, context),
    );
  };
};
