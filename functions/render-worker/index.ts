/**
 * The render queue's consumer (Lambda, SQS event source mapping with ReportBatchItemFailures;
 * locally the same handler behind lib/local/sqs/poller.ts): each message names an async job,
 * which domain/render-worker.ts renders once. A message to retry is named in `batchItemFailures`
 * and held back by its backoff (ChangeMessageVisibility); every other one is acknowledged.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { createBatchStore } from '../adapters/dynamodb/batches.js';
import { createDocumentClient } from '../adapters/dynamodb/client.js';
import { createIdempotencyStore } from '../adapters/dynamodb/idempotency.js';
import { createJobStore } from '../adapters/dynamodb/jobs.js';
import { createTemplateStore } from '../adapters/dynamodb/templates.js';
import { createUsageStore } from '../adapters/dynamodb/usage.js';
import { createWebhookDeliveryStore, createWebhookStore } from '../adapters/dynamodb/webhooks.js';
import { createLambdaRenderer } from '../adapters/lambda/renderer-client.js';
import { createS3BatchOrders } from '../adapters/s3/batch-orders.js';
import { createS3Client } from '../adapters/s3/client.js';
import { createS3PdfStorage } from '../adapters/s3/pdf-storage.js';
import { createS3RenderOrders } from '../adapters/s3/render-orders.js';
import { createSqsClient } from '../adapters/sqs/client.js';
import { changeVisibility } from '../adapters/sqs/queue.js';
import { batchResponse } from '../batches/schemas.js';
import { type Environment, readResourceConfig } from '../core/config.js';
import { logger } from '../core/logger.js';
import { logFault, systemClock } from '../core/runtime.js';
import { parseRenderMessage } from '../domain/async-renders.js';
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
