/**
 * The local API Gateway: a node:http server that turns each request into the HTTP API payload
 * v2 event, invokes the resource's Lambda handler in-process and writes its result back, with
 * API Gateway's routing (the route table, `$default` for the rest) and its payload limits.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { tooLargeMessage } from '../../functions/core/request-body.js';
import { assetTooLarge } from '../../functions/domain/assets/assets.js';
import { createMatcher } from '../../functions/route-declaration.js';
import { FALLBACK_RESOURCE, type Route, routeKey, routes } from '../../functions/routes.js';
import type { CorsPolicy } from '../cors.js';
import { LOCAL_REGION } from './issuer.js';
import type { StorageWatch } from './storage-faults.js';

/** API Gateway HTTP API's request payload quota. */
export const MAX_REQUEST_BODY_BYTES = 10 * 1024 * 1024;
/** Lambda's synchronous invocation payload quota, for the event and for the result. */
export const MAX_LAMBDA_PAYLOAD_BYTES = 6 * 1024 * 1024;
/** API Gateway's integration timeout; only what getRemainingTimeInMillis() counts down from. */
export const FUNCTION_TIMEOUT_MS = 30_000;
export const DEFAULT_ROUTE_KEY = '$default';

const ACCOUNT_ID = '000000000000';
const API_ID = 'local';

export type LambdaHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
  callback: (error?: unknown, result?: unknown) => void,
) => unknown;

/** Gives the handler of a resource (the local stack makes them with its configuration). */
export type HandlerLoader = (resource: string) => Promise<LambdaHandler>;

export interface RouteMatch {
  readonly routeKey: string;
  readonly resource: string;
  readonly pathParameters: Readonly<Record<string, string>> | undefined;
}

/** The route API Gateway would pick for `method` and `rawPath`, else `$default` (the fallback). */
export const createRouter = (
  table: readonly Route[] = routes,
): ((method: string, rawPath: string) => RouteMatch) => {
  const match = createMatcher(table);
  return (method, rawPath) => {
    const found = match(method, rawPath);
    if (found.kind === 'none') {
      return { routeKey: DEFAULT_ROUTE_KEY, resource: FALLBACK_RESOURCE, pathParameters: undefined };
    }
    return {
      routeKey: routeKey(found.route),
      resource: found.route.resource,
      pathParameters: Object.keys(found.pathParameters).length > 0 ? found.pathParameters : undefined,
    };
  };
};

// ---------------------------------------------------------------------------------------------
// Request → event

/** API Gateway's own request id style (e.g. `JKJaXmPLvHcESHA=`). */
const newApiGatewayRequestId = (): string => randomBytes(11).toString('base64');

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number): string => String(n).padStart(2, '0');
/** `12/Mar/2020:19:03:58 +0000` */
const clfTime = (d: Date): string =>
  `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${pad(d.getUTCHours())}:${pad(
    d.getUTCMinutes(),
  )}:${pad(d.getUTCSeconds())} +0000`;

/** API Gateway passes these as text; any other (or no) content type arrives base64-encoded. */
const isTextContentType = (contentType: string | undefined): boolean => {
  if (!contentType) return false;
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return (
    type.startsWith('text/') || type === 'application/json' || /^application\/[\w.+-]+\+json$/.test(type)
  );
};

/** Lower-cased names, duplicates comma-joined; cookies go to their own field, as in API Gateway. */
const collectHeaders = (
  rawHeaders: readonly string[],
): { headers: Record<string, string>; cookies: string[] } => {
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase();
    const value = rawHeaders[i + 1] as string;
    if (name === 'cookie') {
      for (const c of value.split(';')) if (c.trim() !== '') cookies.push(c.trim());
      continue;
    }
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }
  return { headers, cookies };
};

const collectQuery = (rawQueryString: string): Record<string, string> | undefined => {
  if (rawQueryString === '') return undefined;
  const query: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(rawQueryString)) {
    query[k] = query[k] === undefined ? v : `${query[k]},${v}`;
  }
  return Object.keys(query).length > 0 ? query : undefined;
};

