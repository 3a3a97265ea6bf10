import type { Context } from 'aws-lambda';
import { ServiceError } from '../domain/errors.js';
import { type Event, errorResult, type Result } from './http.js';

export type RouteHandler = (event: Event, context: Context) => Promise<Result>;

/** A resource's Lambda handler: picks the route file by API Gateway's route key. */
export const dispatch =
  (routes: Readonly<Record<string, RouteHandler>>): RouteHandler =>
  async (event, context) => {
    const routeHandler = routes[event.routeKey];
    if (routeHandler) return routeHandler(event, context);
    const requestId = event.requestContext?.requestId ?? context.awsRequestId;
    return errorResult(new ServiceError('NOT_FOUND', `No route for ${event.routeKey}`), requestId);
  };
