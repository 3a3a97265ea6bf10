/**
 * The delivery queue's consumer (functions/consumers.ts): each message is one attempt to copy a
 * completed job's PDF into its destination, the customer's bucket (domain/destinations/deliveries.ts).
 * A failed put is the deliverer's to retry (on the webhook schedule) and to tell once; a fault of
 * ours (the table, the bucket, the queue) brings the message back, and after its receives it goes
 * to the dead-letter queue.
 */
import { deliveries } from '../consumers.js';
import type { ResourceConfig } from '../core/config.js';
import { jsonMessage, type MessageHandler, queueConsumer, RetryMessage } from '../core/consumer.js';
import { logger } from '../core/logger.js';
import { logFault } from '../core/runtime.js';
import type { DeliveryMessage } from '../domain/destinations/deliveries.js';
import type { DestinationWriter } from '../domain/destinations/destinations.js';
import * as build from '../services.js';
import { webhookPayloads } from '../webhook-payloads.js';
import type { WebhookParts } from '../webhooks/queue.js';

/** What the local stack hands it beside the webhook parts: its writer (STS stand-in, S3 server). */
export interface DeliveryParts extends WebhookParts {
  readonly destinationWriter?: DestinationWriter;
}

const isMessage = (body: unknown): body is DeliveryMessage => {
  const m = body as Partial<DeliveryMessage> | null;
  return (
    typeof m === 'object' &&
    m !== null &&
    typeof m.account_id === 'string' &&
    typeof m.job_id === 'string' &&
    Number.isInteger(m.attempt) &&
    (m.attempt as number) >= 1
  );
};

const createMessageHandler = (
  config: ResourceConfig,
  parts: DeliveryParts,
): MessageHandler<DeliveryMessage> => {
  const deliverer = build.createServices(config, parts, webhookPayloads).get(build.deliverer);
  return {
    parse: jsonMessage(isMessage),
    invalid: { level: 'error', message: 'delivery queue: a message that names no job attempt' },
    async handle(message) {
      try {
        const outcome = await deliverer.handle(message);
        logger.info('delivery: message done', { jobId: message.job_id, attempt: message.attempt, outcome });
      } catch (e) {
        logFault(
          `delivery: job ${message.job_id}'s attempt ${message.attempt} failed on our side; the message comes back`,
          e,
        );
        throw new RetryMessage('the delivery could not be attempted');
      }
    },
  };
};

/** The handler factory (the local stack's) and the Lambda's entry, in the one consumer stack. */
export const { createHandler, handler } = queueConsumer(deliveries, createMessageHandler);