interface EventInput {
  readonly req: IncomingMessage;
  readonly body: Buffer;
  readonly match: RouteMatch;
  readonly requestId: string;
  readonly now: Date;
}

export const buildEvent = ({ req, body, match, requestId, now }: EventInput): APIGatewayProxyEventV2 => {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const rawPath = q === -1 ? url : url.slice(0, q);
  const rawQueryString = q === -1 ? '' : url.slice(q + 1);
  const { headers, cookies } = collectHeaders(req.rawHeaders);
  const sourceIp = (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  const domainName = (headers.host ?? 'localhost').replace(/:\d+$/, '');
  headers['x-forwarded-for'] = headers['x-forwarded-for']
    ? `${headers['x-forwarded-for']}, ${sourceIp}`
    : sourceIp;
  headers['x-forwarded-port'] = String(req.socket.localPort ?? '');
  headers['x-forwarded-proto'] = 'http';
  headers['x-amzn-trace-id'] =
    `Root=1-${Math.floor(now.getTime() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;
  const text = isTextContentType(headers['content-type']);
  const query = collectQuery(rawQueryString);

  return {
    version: '2.0',
    routeKey: match.routeKey,
    rawPath,
    rawQueryString,
    ...(cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(query ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: ACCOUNT_ID,
      apiId: API_ID,
      domainName,
      domainPrefix: domainName.split('.')[0] ?? domainName,
      http: {
        method: req.method ?? 'GET',
        path: rawPath,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: match.routeKey,
      stage: '$default',
      time: clfTime(now),
      timeEpoch: now.getTime(),
    },
    ...(match.pathParameters ? { pathParameters: { ...match.pathParameters } } : {}),
    ...(body.length > 0 ? { body: text ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: body.length > 0 && !text,
  };
};

/**
 * The size API Gateway holds an event to before it invokes: the body as it arrived (or its base64
 * form) plus the rest of the event. Not `JSON.stringify(event)`: that escapes the body a second
 * time (a JSON body's every quote counted twice), and a 5 MiB html of table markup in a 5.8 MB
 * body, under the documented 6 MiB, was refused with 413.
 */
export const eventPayloadBytes = (event: APIGatewayProxyEventV2): number =>
  Buffer.byteLength(JSON.stringify({ ...event, body: '' })) + Buffer.byteLength(event.body ?? '');

export const createLambdaContext = (resource: string, timeoutMs = FUNCTION_TIMEOUT_MS): Context => {
  const functionName = `pdf-service-local-${resource}`;
  const deadline = Date.now() + timeoutMs;
  const today = new Date().toISOString().slice(0, 10).replaceAll('-', '/');
  const unsupported = (): never => {
    throw new Error('context.done/fail/succeed are not supported locally: return a promise');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_REGION}:${ACCOUNT_ID}:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `${today}/[$LATEST]${randomBytes(16).toString('hex')}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
};

// ---------------------------------------------------------------------------------------------
// Invocation and result → response

/** Runs the handler like the Node.js runtime: a returned promise, or the callback. */
const invoke = (handler: LambdaHandler, event: APIGatewayProxyEventV2, context: Context): Promise<unknown> =>
  new Promise((resolve, reject) => {
    let settled = false;
    const settle = (error?: unknown, result?: unknown) => {
      if (settled) return;
      settled = true;
      if (error) reject(error);
      else resolve(result);
    };
    try {
      const returned = handler(event, context, settle);
      if (returned && typeof (returned as Promise<unknown>).then === 'function') {
        (returned as Promise<unknown>).then((r) => settle(undefined, r), settle);
      } else if (handler.length < 3) {
        settle(undefined, returned);
      }
    } catch (e) {
      settle(e);
    }
  });

interface HttpAnswer {
  readonly statusCode: number;
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer;
}

/** Headers that frame the HTTP message; the server sets them, never the handler. */
const HOP_BY_HOP = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

class MalformedResultError extends Error {}

/**
 * API Gateway's reading of a payload v2 result: an object with `statusCode` is a structured
 * result; anything else is JSON for a 200 answer. The result went through JSON in Lambda, so it
 * does here too.
 */
export const toHttpAnswer = (result: unknown): HttpAnswer => {
  const serialized = JSON.stringify(result ?? null);
  if (Buffer.byteLength(serialized) > MAX_LAMBDA_PAYLOAD_BYTES) {
    throw new MalformedResultError('the handler result is over the Lambda response payload quota (6 MB)');
  }
  const value = JSON.parse(serialized) as unknown;
  const isStructured = typeof value === 'object' && value !== null && 'statusCode' in value;
  if (!isStructured) {
    return {
      statusCode: 200,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(typeof value === 'string' ? value : serialized),
    };
  }
  const r = value as Exclude<APIGatewayProxyResultV2, string>;
  const { statusCode } = r;
  if (
    typeof statusCode !== 'number' ||
    !Number.isInteger(statusCode) ||
    statusCode < 100 ||
    statusCode > 599
  ) {
    throw new MalformedResultError(`the handler returned an invalid statusCode: ${String(statusCode)}`);
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, v] of Object.entries(r.headers ?? {})) {
    if (!HOP_BY_HOP.has(name.toLowerCase())) headers[name.toLowerCase()] = String(v);
  }
  if (r.cookies && r.cookies.length > 0) headers['set-cookie'] = [...r.cookies];
  const body = r.body ?? '';
  return { statusCode, headers, body: r.isBase64Encoded ? Buffer.from(body, 'base64') : Buffer.from(body) };
};

