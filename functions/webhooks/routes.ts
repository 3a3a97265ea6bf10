/**
 * The webhook routes (session only, like API keys): endpoints (the signing secret shown once),
 * a test event, and each endpoint's deliveries with every attempt, redeliverable.
 */
import { z } from 'zod';
import { type Page, pageQuerySchema } from '../core/page-query.js';
import { WEBHOOK_EVENT_TYPES } from '../domain/webhooks/webhooks.js';
import { resource, route, SESSION_ONLY } from '../route-declaration.js';
import { type CreateWebhookBody, createWebhookSchema } from './request.js';

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds, e.g. 2026-11-21T10:00:00.000Z');
const eventType = z.enum([...WEBHOOK_EVENT_TYPES, 'webhook.test']);

/** An endpoint as listings show it: never its secret. */
export const webhookSchema = z.object({
  id: z.string().describe('wh_ followed by a ULID'),
  url: z.string(),
  description: z.string().nullable(),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
  created_at: timestamp,
});

export const createdWebhookSchema = webhookSchema.extend({
  secret: z
    .string()
    .describe(
      'the Standard Webhooks signing secret, whsec_ and base64: shown in this answer only, never again',
    ),
});

export const deliveryAttemptSchema = z.object({
  attempt: z.number().int().describe('1 for the first'),
  attempted_at: timestamp,
  outcome: z.enum(['succeeded', 'failed']),
  response_status: z.number().int().nullable().describe("the receiver's HTTP status; null when none came"),
  duration_ms: z.number().int(),
  error: z.string().nullable().describe('why the attempt failed (timeout, refused address, non-2xx)'),
});

export const deliverySchema = z.object({
  id: z.string().describe('msg_ followed by a ULID: the webhook-id header of every attempt'),
  webhook_id: z.string(),
  event_type: eventType,
  status: z
    .enum(['pending', 'succeeded', 'failed'])
    .describe('pending: an attempt is due; failed: the retry window closed without a 2xx'),
  created_at: timestamp,
  updated_at: timestamp,
  next_attempt_at: timestamp.nullable(),
  payload: z
    .record(z.string(), z.unknown())
    .describe(
      'the event as sent: the Standard Webhooks payload (type, timestamp, data) whose bytes every attempt signs',
    ),
  attempts: z.array(deliveryAttemptSchema),
});

const webhook = { name: 'Webhook', schema: webhookSchema };
const delivery = { name: 'WebhookDelivery', schema: deliverySchema };

export const webhooksResource = resource({
  name: 'webhooks',
  description: 'The webhooks API: endpoints, test events, deliveries and redelivery (session only)',
  needs: { table: 'readWrite', webhookQueue: true },
  routes: {
    createWebhook: route<CreateWebhookBody>({
      method: 'POST',
      path: '/v1/webhooks',
      credentials: SESSION_ONLY,
      body: { schema: () => createWebhookSchema },
      summary: 'Create a webhook endpoint; the answer is the only time its signing secret is shown',
      success: {
        status: 201,
        description: 'the new endpoint, with `secret`',
        body: { name: 'CreatedWebhook', schema: createdWebhookSchema },
      },
      errors: ['VALIDATION_ERROR', 'WEBHOOK_URL_NOT_ALLOWED', 'WEBHOOK_LIMIT_REACHED'],
    }),
    listWebhooks: route({
      method: 'GET',
      path: '/v1/webhooks',
      credentials: SESSION_ONLY,
      summary: "The caller's webhook endpoints, newest first (never their secrets)",
      success: { status: 200, description: 'endpoints', body: { ...webhook, array: true } },
      errors: [],
    }),
    getWebhook: route({
      method: 'GET',
      path: '/v1/webhooks/{webhook_id}',
      credentials: SESSION_ONLY,
      summary: 'A webhook endpoint',
      success: { status: 200, description: 'the endpoint', body: webhook },
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
    }),
    deleteWebhook: route({
      method: 'DELETE',
      path: '/v1/webhooks/{webhook_id}',
      credentials: SESSION_ONLY,
      summary: 'Delete a webhook endpoint: nothing more is sent to it',
      success: { status: 200, description: 'the endpoint as it was', body: webhook },
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
    }),
    testWebhook: route({
      method: 'POST',
      path: '/v1/webhooks/{webhook_id}/test',
      credentials: SESSION_ONLY,
      summary: 'Send a webhook.test event to the endpoint (delivered like any event, with retries)',
      success: { status: 201, description: 'the delivery, pending', body: delivery },
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
    }),
    listWebhookDeliveries: route<undefined, Page>({
      method: 'GET',
      path: '/v1/webhooks/{webhook_id}/deliveries',
      credentials: SESSION_ONLY,
      query: pageQuerySchema,
      summary: "The endpoint's deliveries, newest first, each with every attempt",
      success: { status: 200, description: 'deliveries', body: { ...delivery, array: true } },
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
    }),
    redeliverWebhook: route({
      method: 'POST',
      path: '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver',
      credentials: SESSION_ONLY,
      summary: 'Send a delivery again (same webhook-id, same payload), with a new retry window',
      success: { status: 200, description: 'the delivery, pending again', body: delivery },
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'WEBHOOK_DELIVERY_NOT_FOUND'],
    }),
  },
});
