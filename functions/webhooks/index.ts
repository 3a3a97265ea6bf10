/**
 * The webhooks resource's Lambda: its routes (routes.ts) bound to one call each into the webhook
 * use cases. It checks URLs (core/public-addresses.ts), seals signing secrets with a key derived
 * from the API-key secret, and sends test events and redeliveries to the webhook queue.
 */
import { type Environment, readResourceConfig } from '../core/config.js';
import { createResourceHandler, type LambdaHandler } from '../core/http.js';
import { wiringOf } from '../route-declaration.js';
import * as build from '../services.js';
import type { WebhookParts } from './queue.js';
import { webhooksResource } from './routes.js';

export const createHandler = (env: Environment, parts: WebhookParts = {}): LambdaHandler => {
  const services = build.createServices(readResourceConfig(wiringOf(webhooksResource), env), parts);
  const management = services.get(build.webhookManagement);

  return createResourceHandler(webhooksResource, services.get(build.http)(), {
    createWebhook: ({ principal, body }) => management.create(principal, body),
    listWebhooks: ({ principal }) => management.list(principal),
    getWebhook: ({ principal, pathParameters }) => management.get(principal, pathParameters.webhook_id ?? ''),
    deleteWebhook: ({ principal, pathParameters }) =>
      management.delete(principal, pathParameters.webhook_id ?? ''),
    testWebhook: ({ principal, pathParameters }) =>
      management.test(principal, pathParameters.webhook_id ?? ''),
    listWebhookDeliveries: ({ principal, pathParameters, query }) =>
      management.deliveries(principal, pathParameters.webhook_id ?? '', query),
    redeliverWebhook: ({ principal, pathParameters }) =>
      management.redeliver(principal, pathParameters.webhook_id ?? '', pathParameters.delivery_id ?? ''),
  });
};
