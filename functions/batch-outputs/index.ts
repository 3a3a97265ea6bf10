/**
 * The batch output queue's consumer (functions/consumers.ts): each message names a completed batch
 * whose merged PDF or ZIP is to be built (domain/batches/batch-outputs.ts), once. A fault of ours
 * (the table, the bucket) is retried: the message comes back, and after its receives it goes to
 * the dead-letter queue.
 */
import { batchOutputs } from '../consumers.js';
import type { ResourceConfig } from '../core/config.js';
import { jsonMessage, type MessageHandler, queueConsumer, RetryMessage } from '../core/consumer.js';
import { logger } from '../core/logger.js';
import { logFault } from '../core/runtime.js';
import type { BatchOutputMessage } from '../domain/batches/batch-outputs.js';
import * as build from '../services.js';
import { webhookPayloads } from '../webhook-payloads.js';
import type { WebhookParts } from '../webhooks/queue.js';

const isMessage = (body: unknown): body is BatchOutputMessage => {
  const m = body as Partial<BatchOutputMessage> | null;
  return (
    typeof m === 'object' &&
    m !== null &&
    m.v === 1 &&
    typeof m.account_id === 'string' &&
    typeof m.batch_id === 'string'
  );
};

const createMessageHandler = (
  config: ResourceConfig,
  parts: WebhookParts,
): MessageHandler<BatchOutputMessage> => {
  const builder = build.createServices(config, parts, webhookPayloads).get(build.batchOutputBuilder);
  return {
    parse: jsonMessage(isMessage),
    invalid: { level: 'error', message: 'batch output queue: a message that names no batch' },
    async handle(message) {
      try {
        const outcome = await builder.handle(message);
        logger.info('batch outputs: message done', { batchId: message.batch_id, outcome });
      } catch (e) {
        logFault(`batch outputs: batch ${message.batch_id} could not be built; the message comes back`, e);
        throw new RetryMessage('the batch outputs could not be built');
      }
    },
  };
};

/** The handler factory (the local stack's) and the Lambda's entry, in the one consumer stack. */
export const { createHandler, handler } = queueConsumer(batchOutputs, createMessageHandler);
