/**
 * How a route is declared, once: method, path, accepted credentials, request schemas, whether
 * it counts against the render rate limit, and what the OpenAPI document says of it. A resource
 * groups its routes with what its Lambda needs (bucket, renderer, ...). Everything else derives
 * from these declarations: the resource's Lambda handler (functions/core/http.ts), the local
 * server's router and the 404/405 fallback (the matcher below), the CDK routes, functions,
 * environment and grants (lib/service-api.ts), and the OpenAPI document (functions/openapi.ts).
 *
 * Like settings.ts and table.ts this is data that the CDK app reads too, so it imports no
 * runtime code: schemas (zod) and types only.
 */
import type { z } from 'zod';
import type { ErrorCode } from './domain/common/errors.js';
import type { CredentialKind } from './domain/common/principal.js';
import type { Settings } from './settings.js';
import { PARTITION_PREFIXES, type TableAccess, type TableAction } from './table.js';
import type { Binding } from './wiring.js';

export type { CredentialKind } from './domain/common/principal.js';
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export const KEY_OR_SESSION: readonly CredentialKind[] = ['apiKey', 'session'];
export const SESSION_ONLY: readonly CredentialKind[] = ['session'];

/** The JSON object body of a route: its schema, and how a body is checked against it. */
export interface BodyDeclaration<B, S extends z.ZodType<B> = z.ZodType<B>> {
  readonly schema: (settings: Settings) => S;
  /** Throws the 422 the route answers with. @default the schema's problems answer VALIDATION_ERROR */
  parse?(body: Record<string, unknown>, schema: S): B;
}

/**
 * A body parsed once, with the headers the route reads, into the command its use case takes
 * (which is not the body's shape: the schema documents the body, `parse` builds the command).
 */
export interface CommandDeclaration<C, S extends z.ZodType = z.ZodType> {
  readonly schema: (settings: Settings) => S;
  /**
   * Throws the 422 the route answers with. `text` is the body as sent: what JSON.parse loses
   * (the place of integer-like keys, `10.0`, integers beyond 2^53) is still in it.
   */
  parse(
    body: Record<string, unknown>,
    schema: S,
    headers: Readonly<Record<string, string | undefined>>,
    text: string,
  ): C;
}

export interface HeaderDeclaration {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the value. */
  readonly schema: Readonly<Record<string, unknown>>;
}

export interface RouteDeclaration<B = unknown, Q = unknown> {
  readonly method: HttpMethod;
  /** API Gateway path syntax, e.g. `/v1/pdf/{job_id}`. */
  readonly path: string;
  readonly credentials: readonly CredentialKind[];
  readonly body?: BodyDeclaration<B> | CommandDeclaration<B>;
  /**
   * The body is a file, not JSON (PUT /v1/assets/{name}): handed to the route as bytes
   * (ApiRequest.rawBody) with its Content-Type; the route checks both.
   */
  readonly rawBody?: { readonly description: string; readonly mediaTypes: readonly string[] };
  /** Query parameters as strings in, parsed values out; problems answer VALIDATION_ERROR. */
  readonly query?: z.ZodType<Q, Readonly<Record<string, string | undefined>>>;
  /** Request headers the route reads (documented; the route checks them). */
  readonly headers?: readonly HeaderDeclaration[];
  /** Counts against the account's render rate limit (429 USAGE_LIMIT_EXCEEDED, RateLimit-* headers). */
  readonly rateLimited?: boolean;
  readonly summary: string;
  readonly success: {
    readonly status: 200 | 201 | 202 | 204;
    readonly description: string;
    /** The answer's body: a named component of the OpenAPI document, or an array of them. */
    readonly body?: ResponseBody;
  };
  /**
   * A second success: 202 with the same body, when the route answers before the work is done
   * (an async render), with headers of its own.
   */
  readonly accepted?: {
    readonly description: string;
    readonly headers: Readonly<Record<string, { readonly description: string }>>;
  };
  /** The codes the route itself answers with, besides those its declaration implies. */
  readonly errors: readonly ErrorCode[];
}

export interface ResponseBody {
  readonly name: string;
  readonly schema: z.ZodType;
  readonly array?: boolean;
}

