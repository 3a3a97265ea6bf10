/**
 * The webhook sender's Lambda: a consumer of the webhook queue (an SQS event source mapping with
 * ReportBatchItemFailures in the cloud; the local stack's poller feeds it the same SQSEvent). Each
 * record is one attempt (domain/webhook-sender.ts); a record that fails on our side (the table, the
 * queue) is named in batchItemFailures and comes back after its visibility timeout. It needs the
 * table, the API-key secret (signing secrets are sealed under a key derived from it) and the queue;
 * no user pool, no bucket, no VPC (egress is checked in code: adapters/http/webhook-client.ts).
 */
import { webhookSender } from '../consumers.js';
import type { ResourceConfig } from '../core/config.js';
import { jsonMessage, type MessageHandler, queueConsumer, RetryMessage } from '../core/consumer.js';
import { countWith } from '../core/metrics.js';
import { logFault } from '../core/runtime.js';
import type { WebhookMessage } from '../domain/webhooks/webhooks.js';
import * as build from '../services.js';
import type { WebhookParts } from '../webhooks/queue.js';
import { SERVICE_METRICS } from '../wiring.js';

const isMessage = (body: unknown): body is WebhookMessage => {
  const m = body as Partial<WebhookMessage> | null;
  return (
    typeof m === 'object' &&
    m !== null &&
    m.v === 1 &&
    typeof m.account_id === 'string' &&
    typeof m.webhook_id === 'string' &&
    typeof m.delivery_id === 'string' &&
    typeof m.attempt === 'number'
  );
};

/** Its configuration has the bindings its entry declares (functions/consumers.ts). */
const createMessageHandler = (
  config: ResourceConfig,
  parts: WebhookParts,
): MessageHandler<WebhookMessage> => {
  const sender = build.createServices(config, parts).get(build.webhookSender);
  return {
    parse: jsonMessage(isMessage),
    invalid: { level: 'warn', message: 'webhook message dropped: not a webhook message' },
    // One record per run (its entry's batchSize): an attempt ends with its own POST.
    async handle(message) {
      try {
        const outcome = await sender.handle(message);
        if (outcome !== 'duplicate' && outcome !== 'waiting' && outcome !== 'deferred') {
          countWith(SERVICE_METRICS.webhookAttempts, { outcome });
        }
      } catch (e) {
        logFault('webhook attempt failed on our side; the message comes back', e);
        countWith(SERVICE_METRICS.webhookSenderFaults, {});
        throw new RetryMessage('the sender failed on its own side');
      }
    },
  };
};

/** The handler factory (the local stack's) and the Lambda's entry, in the one consumer stack. */
export const { createHandler, handler } = queueConsumer(webhookSender, createMessageHandler);