/** The contract's error body, for the answers this server gives itself. */
const errorAnswer = (statusCode: number, code: string, message: string, requestId: string): HttpAnswer => ({
  statusCode,
  headers: {
    'content-type': 'application/json; charset=utf-8',
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
    'x-request-id': requestId,
  },
  body: Buffer.from(JSON.stringify({ error: { code, message, request_id: requestId } })),
});

/**
 * API Gateway's 413 (a body past its 10 MiB) and Lambda's (an event past its 6 MiB), in the
 * service's words: the limit a client can keep to is Lambda's, whichever refused.
 */
const tooLarge = (requestId: string, bytes?: number, key?: string): HttpAnswer => {
  // An asset upload's 413 names the asset's own limit, which the file is over too (issue 40).
  if (key === 'PUT /v1/assets/{name}') {
    const e = assetTooLarge(bytes);
    const answer = errorAnswer(413, e.code, e.message, requestId);
    const body = JSON.parse(answer.body.toString('utf8')) as { error: Record<string, unknown> };
    body.error.details = e.details;
    return { ...answer, body: Buffer.from(JSON.stringify(body)) };
  }
  return errorAnswer(413, 'REQUEST_TOO_LARGE', tooLargeMessage(MAX_LAMBDA_PAYLOAD_BYTES, bytes), requestId);
};

const internalError = (requestId: string): HttpAnswer =>
  errorAnswer(500, 'INTERNAL_ERROR', 'An internal error occurred.', requestId);

/** How long a full DATA_DIR is given before a retry: the user has to free space first. */
const STORAGE_RETRY_AFTER_SECONDS = 10;

/**
 * A 5xx while DATA_DIR is full is the disk's doing (the emulators' writes failed): the answer says
 * so, keeping the job's id when the handler named one.
 */
const insufficientStorage = (failed: HttpAnswer, requestId: string): HttpAnswer => {
  let jobId: unknown;
  try {
    jobId = (JSON.parse(failed.body.toString('utf8')) as { error?: { job_id?: unknown } }).error?.job_id;
  } catch {
    jobId = undefined;
  }
  const answer = errorAnswer(
    507,
    'INSUFFICIENT_STORAGE',
    "The local stack's data directory (DATA_DIR) is full: free some space and try again.",
    requestId,
  );
  const body = JSON.parse(answer.body.toString('utf8')) as { error: Record<string, unknown> };
  if (typeof jobId === 'string') body.error.job_id = jobId;
  return {
    ...answer,
    headers: { ...answer.headers, 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) },
    body: Buffer.from(JSON.stringify(body)),
  };
};

const write = (res: ServerResponse, answer: HttpAnswer, requestId: string): void => {
  res.writeHead(answer.statusCode, {
    ...answer.headers,
    'apigw-requestid': requestId,
    'content-length': String(answer.body.length),
  });
  res.end(answer.body);
};