/** What a resource's Lambda needs beyond the token verifier every API route has. */
export interface ResourceNeeds {
  /**
   * Its routes' own access to the table, beyond what authentication needs (which every
   * authenticated resource is given: AUTHENTICATION_TABLE_ACCESS). Read-only where the routes only
   * read; scoped to partition families where every item they touch is in them.
   */
  readonly table: TableAccess;
  /** Signs PDF download and upload links. */
  readonly pdfBucket?: boolean;
  /**
   * Account assets in the bucket (assets/): `manage`, written, read and deleted (the assets
   * resource); `read`, links to them signed for the renderer (what renders).
   */
  readonly assets?: 'manage' | 'read';
  /** Invokes the renderer. */
  readonly renderer?: boolean;
  /** Computes API key digests to store them (it issues keys), besides checking presented ones. */
  readonly issuesApiKeys?: boolean;
  /** Sends webhook events (to the webhook queue). */
  readonly webhookQueue?: boolean;
  /** Sends async renders' messages to the render queue. */
  readonly renderQueue?: boolean;
  /** Sends a completed batch whose outputs are to be built to the batch output queue. */
  readonly batchOutputQueue?: boolean;
  /** Sends a completed job that names a destination to the delivery queue. */
  readonly deliveryQueue?: boolean;
  /** Reads the public half of KMS signing keys (registering one checks its certificate). */
  readonly kmsSigningKeys?: boolean;
  /** Assumes customers' destination roles (sts:AssumeRole with the service's external id). */
  readonly destinationRoles?: boolean;
}

export interface ResourceDeclaration<R extends Readonly<Record<string, RouteDeclaration>>> {
  /** The folder under functions/: its index.ts exports `createHandler`, its handler.ts `handler`. */
  readonly name: string;
  readonly description: string;
  readonly needs: ResourceNeeds;
  /** By name: the handler implements one function per name, the OpenAPI operationId. */
  readonly routes: R;
}

/** Declares a route; the type parameters carry the parsed body and query to the handler. */
export const route = <B = undefined, Q = undefined>(
  declaration: RouteDeclaration<B, Q>,
): RouteDeclaration<B, Q> => declaration;

export const resource = <R extends Readonly<Record<string, RouteDeclaration>>>(
  declaration: ResourceDeclaration<R>,
): ResourceDeclaration<R> => declaration;

// biome-ignore lint/suspicious/noExplicitAny: any resource, whatever its routes' body and query types
export type AnyResource = ResourceDeclaration<Readonly<Record<string, RouteDeclaration<any, any>>>>;

/** A route as the router and the stacks see it: where it is, and which Lambda answers it. */
export interface Route {
  readonly method: HttpMethod;
  readonly path: string;
  /** The resource (Lambda) that answers it. */
  readonly resource: string;
  readonly credentials: readonly CredentialKind[];
  /** The declaration's name in its resource, which is also its OpenAPI operationId. */
  readonly name?: string;
}

/** The API Gateway route key, e.g. `GET /v1/pdf/{job_id}`. */
export const routeKey = (r: Pick<Route, 'method' | 'path'>): string => `${r.method} ${r.path}`;

export const routesOf = (r: AnyResource): Route[] =>
  Object.entries(r.routes).map(([name, d]) => ({
    method: d.method,
    path: d.path,
    resource: r.name,
    credentials: d.credentials,
    name,
  }));

/**
 * Everything a resource's Lambda is given: its own needs plus what its routes' credentials imply.
 * One flag per binding of the wiring declaration (wiring.ts), which names each one's variables.
 */
export type ResourceWiring = Readonly<Record<Binding, boolean>>;

export const wiringOf = (r: AnyResource): ResourceWiring => {
  const declared = Object.values(r.routes);
  const authenticated = declared.length > 0;
  return {
    // Credentials are checked against the table (API keys, accounts) and the user pool.
    table: authenticated,
    userPool: authenticated,
    // Every authenticated route looks a presented key up, also where keys are refused: a valid
    // key answers 403 SESSION_REQUIRED there, an unknown or revoked one 401 (contract precedence).
    apiKeySecret: authenticated || r.needs.issuesApiKeys === true,
    pdfBucket: r.needs.pdfBucket === true || r.needs.assets !== undefined,
    renderer: r.needs.renderer === true,
    webhookQueue: r.needs.webhookQueue === true,
    batchOutputQueue: r.needs.batchOutputQueue === true,
    deliveryQueue: r.needs.deliveryQueue === true,
    renderQueue: r.needs.renderQueue === true,
    kmsSigningKeys: r.needs.kmsSigningKeys === true,
    destinationRoles: r.needs.destinationRoles === true,
    // Usage events are published by their own consumer (functions/consumers.ts), never by a route.
    usageEventBus: false,
  };
};

