/**
 * Every Lambda behind the API, by the name the route table gives its resource (routes.ts), with
 * the factory its handler.ts calls at cold start. The local stack makes its handlers from this
 * map, with its own configuration, instead of loading modules by path; the CDK app never imports
 * it (it would pull in the runtime code).
 */
import { createHandler as createApiKeysHandler } from './api-keys/index.js';
import { apiKeysResource } from './api-keys/routes.js';
import { createHandler as createAssetsHandler } from './assets/index.js';
import { assetsResource } from './assets/routes.js';
import { createHandler as createBatchesHandler } from './batches/index.js';
import { batchesResource } from './batches/routes.js';
import type { Environment } from './core/config.js';
import type { LambdaHandler } from './core/http.js';
import type { LookupAll } from './core/public-addresses.js';
import { createHandler as createDestinationsHandler } from './destinations/index.js';
import { destinationsResource } from './destinations/routes.js';
import type { MessageQueue, Renderer } from './domain/common/ports.js';
import type { DestinationWriter } from './domain/destinations/destinations.js';
import type { KmsPublicKey } from './domain/signing/signing-keys.js';
import type { WebhookMessage } from './domain/webhooks/webhooks.js';
import { createHandler as createFallbackHandler } from './fallback/index.js';
import { createHandler as createMeHandler } from './me/index.js';
import { meResource } from './me/routes.js';
import { createHandler as createMergesHandler } from './merges/index.js';
import { mergesResource } from './merges/routes.js';
import { createHandler as createPdfHandler } from './pdf/index.js';
import { pdfResource } from './pdf/routes.js';
import { apiResources, FALLBACK_RESOURCE } from './routes.js';
import { createHandler as createSigningKeysHandler } from './signing-keys/index.js';
import { signingKeysResource } from './signing-keys/routes.js';
import { createHandler as createTemplatesHandler } from './templates/index.js';
import { templatesResource } from './templates/routes.js';
import { createHandler as createUsageHandler } from './usage/index.js';
import { usageResource } from './usage/routes.js';
import { createHandler as createWebhooksHandler } from './webhooks/index.js';
import { webhooksResource } from './webhooks/routes.js';

/** What a resource's Lambda is made with: its environment, and parts the local stack hands in. */
export interface HandlerParts {
  /** The local stack's in-process renderer; in the cloud the renderer Lambda is invoked. */
  readonly renderer?: Renderer;
  /** The local stack's webhook queue; in the cloud, SQS (WEBHOOK_QUEUE_URL). */
  readonly webhookQueue?: MessageQueue<WebhookMessage>;
  /** Tests only: the resolver webhook hosts are judged with. */
  readonly webhookLookup?: LookupAll;
  /** The local stack's stand-in for kms:GetPublicKey (it has no KMS); in the cloud, KMS's. */
  readonly kmsPublicKey?: KmsPublicKey;
  /** The local stack's destination writer (its STS stand-in and S3 server); in the cloud, AWS's. */
  readonly destinationWriter?: DestinationWriter;
}

export type CreateHandler = (env: Environment, parts: HandlerParts) => LambdaHandler;

export const handlerFactories: ReadonlyMap<string, CreateHandler> = new Map<string, CreateHandler>([
  [pdfResource.name, createPdfHandler],
  [batchesResource.name, createBatchesHandler],
  [templatesResource.name, createTemplatesHandler],
  [apiKeysResource.name, createApiKeysHandler],
  [meResource.name, createMeHandler],
  [usageResource.name, createUsageHandler],
  [webhooksResource.name, createWebhooksHandler],
  [mergesResource.name, createMergesHandler],
  [signingKeysResource.name, createSigningKeysHandler],
  [assetsResource.name, createAssetsHandler],
  [destinationsResource.name, createDestinationsHandler],
  [FALLBACK_RESOURCE, createFallbackHandler],
]);

/** The factory of `resource`'s Lambda; every resource of the route table has one. */
export const handlerFactory = (resource: string): CreateHandler => {
  const create = handlerFactories.get(resource);
  if (!create) throw new Error(`no handler for the resource "${resource}" (functions/handlers.ts)`);
  return create;
};

/** The resources the local stack serves: the route table's, and the fallback. */
export const servedResources = (): string[] => [...apiResources(), FALLBACK_RESOURCE];
