/**
 * The route table: every resource of the API, each declaring its own routes
 * (functions/<resource>/routes.ts). The CDK stack, the local server, the fallback and the OpenAPI
 * document all read it; a resource added here exists everywhere and nowhere else.
 */
import { apiKeysResource } from './api-keys/routes.js';
import { assetsResource } from './assets/routes.js';
import { batchesResource } from './batches/routes.js';
import { destinationsResource } from './destinations/routes.js';
import { meResource } from './me/routes.js';
import { mergesResource } from './merges/routes.js';
import { pdfResource } from './pdf/routes.js';
import { type AnyResource, createMatcher, type Route, routeKey, routesOf } from './route-declaration.js';
import { signingKeysResource } from './signing-keys/routes.js';
import { templatesResource } from './templates/routes.js';
import { usageResource } from './usage/routes.js';
import { webhooksResource } from './webhooks/routes.js';

export type { CredentialKind, HttpMethod, Route } from './route-declaration.js';
export { routeKey } from './route-declaration.js';

export const resources: readonly AnyResource[] = [
  pdfResource,
  batchesResource,
  templatesResource,
  apiKeysResource,
  meResource,
  usageResource,
  webhooksResource,
  mergesResource,
  signingKeysResource,
  assetsResource,
  destinationsResource,
];

/** The Lambda behind API Gateway's `$default` route: 404 and 405 for what no route matches. */
export const FALLBACK_RESOURCE = 'fallback';

export const routes: readonly Route[] = resources.flatMap(routesOf);

/** Resources that have a Lambda behind the API (the renderer is invoked, not routed). */
export const apiResources = (): string[] => resources.map((r) => r.name);

export const findRoute = (key: string): Route | undefined => routes.find((r) => routeKey(r) === key);

/** API Gateway's choice of route for a request; the local server and the fallback both use it. */
export const matchRoute = createMatcher(routes);
