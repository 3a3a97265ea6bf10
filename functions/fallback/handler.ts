/**
 * API Gateway's `$default` route: whatever the route table does not name. Unknown paths answer
 * 404 NOT_FOUND, known paths with another method 405 METHOD_NOT_ALLOWED with `Allow`, both in
 * the contract's error body. Needs no configuration and reads nothing.
 */
import type { Context } from 'aws-lambda';
import { type Event, errorResult, type Result } from '../core/http.js';
import { ServiceError } from '../domain/errors.js';
import { routes } from '../routes.js';

const patterns = routes.map((route) => ({
  route,
  regex: new RegExp(`^${route.path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

export const handler = async (event: Event, context: Context): Promise<Result> => {
  const requestId = event.requestContext?.requestId ?? context.awsRequestId;
  const path = event.rawPath ?? event.requestContext?.http?.path ?? '/';
  const method = event.requestContext?.http?.method ?? 'GET';
  const allowed = [...new Set(patterns.filter((p) => p.regex.test(path)).map((p) => p.route.method))];
  if (allowed.length === 0) {
    return errorResult(new ServiceError('NOT_FOUND', `No route for ${method} ${path}`), requestId);
  }
  return errorResult(
    new ServiceError(
      'METHOD_NOT_ALLOWED',
      `${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`,
      {
        headers: { Allow: allowed.join(', ') },
      },
    ),
    requestId,
  );
};