/**
 * Reads the whole body. Past `limit` it keeps draining but stops keeping, so the client still
 * gets the 413 answer instead of a reset connection.
 */
const readBody = (req: IncomingMessage, limit: number): Promise<Buffer | 'too-large' | 'aborted'> =>
  new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > limit ? 'too-large' : Buffer.concat(chunks)));
    // The client went away before sending everything: there is no one to answer.
    req.on('error', () => resolve('aborted'));
    req.on('close', () => {
      if (!req.complete) resolve('aborted');
    });
  });

export interface LocalHttpServerOptions {
  /** The handler of each resource; asked on each request, so it should keep what it made. */
  readonly loadHandler: HandlerLoader;
  /** The route table. @default functions/routes.ts */
  readonly routes?: readonly Route[];
  /** No per-request log lines. Handler crashes are still reported through `logError`. */
  readonly quiet?: boolean;
  /** @default a line on stdout */
  readonly log?: (line: string) => void;
  /** @default console.error */
  readonly logError?: (message: string, error: unknown) => void;
  /** Waited for before the first request is handled (the stack binds its port before it is ready). */
  readonly ready?: Promise<unknown>;
  /** CORS as API Gateway's `corsPreflight` answers it. @default none: no CORS headers, OPTIONS is a 405 */
  readonly cors?: CorsPolicy;
  /**
   * Pages outside the API that only the local server has (the dashboard and its local sign-in,
   * lib/local/dashboard.ts): asked first, it answers and returns true for its own paths.
   * @default none
   */
  readonly localPages?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** Where the stack keeps its data: a 5xx while it is full answers 507 INSUFFICIENT_STORAGE. @default none */
  readonly storage?: StorageWatch;
}

/**
 * API Gateway's CORS: a preflight (OPTIONS with Origin and Access-Control-Request-Method) is
 * answered by the gateway itself, 204, with the policy's headers for an allowed origin and none
 * for another; other answers to an allowed origin carry Access-Control-Allow-Origin and the
 * exposed headers.
 */
const corsHeaders = (policy: CorsPolicy, origin: string | undefined): Record<string, string> =>
  origin !== undefined && policy.allowOrigins.includes(origin)
    ? {
        'access-control-allow-origin': origin,
        'access-control-expose-headers': policy.exposeHeaders.join(','),
        vary: 'origin',
      }
    : {};

const isPreflight = (req: IncomingMessage): boolean =>
  req.method === 'OPTIONS' &&
  req.headers.origin !== undefined &&
  req.headers['access-control-request-method'] !== undefined;

const preflightAnswer = (policy: CorsPolicy, req: IncomingMessage, requestId: string): HttpAnswer => {
  const origin = req.headers.origin;
  const allowed = origin !== undefined && policy.allowOrigins.includes(origin);
  return {
    statusCode: 204,
    headers: allowed
      ? {
          'access-control-allow-origin': origin,
          'access-control-allow-methods': policy.allowMethods.join(','),
          'access-control-allow-headers': policy.allowHeaders.join(','),
          'access-control-max-age': String(policy.maxAgeSeconds),
          vary: 'origin',
          'x-request-id': requestId,
        }
      : { 'x-request-id': requestId },
    body: Buffer.alloc(0),
  };
};

