/**
 * A MessageQueue (domain/ports.ts) on SQS. Requests are built by the pure `*Params()` functions
 * below (tested without AWS); the queue only sends them. Bodies are JSON.
 */
import {
  ChangeMessageVisibilityCommand,
  type ChangeMessageVisibilityCommandInput,
  SendMessageBatchCommand,
  type SendMessageBatchCommandInput,
  SendMessageCommand,
  type SendMessageCommandInput,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { MessageQueue, SendOptions } from '../../domain/common/ports.js';

/** SQS takes at most 10 messages per batch. */
export const SQS_BATCH_SIZE = 10;

const optionsOf = (options: SendOptions) => ({
  ...(options.delaySeconds !== undefined ? { DelaySeconds: options.delaySeconds } : {}),
  ...(options.groupId !== undefined ? { MessageGroupId: options.groupId } : {}),
});

export const sendMessageParams = (
  queueUrl: string,
  body: unknown,
  options: SendOptions = {},
): SendMessageCommandInput => ({
  QueueUrl: queueUrl,
  MessageBody: JSON.stringify(body),
  ...optionsOf(options),
});

/** One SendMessageBatch per 10 bodies. */
export const sendMessageBatchParams = (
  queueUrl: string,
  bodies: readonly unknown[],
  options: SendOptions = {},
): SendMessageBatchCommandInput[] => {
  const batches: SendMessageBatchCommandInput[] = [];
  for (let i = 0; i < bodies.length; i += SQS_BATCH_SIZE) {
    batches.push({
      QueueUrl: queueUrl,
      Entries: bodies.slice(i, i + SQS_BATCH_SIZE).map((body, n) => ({
        Id: String(n),
        MessageBody: JSON.stringify(body),
        ...optionsOf(options),
      })),
    });
  }
  return batches;
};

/** A received message comes back after `seconds` (0: at once): a consumer's retry backoff. */
export const changeVisibilityParams = (
  queueUrl: string,
  receiptHandle: string,
  seconds: number,
): ChangeMessageVisibilityCommandInput => ({
  QueueUrl: queueUrl,
  ReceiptHandle: receiptHandle,
  VisibilityTimeout: seconds,
});

export const createSqsQueue = <T>(client: SQSClient, queueUrl: string): MessageQueue<T> => ({
  async send(body, options) {
    await client.send(new SendMessageCommand(sendMessageParams(queueUrl, body, options)));
  },
  async sendMany(bodies, options) {
    for (const batch of sendMessageBatchParams(queueUrl, bodies, options)) {
      const out = await client.send(new SendMessageBatchCommand(batch));
      // A partial failure is a failure: the caller retries the whole call (duplicates are harmless).
      if (out.Failed && out.Failed.length > 0) {
        const first = out.Failed[0];
        throw new Error(`SQS refused ${out.Failed.length} of a batch: ${first?.Code} ${first?.Message}`);
      }
    }
  },
});

export const changeVisibility = async (
  client: SQSClient,
  queueUrl: string,
  receiptHandle: string,
  seconds: number,
): Promise<void> => {
  await client.send(
    new ChangeMessageVisibilityCommand(changeVisibilityParams(queueUrl, receiptHandle, seconds)),
  );
};
