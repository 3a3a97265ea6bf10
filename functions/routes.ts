/**
 * The one route table. The local HTTP server and the CDK stack both read it, so a route that
 * exists here exists in both places and nowhere else.
 *
 * `resource` names the Lambda (one per resource): its handler module is
 * `functions/<resource>/handler.ts`, exporting `handler`, which dispatches on `routeKey`.
 * `credentials` says which credential kinds the route accepts; an API key on a session-only
 * route answers 403 SESSION_REQUIRED.
 */
export type CredentialKind = 'session' | 'apiKey';
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface Route {
  readonly method: HttpMethod;
  /** API Gateway path syntax, e.g. `/v1/pdf/{job_id}`. */
  readonly path: string;
  readonly resource: string;
  readonly credentials: readonly CredentialKind[];
}

const KEY_OR_SESSION: readonly CredentialKind[] = ['apiKey', 'session'];

export const routes: readonly Route[] = [
  { method: 'POST', path: '/v1/pdf', resource: 'pdf', credentials: KEY_OR_SESSION },
  { method: 'GET', path: '/v1/pdf', resource: 'pdf', credentials: KEY_OR_SESSION },
  { method: 'GET', path: '/v1/pdf/{job_id}', resource: 'pdf', credentials: KEY_OR_SESSION },
];

/** The API Gateway route key, e.g. `GET /v1/pdf/{job_id}`. */
export const routeKey = (route: Pick<Route, 'method' | 'path'>): string => `${route.method} ${route.path}`;

/** Resources that have a Lambda behind the API (the renderer is invoked, not routed). */
export const apiResources = (): string[] => [...new Set(routes.map((r) => r.resource))];

export const findRoute = (key: string): Route | undefined => routes.find((r) => routeKey(r) === key);
