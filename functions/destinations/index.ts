/**
 * The destinations resource's Lambda: its routes (routes.ts) bound to one call each into the
 * destination use cases. Creating one assumes the customer's role (sts:AssumeRole with the
 * service's external id) and writes a probe object into their bucket.
 */
import { type Environment, readResourceConfig } from '../core/config.js';
import { createResourceHandler, type LambdaHandler } from '../core/http.js';
import type { DestinationWriter } from '../domain/destinations/destinations.js';
import { wiringOf } from '../route-declaration.js';
import * as build from '../services.js';
import { destinationsResource } from './routes.js';

/** `parts.destinationWriter`: the local stack's (its STS stand-in and S3 server); in the cloud, AWS's. */
export const createHandler = (
  env: Environment,
  parts: { readonly destinationWriter?: DestinationWriter } = {},
): LambdaHandler => {
  const services = build.createServices(
    readResourceConfig(wiringOf(destinationsResource), env),
    parts.destinationWriter ? { destinationWriter: parts.destinationWriter } : {},
  );
  const destinations = services.get(build.destinationManagement);

  return createResourceHandler(destinationsResource, services.get(build.http)(), {
    createDestination: ({ principal, body }) => destinations.create(principal, body),
    listDestinations: ({ principal }) => destinations.list(principal),
    getDestination: ({ principal, pathParameters }) =>
      destinations.get(principal, pathParameters.destination_id ?? ''),
    deleteDestination: ({ principal, pathParameters }) =>
      destinations.delete(principal, pathParameters.destination_id ?? ''),
  });
};
