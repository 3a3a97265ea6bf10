/**
 * The webhook queue in the cloud: SendMessage with a delay and a fair-queue group. An interim
 * adapter of the MessageQueue port, until the shared SQS adapter (functions/adapters/sqs, with
 * pure *Params() builders) lands beside it; the webhook code sees only the port.
 */
import { SendMessageCommand, type SendMessageCommandInput, SQSClient } from '@aws-sdk/client-sqs';
import type { AwsConfig } from '../../core/config.js';
import type { MessageQueue, SendOptions } from '../../domain/ports.js';
import { clientOptions } from '../client-options.js';

export const sendMessageParams = (
  queueUrl: string,
  body: unknown,
  options: SendOptions = {},
): SendMessageCommandInput => ({
  QueueUrl: queueUrl,
  MessageBody: JSON.stringify(body),
  ...(options.delaySeconds
    ? { DelaySeconds: Math.min(900, Math.max(0, Math.round(options.delaySeconds))) }
    : {}),
  ...(options.groupId ? { MessageGroupId: options.groupId } : {}),
});

export const createSqsMessageQueue = <T>(queueUrl: string, aws: AwsConfig): MessageQueue<T> => {
  // AWS_ENDPOINT_URL_SQS, when set, points the SDK at a local server.
  const client = new SQSClient({ ...clientOptions(aws, undefined), maxAttempts: 3 });
  return {
    async send(body, options) {
      await client.send(new SendMessageCommand(sendMessageParams(queueUrl, body, options)));
    },
  };
};
