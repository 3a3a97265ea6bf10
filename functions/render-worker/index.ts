/**
 * The render queue's consumer (Lambda, SQS event source mapping with ReportBatchItemFailures;
 * locally the same handler behind lib/local/sqs/poller.ts): each message names an async job,
 * which domain/render-worker.ts renders once. A message to retry is named in `batchItemFailures`
 * and held back by its backoff (ChangeMessageVisibility); every other one is acknowledged.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { changeVisibility } from '../adapters/sqs/queue.js';
import { type Environment, readResourceConfig } from '../core/config.js';
import { logger } from '../core/logger.js';
import { logFault } from '../core/runtime.js';
import { parseRenderMessage } from '../domain/async-renders.js';
import type { JobEvents, Renderer } from '../domain/ports.js';
import { retryDelaySeconds } from '../domain/render-worker.js';
import * as build from '../services.js';
import { webhookPayloads } from '../webhook-payloads.js';
import type { WebhookParts } from '../webhooks/queue.js';

export interface RenderWorkerParts extends WebhookParts {
  /** The local stack's in-process renderer; in the cloud the async renderer Lambda is invoked. */
  readonly renderer?: Renderer;
  /** In place of the webhook job events. @default the webhook endpoint each job names is told */
  readonly events?: JobEvents;
}

export type RenderWorkerHandler = (event: SQSEvent) => Promise<SQSBatchResponse>;

export const createRenderWorkerHandler = (
  env: Environment,
  parts: RenderWorkerParts,
): RenderWorkerHandler => {
  const config = readResourceConfig(
    {
      table: true,
      userPool: false,
      apiKeySecret: false,
      pdfBucket: true,
      renderer: true,
      renderQueue: true,
      // An async job that names a webhook endpoint tells it when it ends.
      webhookQueue: true,
    },
    env,
  );
  const services = build.createServices(config, parts, webhookPayloads);
  const { settings } = services;
  const queueUrl = config.renderQueueUrl as string;
  const sqs = services.get(build.sqs);
  const worker = services.get(build.renderWorker);

  /** True: acknowledge the record; false: it comes back (after `delaySeconds` when that was set). */
  const handleRecord = async (record: SQSRecord): Promise<boolean> => {
    const message = parseRenderMessage(record.body);
    if (!message) {
      // Nothing can ever process it: acknowledged and logged, not left to poison the queue.
      logger.error('render queue: a message that names no job', { messageId: record.messageId });
      return true;
    }
    let delaySeconds: number;
    try {
      const outcome = await worker.handle(message);
      if (outcome.kind === 'done') {
        logger.info('render queue: message done', { jobId: message.job_id, why: outcome.why });
        return true;
      }
      delaySeconds = outcome.delaySeconds;
    } catch (e) {
      // Nothing was decided (the table or the bucket failed): the message comes back with a backoff.
      logFault(`render queue: job ${message.job_id} could not be handled`, e);
      const received = Number(record.attributes.ApproximateReceiveCount) || 1;
      delaySeconds = retryDelaySeconds(settings.asyncRetryBaseSeconds, received);
    }
    await changeVisibility(sqs, queueUrl, record.receiptHandle, delaySeconds).catch((e) =>
      logFault('render queue: holding a message back failed (it comes back after its visibility timeout)', e),
    );
    return false;
  };

  return async (event) => {
    const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
    // One at a time: a consumer renders one document at once (batch size 1 in the cloud).
    for (const record of event.Records) {
      if (!(await handleRecord(record))) batchItemFailures.push({ itemIdentifier: record.messageId });
    }
    return { batchItemFailures };
  };
};
