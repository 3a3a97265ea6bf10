/**
 * What the functions that send to the webhook queue (webhooks, pdf, batches, the consumer, the
 * sweeper, the sender) may be handed in place of SQS: the queue itself, and the resolver webhook
 * hosts are judged with. The composition root (functions/services.ts) builds the queue. Apart from
 * index.ts so that the sender's bundle does not carry the API's routes and middleware.
 */
import type { LookupAll } from '../core/public-addresses.js';
import type { MessageQueue } from '../domain/common/ports.js';
import type { WebhookMessage } from '../domain/webhooks/webhooks.js';

export interface WebhookParts {
  /** Tests only: a queue in place of SQS (WEBHOOK_QUEUE_URL). */
  readonly webhookQueue?: MessageQueue<WebhookMessage>;
  /** Tests only: the resolver webhook hosts are judged with (a name that turns private). */
  readonly webhookLookup?: LookupAll;
}