/**
 * What authentication does with the table on every authenticated route (functions/core/auth.ts):
 * reads the presented API key's item and the account's, marks a key used (once a minute), and
 * creates the account on its first session request and keeps its email (the contract's /v1/me).
 * So a resource whose routes only read still writes these two kinds of item.
 */
export const AUTHENTICATION_TABLE_ACCESS = {
  actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
  partitions: [PARTITION_PREFIXES.account, PARTITION_PREFIXES.apiKey],
} as const satisfies TableAccess;

/** A resource's whole access to the table: its routes' and authentication's; none without routes. */
export const tableAccessOf = (r: AnyResource): TableAccess | undefined => {
  if (Object.keys(r.routes).length === 0) return undefined;
  const own = r.needs.table;
  if (own === 'readWrite') return own;
  const actions = [...new Set<TableAction>([...AUTHENTICATION_TABLE_ACCESS.actions, ...own.actions])];
  return own.partitions
    ? {
        actions,
        partitions: [...new Set([...AUTHENTICATION_TABLE_ACCESS.partitions, ...own.partitions])],
      }
    : { actions };
};

// ---------------------------------------------------------------------------------------------
// The one matcher: API Gateway's choice of route for a method and path.

type Segment = { kind: 'static'; value: string } | { kind: 'param' | 'greedy'; name: string };

interface CompiledRoute {
  readonly route: Route;
  readonly segments: readonly Segment[];
}

const compile = (r: Route): CompiledRoute => ({
  route: r,
  segments: r.path
    .split('/')
    .slice(1)
    .map((s): Segment => {
      const greedy = /^\{(\w+)\+\}$/.exec(s);
      if (greedy?.[1]) return { kind: 'greedy', name: greedy[1] };
      const param = /^\{(\w+)\}$/.exec(s);
      if (param?.[1]) return { kind: 'param', name: param[1] };
      return { kind: 'static', value: s };
    }),
});

const decode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

const matchSegments = (
  segments: readonly Segment[],
  parts: readonly string[],
): Record<string, string> | undefined => {
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as Segment;
    const part = parts[i];
    if (segment.kind === 'greedy') {
      const rest = parts.slice(i);
      if (rest.length === 0 || rest.join('') === '') return undefined;
      params[segment.name] = decode(rest.join('/'));
      return params;
    }
    if (part === undefined) return undefined;
    if (segment.kind === 'static') {
      if (decode(part) !== segment.value) return undefined;
    } else {
      if (part === '') return undefined;
      params[segment.name] = decode(part);
    }
  }
  return parts.length === segments.length ? params : undefined;
};

/** Static segments beat `{param}`, which beats `{greedy+}`, left to right: API Gateway's "most specific". */
const specificity = (c: CompiledRoute): number[] =>
  c.segments.map((s) => (s.kind === 'static' ? 0 : s.kind === 'param' ? 1 : 2));

const moreSpecific = (a: CompiledRoute, b: CompiledRoute): boolean => {
  const sa = specificity(a);
  const sb = specificity(b);
  for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
    if (sa[i] !== sb[i]) return (sa[i] as number) < (sb[i] as number);
  }
  return sa.length > sb.length;
};

export type RouteMatch =
  | {
      readonly kind: 'route';
      readonly route: Route;
      readonly pathParameters: Readonly<Record<string, string>>;
    }
  /** The path exists with other methods (405 with `Allow`), or not at all (404, `allowed` empty). */
  | { readonly kind: 'none'; readonly allowed: readonly HttpMethod[] };

/** The route API Gateway would pick for `method` and `rawPath`, or the methods the path has. */
export const createMatcher = (table: readonly Route[]): ((method: string, rawPath: string) => RouteMatch) => {
  const compiled = table.map(compile);
  return (method, rawPath) => {
    const parts = rawPath.split('/').slice(1);
    let best: { c: CompiledRoute; params: Record<string, string> } | undefined;
    const allowed = new Set<HttpMethod>();
    for (const c of compiled) {
      const params = matchSegments(c.segments, parts);
      if (!params) continue;
      allowed.add(c.route.method);
      if (c.route.method === method && (!best || moreSpecific(c, best.c))) best = { c, params };
    }
    if (!best) return { kind: 'none', allowed: [...allowed] };
    return { kind: 'route', route: best.c.route, pathParameters: best.params };
  };
};
