/**
 * The webhooks resource's Lambda: its routes (routes.ts) bound to one call each into the webhook
 * use cases. It checks URLs (core/public-addresses.ts), seals signing secrets with a key derived
 * from the API-key secret, and sends test events and redeliveries to the webhook queue.
 */
import { createWebhookDeliveryStore, createWebhookStore } from '../adapters/dynamodb/webhooks.js';
import { createWebhookUrlCheck } from '../adapters/http/webhook-client.js';
import { createWebhookSecretBox } from '../adapters/secrets-manager/webhook-secret-box.js';
import { type Environment, readResourceConfig } from '../core/config.js';
import { createResourceHandler, type LambdaHandler } from '../core/http.js';
import { createApiRuntime, logFault } from '../core/runtime.js';
import { createWebhookManagement } from '../domain/webhook-management.js';
import { wiringOf } from '../route-declaration.js';
import { type WebhookParts, webhookQueueOf } from './queue.js';
import { webhooksResource } from './routes.js';

export const createHandler = (env: Environment, parts: WebhookParts = {}): LambdaHandler => {
  const config = readResourceConfig(wiringOf(webhooksResource), env);
  const { db, tableName, clock, http } = createApiRuntime(config);
  if (!config.apiKeySecret) throw new Error('the webhooks resource needs the API key secret');
  const management = createWebhookManagement({
    endpoints: createWebhookStore(db, tableName, logFault),
    deliveries: createWebhookDeliveryStore(db, tableName, clock),
    secrets: createWebhookSecretBox(config.apiKeySecret, config.aws),
    queue: webhookQueueOf(config, parts),
    checkUrl: createWebhookUrlCheck({
      allowHosts: config.webhookAllowHosts,
      ...(parts.webhookLookup ? { lookup: parts.webhookLookup } : {}),
    }),
    clock,
  });

  return createResourceHandler(webhooksResource, http(), {
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
