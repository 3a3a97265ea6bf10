/**
 * The webhook queue as the functions that send to it get it (webhooks, pdf, the sender): the one
 * the local stack hands in, or SQS by WEBHOOK_QUEUE_URL. Apart from index.ts so that the sender's
 * bundle does not carry the API's routes and middleware.
 */
import { createSqsMessageQueue } from '../adapters/sqs/webhook-queue-interim.js';
import type { ResourceConfig } from '../core/config.js';
import type { LookupAll } from '../core/public-addresses.js';
import type { MessageQueue } from '../domain/ports.js';
import type { WebhookMessage } from '../domain/webhooks.js';

export interface WebhookParts {
  /** The local stack's webhook queue; in the cloud, SQS (WEBHOOK_QUEUE_URL). */
  readonly webhookQueue?: MessageQueue<WebhookMessage>;
  /** Tests only: the resolver webhook hosts are judged with (a name that turns private). */
  readonly webhookLookup?: LookupAll;
}

export const webhookQueueOf = (
  config: Pick<ResourceConfig, 'webhookQueueUrl' | 'aws'>,
  parts: WebhookParts,
): MessageQueue<WebhookMessage> => {
  if (parts.webhookQueue) return parts.webhookQueue;
  if (!config.webhookQueueUrl) throw new Error('webhooks need WEBHOOK_QUEUE_URL, or a queue handed in');
  return createSqsMessageQueue<WebhookMessage>(config.webhookQueueUrl, config.aws);
};
