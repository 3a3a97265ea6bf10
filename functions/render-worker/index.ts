/**
 * The render queue's consumer (functions/consumers.ts: an SQS event source mapping with
 * ReportBatchItemFailures; locally the same handler behind lib/local/sqs/poller.ts): each message
 * names an async job, which domain/render-worker.ts renders once. A message to retry is held back
 * by its backoff (ChangeMessageVisibility) and comes back; every other one is acknowledged.
 */
import { createBatchStore } from '../adapters/dynamodb/batches.js';
import { createDocumentClient } from '../adapters/dynamodb/client.js';
import { createIdempotencyStore } from '../adapters/dynamodb/idempotency.js';
import { createJobStore } from '../adapters/dynamodb/jobs.js';
import { createTemplateStore } from '../adapters/dynamodb/templates.js';
import { createUsageStore } from '../adapters/dynamodb/usage.js';
import { createWebhookDeliveryStore, createWebhookStore } from '../adapters/dynamodb/webhooks.js';
import { createS3BatchOrders } from '../adapters/s3/batch-orders.js';
import { createS3Client } from '../adapters/s3/client.js';
import { createS3PdfStorage } from '../adapters/s3/pdf-storage.js';
import { createS3RenderOrders } from '../adapters/s3/render-orders.js';
import { createSqsClient } from '../adapters/sqs/client.js';
import { changeVisibility } from '../adapters/sqs/queue.js';
import { batchResponse } from '../batches/schemas.js';
import { renderWorker } from '../consumers.js';
import type { ResourceConfig } from '../core/config.js';
import { type MessageHandler, queueConsumer, RetryMessage } from '../core/consumer.js';
import { logger } from '../core/logger.js';
import { createLambdaRenderer } from '../core/renderer-client.js';
import { logFault, systemClock } from '../core/runtime.js';
import { parseRenderMessage, type RenderMessage } from '../domain/async-renders.js';
import { createBatchOrderReader } from '../domain/batch-queue.js';
import { createBatchCounter } from '../domain/batches.js';
import { type Job, jobRecordRetentionSeconds } from '../domain/jobs.js';
import { createPdfJobs } from '../domain/pdf-jobs.js';
import type { JobEvents, Renderer } from '../domain/ports.js';
import { createRenderWorker, retryDelaySeconds } from '../domain/render-worker.js';
import { createWebhookBatchEvents, createWebhookJobEvents } from '../domain/webhook-events.js';
import { createWebhookEmitter } from '../domain/webhook-management.js';
import { jobResponse } from '../pdf/schemas.js';
import { DEFAULT_PLAN } from '../settings.js';
import { type WebhookParts, webhookQueueOf } from '../webhooks/queue.js';

export interface RenderWorkerParts extends WebhookParts {
  /** The local stack's in-process renderer; in the cloud the async renderer Lambda is invoked. */
  readonly renderer?: Renderer;
  /** @default none (NO_JOB_EVENTS) */
  readonly events?: JobEvents;
}

