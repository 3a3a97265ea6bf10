/**
 * The batches resource's Lambda: its routes (routes.ts) bound to one call each into the batch use
 * cases, with the render queue its jobs go to and the bucket their orders and links live in.
 */
import { createBatchWrites } from '../adapters/dynamodb/batch-writes.js';
import { createBatchStore } from '../adapters/dynamodb/batches.js';
import { createJobStore } from '../adapters/dynamodb/jobs.js';
import { createTemplateStore } from '../adapters/dynamodb/templates.js';
import { createUsageStore } from '../adapters/dynamodb/usage.js';
import { createWebhookStore } from '../adapters/dynamodb/webhooks.js';
import { createS3BatchOrders } from '../adapters/s3/batch-orders.js';
import { createS3Client } from '../adapters/s3/client.js';
import { createS3PdfStorage } from '../adapters/s3/pdf-storage.js';
import { createSqsClient } from '../adapters/sqs/client.js';
import { createSqsQueue } from '../adapters/sqs/queue.js';
import { type Environment, readResourceConfig } from '../core/config.js';
import { createResourceHandler, type LambdaHandler } from '../core/http.js';
import { createApiRuntime, logFault } from '../core/runtime.js';
import type { RenderMessage } from '../domain/async-renders.js';
import { createBatchQueue } from '../domain/batch-queue.js';
import { createBatches } from '../domain/batches.js';
import { jobRecordRetentionSeconds } from '../domain/jobs.js';
import { planAllowance } from '../domain/usage.js';
import { webhookEndpointsOf } from '../domain/webhook-events.js';
import { jobResponse } from '../pdf/schemas.js';
import { wiringOf } from '../route-declaration.js';
import { DEFAULT_PLAN } from '../settings.js';
import { batchesResource } from './routes.js';
import { batchResponse } from './schemas.js';

export const createHandler = (env: Environment): LambdaHandler => {
  const config = readResourceConfig(wiringOf(batchesResource), env);
  const { db, tableName, clock, http } = createApiRuntime(config);
  const { settings } = config;
  const recordRetentionSeconds = jobRecordRetentionSeconds(settings.pdfRetentionDays);
  const jobs = createJobStore(db, tableName, clock, { recordRetentionSeconds });
  const usage = createUsageStore(db, tableName, clock);
  const s3 = createS3Client(config.aws);
  const bucketName = config.bucketName as string;
  const writes = createBatchWrites(db, tableName, clock, { recordRetentionSeconds });
  const orders = createS3BatchOrders(s3, bucketName);
  const batches = createBatches({
    batches: createBatchStore(db, tableName, clock, { recordRetentionSeconds }),
    jobs,
    usage,
    templates: createTemplateStore(db, tableName, clock, { onFault: logFault }),
    storage: createS3PdfStorage(s3, bucketName, {
      downloadUrlTtlSeconds: settings.downloadUrlTtlSeconds,
      uploadUrlTtlSeconds: Math.ceil(settings.renderBudgetMs / 1000) + 300,
    }),
    writes,
    orders,
    queue: createBatchQueue({
      writes,
      queue: createSqsQueue<RenderMessage>(createSqsClient(config.aws), config.renderQueueUrl as string),
      clock,
      limits: settings,
    }),
    clock,
    plans: settings.plans,
    defaultPlan: DEFAULT_PLAN,
    limits: settings,
    onFault: logFault,
    // A batch's webhook_id names one of the caller's endpoints (404 WEBHOOK_ENDPOINT_NOT_FOUND otherwise).
    webhooks: webhookEndpointsOf(createWebhookStore(db, tableName, logFault)),
  });

  // A batch is one request against the per-minute rate limit; its items count against the quota.
  return createResourceHandler(
    batchesResource,
    http((principal) =>
      usage.hitRateLimit(principal.accountId, planAllowance(settings.plans, principal.plan, DEFAULT_PLAN)),
    ),
    {
      createBatch: async ({ principal, body }) => batchResponse(await batches.create(principal, body)),
      listBatches: async ({ principal, query }) => (await batches.list(principal, query)).map(batchResponse),
      getBatch: async ({ principal, pathParameters }) =>
        batchResponse(await batches.get(principal, pathParameters.batch_id ?? '')),
      listBatchJobs: async ({ principal, pathParameters, query }) =>
        (await batches.listJobs(principal, pathParameters.batch_id ?? '', query)).map(jobResponse),
    },
  );
};
