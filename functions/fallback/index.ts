/**
 * API Gateway's `$default` route: whatever the route table does not name. Unknown paths answer
 * 404 NOT_FOUND, known paths with another method 405 METHOD_NOT_ALLOWED with `Allow`, both in
 * the contract's error body. Needs no configuration and reads nothing.
 *
 * It also answers `GET /openapi.json` with the OpenAPI document (functions/openapi.ts), the one source
 * `npm run openapi` prints: served by the API itself, on the local stack and deployed alike, with
 * the API's CORS (API Gateway's, or the local gateway's), and no route of its own to document.
 * And `GET /` leads to the dashboard when the deployment has one (its URL in the configuration),
 * as the local stack's `/` does.
 */
import type { Context } from 'aws-lambda';
import type { FallbackConfig } from '../core/config.js';
import type { Event, LambdaHandler, Result } from '../core/http.js';
import { errorResult, jsonResult } from '../core/responses.js';
import { ServiceError } from '../domain/common/errors.js';
import { openApiDocument } from '../openapi.js';
import { matchRoute } from '../routes.js';

export const OPENAPI_PATH = '/openapi.json';

/** Built on the first request for it, then kept for the warm Lambda's life. */
const built: { document?: ReturnType<typeof openApiDocument> } = {};

const answer = async (event: Event, context: Context, config: FallbackConfig): Promise<Result> => {
  const requestId = event.requestContext?.requestId ?? context.awsRequestId;
  const path = event.rawPath ?? event.requestContext?.http?.path ?? '/';
  const method = event.requestContext?.http?.method ?? 'GET';
  if (path === OPENAPI_PATH && (method === 'GET' || method === 'HEAD')) {
    built.document ??= openApiDocument();
    // Public and the same for everyone: it may be cached, unlike the API's own answers.
    const result = jsonResult(200, built.document, requestId);
    return { ...result, headers: { ...result.headers, 'Cache-Control': 'public, max-age=300' } };
  }
  if (path === '/' && config.dashboardUrl && (method === 'GET' || method === 'HEAD')) {
    const result = jsonResult(302, undefined, requestId);
    return { ...result, headers: { ...result.headers, Location: config.dashboardUrl } };
  }
  const match = matchRoute(method, path);
  const allowed = match.kind === 'none' ? match.allowed : [method];
  if (allowed.length === 0) {
    return errorResult(new ServiceError('NOT_FOUND', `No route for ${method} ${path}`), requestId);
  }
  return errorResult(
    new ServiceError(
      'METHOD_NOT_ALLOWED',
      `${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`,
    ),
    requestId,
    { Allow: allowed.join(', ') },
  );
};

/** Reads the route table, and the dashboard's URL when there is one. */
export const createHandler =
  (config: FallbackConfig = {}): LambdaHandler =>
  (event, context) =>
    answer(event, context, config);
