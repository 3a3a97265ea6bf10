/**
 * The assets resource's Lambda: its routes (routes.ts) bound to one call each into the asset use
 * cases (domain/assets/assets.ts).
 */
import { type Environment, readResourceConfig } from '../core/config.js';
import { createResourceHandler, type LambdaHandler } from '../core/http.js';
import { wiringOf } from '../route-declaration.js';
import * as build from '../services.js';
import { assetsResource } from './routes.js';

export const createHandler = (env: Environment): LambdaHandler => {
  const services = build.createServices(readResourceConfig(wiringOf(assetsResource), env));
  const assets = services.get(build.assetManagement);

  return createResourceHandler(assetsResource, services.get(build.http)(), {
    putAsset: ({ principal, pathParameters, headers, rawBody }) =>
      assets.put(
        principal,
        pathParameters.name ?? '',
        headers['content-type'] ?? '',
        rawBody ?? new Uint8Array(),
      ),
    listAssets: ({ principal }) => assets.list(principal),
    getAsset: ({ principal, pathParameters }) => assets.get(principal, pathParameters.name ?? ''),
    deleteAsset: ({ principal, pathParameters }) => assets.delete(principal, pathParameters.name ?? ''),
  });
};
