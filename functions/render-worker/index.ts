/**
 * The render queue's consumer (functions/consumers.ts: an SQS event source mapping with
 * ReportBatchItemFailures; locally the same handler behind lib/local/sqs/poller.ts): each message
 * names an async job, which domain/render-worker.ts renders once. A message to retry is held back
 * by its backoff (ChangeMessageVisibility) and comes back; every other one is acknowledged.
 */

import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { changeVisibility, sendMessageParams } from '../adapters/sqs/queue.js';
import { renderWorker } from '../consumers.js';
import type { ResourceConfig } from '../core/config.js';
import { type MessageHandler, queueConsumer, RetryMessage } from '../core/consumer.js';
import { logger } from '../core/logger.js';
import { logFault } from '../core/runtime.js';
import type { JobEvents, Renderer } from '../domain/common/ports.js';
import { parseRenderMessage, type RenderMessage } from '../domain/renders/async-renders.js';
import type { RunOutcomes } from '../domain/renders/render-run.js';
import { retryDelaySeconds } from '../domain/renders/render-worker.js';
import * as build from '../services.js';
import { webhookPayloads } from '../webhook-payloads.js';
import type { WebhookParts } from '../webhooks/queue.js';

export interface RenderWorkerParts extends WebhookParts {
  /** The local stack's in-process renderer; in the cloud the async renderer Lambda is invoked. */
  readonly renderer?: Renderer;
  /** In place of the webhook job events. @default the webhook endpoint each job names is told */
  readonly events?: JobEvents;
}

/** Its configuration has the bindings its entry declares (functions/consumers.ts). */
const createMessageHandler = (
  config: ResourceConfig,
  parts: RenderWorkerParts,
): MessageHandler<RenderMessage> => {
  const services = build.createServices(config, parts, webhookPayloads);
  const { settings } = services;
  const queueUrl = config.renderQueueUrl as string;
  const sqs = services.get(build.sqs);
  const worker = services.get(build.renderWorker);

  const runs = services.get(build.runWorker);

  /** The message comes back: after its backoff, or now (a run's item never started). */
  const comeBack = async (
    message: RenderMessage,
    record: SQSRecord,
    delaySeconds: number,
  ): Promise<RetryMessage> => {
    await changeVisibility(sqs, queueUrl, record.receiptHandle, delaySeconds).catch((e) =>
      logFault('render queue: holding a message back failed (it comes back after its visibility timeout)', e),
    );
    return new RetryMessage(`job ${message.job_id} is retried in ${delaySeconds} s`);
  };

  /**
   * Messages of jobs a batch run did not take or released, sent again as new messages (the job's
   * account its group): a returned message would spend a receive (render-run.ts). Sent before the
   * received one is acknowledged; a duplicate is dropped at claim.
   */
  const sendAgain = async (messages: readonly (RenderMessage | undefined)[]): Promise<void> => {
    await Promise.all(
      messages.map((m) =>
        m
          ? sqs.send(new SendMessageCommand(sendMessageParams(queueUrl, m, { groupId: m.account_id })))
          : undefined,
      ),
    );
  };

  /** What a message's outcome asks of the queue: nothing (acknowledged), or its return. */
  const settle = async (
    message: RenderMessage,
    record: SQSRecord,
    outcome: RunOutcomes[number],
  ): Promise<RetryMessage | undefined> => {
    let delaySeconds: number;
    // Sent again afresh by the run (handBack): this one is acknowledged.
    if ('kind' in outcome && outcome.kind === 'sent') return undefined;
    if ('kind' in outcome && outcome.kind === 'later') {
      // Released and not sent (never the case once a run ends): back now, not lost.
      delaySeconds = 0;
    } else if ('error' in outcome) {
      // Nothing was decided (the table or the bucket failed): the message comes back with a backoff.
      logFault(`render queue: job ${message.job_id} could not be handled`, outcome.error);
      const received = Number(record.attributes.ApproximateReceiveCount) || 1;
      delaySeconds = retryDelaySeconds(settings.asyncRetryBaseSeconds, received);
    } else if (outcome.kind === 'done') {
      logger.info('render queue: message done', { jobId: message.job_id, why: outcome.why });
      return undefined;
    } else {
      delaySeconds = outcome.delaySeconds;
    }
    return comeBack(message, record, delaySeconds);
  };

  return {
    parse: parseRenderMessage,
    // Nothing can ever process it: acknowledged and logged, not left to poison the queue.
    invalid: { level: 'error', message: 'render queue: a message that names no job' },
    async handle(message, record) {
      const outcome = await worker.handle(message).catch((error: unknown) => ({ error }));
      const back = await settle(message, record, outcome);
      if (back) throw back;
    },
    // A batch's items among the messages render as one run (domain/renders/render-run.ts).
    async handleAll(items) {
      // The run sends again, once each, the messages it did not take or released (handBack); a
      // message whose sending failed has its error and comes back after its backoff.
      const outcomes = await runs.handleRun(
        items.map((i) => i.message),
        (indexes) => sendAgain(indexes.map((i) => items[i]?.message)),
      );
      return Promise.all(
        items.map(({ message, record }, i) =>
          settle(message, record, outcomes[i] ?? { error: new Error('no outcome') }),
        ),
      );
    },
  };
};

/** The handler factory (the local stack's) and the Lambda's entry, in the one consumer stack. */
export const { createHandler, handler } = queueConsumer(renderWorker, createMessageHandler);
