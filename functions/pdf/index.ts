/**
 * The pdf resource's Lambda: its routes (routes.ts) bound to one call each into the PDF job use
 * cases, with what only this resource needs: the bucket's presigner and the renderer.
 */

import { createIdempotencyStore } from '../adapters/dynamodb/idempotency.js';
import { createJobStore } from '../adapters/dynamodb/jobs.js';
import { createTemplateStore } from '../adapters/dynamodb/templates.js';
import { createUsageStore } from '../adapters/dynamodb/usage.js';
import { createWebhookDeliveryStore, createWebhookStore } from '../adapters/dynamodb/webhooks.js';
import { createLambdaRenderer } from '../adapters/lambda/renderer-client.js';
import { createS3Client } from '../adapters/s3/client.js';
import { createS3PdfStorage } from '../adapters/s3/pdf-storage.js';
import { createS3RenderOrders } from '../adapters/s3/render-orders.js';
import { createSqsClient } from '../adapters/sqs/client.js';
import { createSqsQueue } from '../adapters/sqs/queue.js';
import type { Environment } from '../core/config.js';
import { readResourceConfig } from '../core/config.js';
import { createResourceHandler, type LambdaHandler, Reply } from '../core/http.js';
import { REPLAYED } from '../core/responses.js';
import { createApiRuntime, logFault } from '../core/runtime.js';
import { createAsyncRenders, type RenderMessage } from '../domain/async-renders.js';
import { type Job, jobRecordRetentionSeconds } from '../domain/jobs.js';
import { createPdfJobs } from '../domain/pdf-jobs.js';
import type { Renderer } from '../domain/ports.js';
import { createWebhookJobEvents, webhookEndpointsOf } from '../domain/webhook-events.js';
import { createWebhookEmitter } from '../domain/webhook-management.js';
import { wiringOf } from '../route-declaration.js';
import { DEFAULT_PLAN } from '../settings.js';
import { type WebhookParts, webhookQueueOf } from '../webhooks/queue.js';
import { prefersAsync } from './request.js';
import { pdfResource } from './routes.js';
import { jobResponse } from './schemas.js';

export interface PdfParts extends WebhookParts {
  /** The local stack's in-process renderer; in the cloud the renderer Lambda is invoked. */
  readonly renderer?: Renderer;
}

export const createHandler = (env: Environment, parts: PdfParts = {}): LambdaHandler => {
  const config = readResourceConfig(wiringOf(pdfResource), env);
  const { db, tableName, clock, http } = createApiRuntime(config);
  const { settings } = config;
  const renderer =
    parts.renderer ??
    (config.rendererFunctionName ? createLambdaRenderer(config.rendererFunctionName, config.aws) : undefined);
  if (!renderer) throw new Error('the pdf resource needs RENDERER_FUNCTION_NAME, or a renderer handed in');

  // A job that names an endpoint tells it when it ends, with the job as GET /v1/pdf/{id} shows it.
  let describe: (job: Job) => Promise<unknown> = async () => undefined;
  const endpoints = createWebhookStore(db, tableName, logFault);
  const events = createWebhookJobEvents({
    endpoints,
    emitter: createWebhookEmitter({
      deliveries: createWebhookDeliveryStore(db, tableName, clock),
      queue: webhookQueueOf(config, parts),
      clock,
    }),
    describe: (job) => describe(job),
    onFault: logFault,
  });

  const jobs = createJobStore(db, tableName, clock, {
    recordRetentionSeconds: jobRecordRetentionSeconds(settings.pdfRetentionDays),
  });
  const s3 = createS3Client(config.aws);
  const bucketName = config.bucketName as string;
  const pdfJobs = createPdfJobs({
    jobs,
    usage: createUsageStore(db, tableName, clock),
    templates: createTemplateStore(db, tableName, clock, { onFault: logFault }),
    // A claim's lease is two of its renewals (every third of the job's lease), so a dead request's
    // key is taken over that soon; a twin of a live one waits as long as the longest render.
    idempotency: createIdempotencyStore(
      db,
      tableName,
      clock,
      Math.ceil((2 * settings.jobLeaseSeconds * 1000) / 3),
      settings.renderBudgetMs + 30_000,
    ),
    storage: createS3PdfStorage(s3, bucketName, {
      downloadUrlTtlSeconds: settings.downloadUrlTtlSeconds,
      uploadUrlTtlSeconds: Math.ceil(settings.renderBudgetMs / 1000) + 300,
    }),
    renderer,
    clock,
    plans: settings.plans,
    defaultPlan: DEFAULT_PLAN,
    limits: settings,
    onFault: logFault,
    events,
    webhooks: webhookEndpointsOf(endpoints),
  });
  describe = async (job) => jobResponse(await pdfJobs.present(job));

  const asyncRenders = createAsyncRenders({
    pdfJobs,
    jobs,
    orders: createS3RenderOrders(s3, bucketName),
    queue: createSqsQueue<RenderMessage>(createSqsClient(config.aws), config.renderQueueUrl as string),
    clock,
    limits: settings,
    onFault: logFault,
  });

  return createResourceHandler(pdfResource, http(pdfJobs.countRequest), {
    createPdf: async ({ principal, body, headers }) => {
      if (body.mode === 'async') {
        const { job, replayed } = await asyncRenders.create(principal, body);
        return new Reply(
          jobResponse(job),
          {
            Location: `/v1/pdf/${job.job.id}`,
            ...(prefersAsync(headers.prefer) ? { 'Preference-Applied': 'respond-async' } : {}),
            ...(replayed ? REPLAYED : {}),
          },
          202,
        );
      }
      const { job, replayed } = await pdfJobs.create(principal, body);
      return replayed ? new Reply(jobResponse(job), REPLAYED) : jobResponse(job);
    },
    listPdfs: async ({ principal, query }) => (await pdfJobs.list(principal, query)).map(jobResponse),
    getPdf: async ({ principal, pathParameters }) =>
      jobResponse(await pdfJobs.get(principal, pathParameters.job_id ?? '')),
  });
};
