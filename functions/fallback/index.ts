/**
 * API Gateway's `$default` route: whatever the route table does not name. Unknown paths answer
 * 404 NOT_FOUND, known paths with another method 405 METHOD_NOT_ALLOWED with `Allow`, both in
 * the contract's error body. Needs no configuration and reads nothing.
 */
import type { Context } from 'aws-lambda';
import type { Event, LambdaHandler, Result } from '../core/http.js';
import { errorResult } from '../core/responses.js';
import { ServiceError } from '../domain/errors.js';
import { matchRoute } from '../routes.js';

const answer = async (event: Event, context: Context): Promise<Result> => {
  const requestId = event.requestContext?.requestId ?? context.awsRequestId;
  const path = event.rawPath ?? event.requestContext?.http?.path ?? '/';
  const method = event.requestContext?.http?.method ?? 'GET';
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

/** Takes no configuration: the route table is all it reads. */
export const createHandler = (): LambdaHandler => answer;