/** Its configuration has the bindings its entry declares (functions/consumers.ts). */
const createMessageHandler = (
  config: ResourceConfig,
  parts: RenderWorkerParts,
): MessageHandler<RenderMessage> => {
  const { settings } = config;
  const renderer =
    parts.renderer ??
    (config.rendererFunctionName ? createLambdaRenderer(config.rendererFunctionName, config.aws) : undefined);
  if (!renderer)
    throw new Error('the render queue consumer needs RENDERER_FUNCTION_NAME, or a renderer handed in');
  const tableName = config.tableName as string;
  const bucketName = config.bucketName as string;
  const queueUrl = config.renderQueueUrl as string;
  const db = createDocumentClient(config.aws);
  const s3 = createS3Client(config.aws);
  const sqs = createSqsClient(config.aws);
  const clock = systemClock;
  const recordRetentionSeconds = jobRecordRetentionSeconds(settings.pdfRetentionDays);
  const jobs = createJobStore(db, tableName, clock, { recordRetentionSeconds });
  // A job that names an endpoint tells it when it ends, with the job as GET /v1/pdf/{id} shows it;
  // a batch that names one tells it when its last job ended.
  let describe: (job: Job) => Promise<unknown> = async () => undefined;
  const endpoints = createWebhookStore(db, tableName, logFault);
  const emitter = createWebhookEmitter({
    deliveries: createWebhookDeliveryStore(db, tableName, clock),
    queue: webhookQueueOf(config, parts),
    clock,
  });
  // A batch's job that ends is counted on its batch here, where async jobs end.
  const batchOrders = createS3BatchOrders(s3, bucketName);
  const batchCounter = createBatchCounter({
    batches: createBatchStore(db, tableName, clock, { recordRetentionSeconds }),
    orders: batchOrders,
    events: createWebhookBatchEvents({ endpoints, emitter, describe: batchResponse, onFault: logFault }),
    onFault: logFault,
  });
  const webhookEvents =
    parts.events ??
    createWebhookJobEvents({ endpoints, emitter, describe: (job) => describe(job), onFault: logFault });
  const events: JobEvents = {
    async ended(job) {
      await Promise.all([
        job.batch_id ? batchCounter.jobEvents.ended(job) : undefined,
        webhookEvents.ended(job),
      ]);
    },
  };
  const pdfJobs = createPdfJobs({
    jobs,
    usage: createUsageStore(db, tableName, clock),
    // Neither is used by a consumer (the order carries the template; no idempotency key is claimed here).
    templates: createTemplateStore(db, tableName, clock, { onFault: logFault }),
    idempotency: createIdempotencyStore(db, tableName, clock, 20_000, 30_000),
    storage: createS3PdfStorage(s3, bucketName, {
      downloadUrlTtlSeconds: settings.downloadUrlTtlSeconds,
      uploadUrlTtlSeconds: Math.ceil(settings.asyncRenderBudgetMs / 1000) + 300,
    }),
    renderer,
    clock,
    plans: settings.plans,
    defaultPlan: DEFAULT_PLAN,
    limits: settings,
    onFault: logFault,
    events,
  });
  describe = async (job) => jobResponse(await pdfJobs.present(job));
  const worker = createRenderWorker({
    pdfJobs,
    jobs,
    orders: createS3RenderOrders(s3, bucketName),
    batchOrders: createBatchOrderReader(batchOrders),
    clock,
    limits: settings,
    onFault: logFault,
  });

  return {
    parse: parseRenderMessage,
    // Nothing can ever process it: acknowledged and logged, not left to poison the queue.
    invalid: { level: 'error', message: 'render queue: a message that names no job' },
    async handle(message, record) {
      let delaySeconds: number;
      try {
        const outcome = await worker.handle(message);
        if (outcome.kind === 'done') {
          logger.info('render queue: message done', { jobId: message.job_id, why: outcome.why });
          return;
        }
        delaySeconds = outcome.delaySeconds;
      } catch (e) {
        // Nothing was decided (the table or the bucket failed): the message comes back with a backoff.
        logFault(`render queue: job ${message.job_id} could not be handled`, e);
        const received = Number(record.attributes.ApproximateReceiveCount) || 1;
        delaySeconds = retryDelaySeconds(settings.asyncRetryBaseSeconds, received);
      }
      await changeVisibility(sqs, queueUrl, record.receiptHandle, delaySeconds).catch((e) =>
        logFault(
          'render queue: holding a message back failed (it comes back after its visibility timeout)',
          e,
        ),
      );
      throw new RetryMessage(`job ${message.job_id} is retried in ${delaySeconds} s`);
    },
  };
};

/** The handler factory (the local stack's) and the Lambda's entry, in the one consumer stack. */
export const { createHandler, handler } = queueConsumer(renderWorker, createMessageHandler);