export const createLocalHttpServer = (options: LocalHttpServerOptions): Server => {
  const route = createRouter(options.routes);
  const load = options.loadHandler;
  const log = options.quiet
    ? () => {}
    : (options.log ?? ((line: string) => process.stdout.write(`${line}\n`)));
  const logError = options.logError ?? ((message: string, error: unknown) => console.error(message, error));
  const answer = async (req: IncomingMessage, requestId: string): Promise<HttpAnswer | undefined> => {
    if (options.cors && isPreflight(req)) return preflightAnswer(options.cors, req, requestId);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const match = route(req.method ?? 'GET', q === -1 ? url : url.slice(0, q));
    const body = await readBody(req, MAX_REQUEST_BODY_BYTES);
    if (body === 'aborted') return undefined;
    if (body === 'too-large') {
      const declared = Number(req.headers['content-length']);
      return tooLarge(requestId, Number.isSafeInteger(declared) ? declared : undefined, match.routeKey);
    }
    await options.ready;
    const event = buildEvent({ req, body, match, requestId, now: new Date() });
    if (eventPayloadBytes(event) > MAX_LAMBDA_PAYLOAD_BYTES)
      return tooLarge(requestId, Buffer.byteLength(body), match.routeKey);
    let answered: HttpAnswer;
    try {
      const handler = await load(match.resource);
      const result = await invoke(handler, event, createLambdaContext(match.resource));
      answered = toHttpAnswer(result);
    } catch (e) {
      logError(`${match.routeKey}: the ${match.resource} handler failed (answered 500 INTERNAL_ERROR):`, e);
      answered = internalError(requestId);
    }
    if (answered.statusCode >= 500 && (await options.storage?.isFull())) {
      return insufficientStorage(answered, requestId);
    }
    return answered;
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    if (options.localPages?.(req, res)) return;
    const started = performance.now();
    const requestId = newApiGatewayRequestId();
    answer(req, requestId)
      .catch((e: unknown) => {
        logError('local API Gateway: request failed', e);
        return internalError(requestId);
      })
      .then((a) => {
        if (!a || res.headersSent || res.destroyed) return;
        const cors = options.cors && !isPreflight(req) ? corsHeaders(options.cors, req.headers.origin) : {};
        // Shutting down (closeServer): the connection closes after this answer instead of idling.
        if (!server.listening) res.shouldKeepAlive = false;
        write(res, { ...a, headers: { ...a.headers, ...cors } }, requestId);
        // Only the path: a query string may carry anything, and headers (Authorization) never appear.
        const path = (req.url ?? '/').split('?')[0];
        log(`${req.method} ${path} ${a.statusCode} ${Math.round(performance.now() - started)}ms`);
      });
  };

  const server = createServer(onRequest);
  keepAcrossStalls(server);
  // curl asks before sending a large body: refuse an announced oversize body without reading it.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (Number(req.headers['content-length'] ?? 0) > MAX_REQUEST_BODY_BYTES) {
      const requestId = newApiGatewayRequestId();
      res.shouldKeepAlive = false;
      write(res, tooLarge(requestId), requestId);
      log(`${req.method} ${(req.url ?? '/').split('?')[0]} 413 0ms`);
      return;
    }
    res.writeContinue();
    onRequest(req, res);
  });
  return server;
};

/**
 * Node ends a kept-alive connection once its keep-alive timeout passes. After a stall of the
 * process (SIGSTOP, a laptop's sleep, a debugger) that timer fires in the same turn of the event
 * loop that reads the request the client sent meanwhile, and timers run first: the request was
 * reset without an answer. So the verdict waits one turn (setImmediate runs after the I/O), and a
 * connection that received bytes in the meantime is kept.
 */
const keepAcrossStalls = (server: Server): void => {
  // Listening makes the server responsible for timed-out sockets (node:http destroys them otherwise).
  server.on('timeout', (socket: Socket) => {
    const bytesRead = socket.bytesRead;
    setImmediate(() => {
      if (!socket.destroyed && socket.bytesRead === bytesRead) socket.destroy();
    });
  });
};

/** Binds `server`; a taken port rejects with a message that names it. */
export const listen = (server: Server, port: number, host: string): Promise<AddressInfo> =>
  new Promise((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      reject(
        e.code === 'EADDRINUSE'
          ? new Error(
              `port ${port} on ${host} is already in use: stop whatever uses it, or choose another PORT`,
              {
                cause: e,
              },
            )
          : e,
      );
    };
    const onListening = () => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });

/** Stops accepting, lets requests in flight finish (up to `graceMs`), then cuts what is left. */
export const closeServer = (server: Server, graceMs = 10_000): Promise<void> =>
  new Promise((resolve, reject) => {
    if (!server.listening) return resolve();
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    timer.unref();
    server.close((e) => {
      clearTimeout(timer);
      if (e) reject(e);
      else resolve();
    });
    server.closeIdleConnections();
  });
