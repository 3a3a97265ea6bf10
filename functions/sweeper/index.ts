/**
 * The sweeper's Lambda (EventBridge, every minute) and the local stack's timer both run this:
 * one pass of the sweeper use case (domain/sweeper.ts) over the table, on the schedule of its
 * entry in functions/consumers.ts. It needs the table, the render queue (async jobs sent again)
 * and the webhook queue (a job it fails that names an endpoint sends job.failed, a batch it ends
 * sends batch.completed, and pending deliveries whose message never came are queued again); no
 * user pool, no bucket, no renderer.
 */
import { createBatchStore } from '../adapters/dynamodb/batches.js';
import { createDocumentClient } from '../adapters/dynamodb/client.js';
import { createJobStore } from '../adapters/dynamodb/jobs.js';
import { createUsageStore } from '../adapters/dynamodb/usage.js';
import { createWebhookDeliveryStore, createWebhookStore } from '../adapters/dynamodb/webhooks.js';
import { createSqsClient } from '../adapters/sqs/client.js';
import { createSqsQueue } from '../adapters/sqs/queue.js';
import { batchResponse } from '../batches/schemas.js';
import { sweeper as sweeperEntry } from '../consumers.js';
import type { ResourceConfig } from '../core/config.js';
import { scheduledConsumer } from '../core/consumer.js';
import { logger } from '../core/logger.js';
import { logFault, systemClock } from '../core/runtime.js';
import type { RenderMessage } from '../domain/async-renders.js';
import { createBatchCounter } from '../domain/batches.js';
import { fileExpiresAt, type JobView, jobRecordRetentionSeconds } from '../domain/jobs.js';
import type { JobEvents } from '../domain/ports.js';
import { createSweeper, type SweepReport } from '../domain/sweeper.js';
import { createWebhookBatchEvents, createWebhookJobEvents } from '../domain/webhook-events.js';
import { createWebhookEmitter } from '../domain/webhook-management.js';
import { createOverdueDeliveries } from '../domain/webhook-sender.js';
import { jobResponse } from '../pdf/schemas.js';
import { type WebhookParts, webhookQueueOf } from '../webhooks/queue.js';

export type SweepRun = () => Promise<SweepReport>;

/** Its configuration has the bindings its entry declares (functions/consumers.ts). */
const createSweepRun = (config: ResourceConfig, parts: WebhookParts): SweepRun => {
  const { settings } = config;
  const tableName = config.tableName as string;
  const db = createDocumentClient(config.aws);
  const sqs = createSqsClient(config.aws);
  const clock = systemClock;
  const recordRetentionSeconds = jobRecordRetentionSeconds(settings.pdfRetentionDays);
  const webhookQueue = webhookQueueOf(config, parts);
  const deliveries = createWebhookDeliveryStore(db, tableName, clock);
  const endpoints = createWebhookStore(db, tableName, logFault);
  const emitter = createWebhookEmitter({ deliveries, queue: webhookQueue, clock });
  // A batch's job that the sweeper fails is counted on its batch at once (not at the next read),
  // and the batch it ends tells its endpoint, as the consumer's count does.
  const batchCounter = createBatchCounter({
    batches: createBatchStore(db, tableName, clock, { recordRetentionSeconds }),
    events: createWebhookBatchEvents({ endpoints, emitter, describe: batchResponse, onFault: logFault }),
    onFault: logFault,
  });
  // The sweeper only fails jobs, and a failed job has no file: its view needs no bucket.
  const present = (job: JobView['job']): JobView => ({
    job,
    downloadUrl: null,
    fileExpiresAt: fileExpiresAt(job, settings.pdfRetentionDays)?.toISOString() ?? null,
    fileExpired: false,
  });
  const webhookEvents = createWebhookJobEvents({
    endpoints,
    emitter,
    describe: async (job) => jobResponse(present(job)),
    onFault: logFault,
  });
  const events: JobEvents = {
    async ended(job) {
      await Promise.all([
        job.batch_id ? batchCounter.jobEvents.ended(job) : undefined,
        webhookEvents.ended(job),
      ]);
    },
  };
  const sweeper = createSweeper({
    // The sweeper writes no job; the retention is the deployment's all the same.
    jobs: createJobStore(db, tableName, clock, { recordRetentionSeconds }),
    usage: createUsageStore(db, tableName, clock),
    clock,
    onFault: logFault,
    renderQueue: createSqsQueue<RenderMessage>(sqs, config.renderQueueUrl as string),
    limits: settings,
    events,
    overdueDeliveries: createOverdueDeliveries({
      deliveries,
      queue: webhookQueue,
      clock,
      overdueSeconds: settings.webhookOverdueSeconds,
      onFault: logFault,
    }),
  });
  return async () => {
    const report = await sweeper.sweep();
    if (report.expired > 0 || (report.redelivered ?? 0) > 0) logger.info('sweep', { ...report });
    return report;
  };
};

/** The handler factory (the local stack's timer) and the Lambda's entry, in the one consumer stack. */
export const { createHandler, handler } = scheduledConsumer(sweeperEntry, createSweepRun);
