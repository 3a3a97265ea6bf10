/**
 * The webhook queue as the functions that send to it get it (webhooks, pdf, batches, the consumer,
 * the sweeper, the sender): SQS by WEBHOOK_QUEUE_URL (the local stack's own SQS server by
 * AWS_ENDPOINT_URL_SQS), or one a test hands in. Apart from index.ts so that the sender's
 * bundle does not carry the API's routes and middleware.
 */
import { createSqsClient } from '../adapters/sqs/client.js';
import { createSqsQueue } from '../adapters/sqs/queue.js';
import type { ResourceConfig } from '../core/config.js';
import type { LookupAll } from '../core/public-addresses.js';
import type { MessageQueue } from '../domain/ports.js';
import type { WebhookMessage } from '../domain/webhooks.js';

export interface WebhookParts {
  /** Tests only: a queue in place of SQS (WEBHOOK_QUEUE_URL). */
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
  return createSqsQueue<WebhookMessage>(createSqsClient(config.aws), config.webhookQueueUrl);
};
