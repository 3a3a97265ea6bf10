/**
 * The composition root: every store, queue, emitter and use case of the service, each built once
 * (on first use, then kept for the warm Lambda's life) from one function's configuration and the
 * parts the local stack or a test hands in. Every `functions/<name>/index.ts` takes what it needs
 * from here and builds nothing itself; what a function is not wired with (functions/wiring.ts) is
 * never built, and asking for it fails with what is missing.
 *
 * The webhook payloads are the API's own representations (GET /v1/pdf/{id}, GET /v1/batches/{id}):
 * they are injected into the domain's events as presenters, so the domain never reaches back
 * into the HTTP resources' wire schemas.
 */
import { createAccountStore } from './adapters/dynamodb/accounts.js';
import { createApiKeyStore } from './adapters/dynamodb/api-keys.js';
import { createBatchWrites } from './adapters/dynamodb/batch-writes.js';
import { createBatchStore } from './adapters/dynamodb/batches.js';
import { createDocumentClient } from './adapters/dynamodb/client.js';
import { createIdempotencyStore } from './adapters/dynamodb/idempotency.js';
import { createJobStore } from './adapters/dynamodb/jobs.js';
import { createTemplateStore } from './adapters/dynamodb/templates.js';
import { createUsageStore } from './adapters/dynamodb/usage.js';
import { createWebhookDeliveryStore, createWebhookStore } from './adapters/dynamodb/webhooks.js';
import { createWebhookClient, createWebhookUrlCheck } from './adapters/http/webhook-client.js';
import { createS3BatchOrders } from './adapters/s3/batch-orders.js';
import { createS3Client } from './adapters/s3/client.js';
import { createS3PdfStorage } from './adapters/s3/pdf-storage.js';
import { createS3RenderOrders } from './adapters/s3/render-orders.js';
import { createApiKeyDigester, createApiKeyResolver } from './adapters/secrets-manager/api-key-digest.js';
import { createWebhookSecretBox } from './adapters/secrets-manager/webhook-secret-box.js';
import { createSqsClient } from './adapters/sqs/client.js';
import { createSqsQueue } from './adapters/sqs/queue.js';
import { batchResponse } from './batches/schemas.js';
import { createAuthenticator } from './core/auth.js';
import type { ResourceConfig } from './core/config.js';
import type { HttpDeps, RateLimitCounter } from './core/http.js';
import { createLambdaRenderer } from './core/renderer-client.js';
import { logFault, systemClock } from './core/runtime.js';
import { createApiKeyManagement } from './domain/api-key-management.js';
import { createAsyncRenders, type RenderMessage } from './domain/async-renders.js';
import { createBatchOrderReader, createBatchQueue } from './domain/batch-queue.js';
import { createBatchCounter, createBatches } from './domain/batches.js';
import { createJobLifecycle } from './domain/job-lifecycle.js';
import { createJobPresenter } from './domain/job-view.js';
import { jobRecordRetentionSeconds } from './domain/jobs.js';
import { createPdfJobs } from './domain/pdf-jobs.js';
import type { JobEvents, MessageQueue, PdfStorage, Renderer } from './domain/ports.js';
import { createRenderCall } from './domain/render-call.js';
import { createTemplateResolver } from './domain/render-template.js';
import { createRenderWorker } from './domain/render-worker.js';
import { createSweeper } from './domain/sweeper.js';
import { createTemplateManagement } from './domain/template-management.js';
import { createUsageReport } from './domain/usage-report.js';
import {
  createWebhookBatchEvents,
  createWebhookJobEvents,
  webhookEndpointsOf,
} from './domain/webhook-events.js';
import { createWebhookEmitter, createWebhookManagement } from './domain/webhook-management.js';
import { createOverdueDeliveries, createWebhookSender } from './domain/webhook-sender.js';
import type { WebhookMessage } from './domain/webhooks.js';
import { jobResponse } from './pdf/schemas.js';
import { DEFAULT_PLAN } from './settings.js';
import { templateParser } from './templating/parse-pool.js';
import type { WebhookParts } from './webhooks/queue.js';

/** What the local stack and tests hand in, in place of what the cloud reaches over AWS. */
export interface ServiceParts extends WebhookParts {
  /** The local stack's in-process renderer; in the cloud the renderer Lambda is invoked. */
  readonly renderer?: Renderer;
  /** In place of the webhook job events (a job that names an endpoint tells it when it ends). */
  readonly events?: JobEvents;
}

/** `build()`'s value, built on the first call and kept. */
const once = <T>(build: () => T): (() => T) => {
  const cell: { built?: { readonly value: T } } = {};
  return () => {
    cell.built ??= { value: build() };
    return cell.built.value;
  };
};

const need = <T>(value: T | undefined, what: string): T => {
  if (value === undefined) throw new Error(`this function is not wired with ${what}`);
  return value;
};

/** The upload link a render gets lives as long as its budget, and five minutes more. */
const uploadUrlTtlSeconds = (budgetMs: number) => Math.ceil(budgetMs / 1000) + 300;

export const createServices = (config: ResourceConfig, parts: ServiceParts = {}) => {
  const { settings } = config;
  const clock = systemClock;
  const recordRetentionSeconds = jobRecordRetentionSeconds(settings.pdfRetentionDays);
  const limits = settings;
  const plans = { plans: settings.plans, defaultPlan: DEFAULT_PLAN };

  // Clients and names.
  const tableName = () => need(config.tableName, 'the table (TABLE_NAME)');
  const bucketName = () => need(config.bucketName, 'the PDF bucket (BUCKET_NAME)');
  const renderQueueUrl = () => need(config.renderQueueUrl, 'the render queue (RENDER_QUEUE_URL)');
  const db = once(() => createDocumentClient(config.aws));
  const s3 = once(() => createS3Client(config.aws));
  const sqs = once(() => createSqsClient(config.aws));

  // Stores.
  const accounts = once(() => createAccountStore(db(), tableName(), clock));
  const apiKeys = once(() => createApiKeyStore(db(), tableName(), clock, logFault));
  const jobs = once(() => createJobStore(db(), tableName(), clock, { recordRetentionSeconds }));
  const usage = once(() => createUsageStore(db(), tableName(), clock));
  const templates = once(() => createTemplateStore(db(), tableName(), clock, { onFault: logFault }));
  // A claim's lease is two of its renewals (every third of the job's lease), so a dead request's
  // key is taken over that soon; a twin of a live one waits as long as the longest render.
  const idempotency = once(() =>
    createIdempotencyStore(
      db(),
      tableName(),
      clock,
      Math.ceil((2 * settings.jobLeaseSeconds * 1000) / 3),
      settings.renderBudgetMs + 30_000,
    ),
  );
  const batchStore = once(() => createBatchStore(db(), tableName(), clock, { recordRetentionSeconds }));
  const batchWrites = once(() => createBatchWrites(db(), tableName(), clock, { recordRetentionSeconds }));
  const endpoints = once(() => createWebhookStore(db(), tableName(), logFault));
  const deliveries = once(() => createWebhookDeliveryStore(db(), tableName(), clock));
  const pdfStorage = (budgetMs: number): PdfStorage =>
    createS3PdfStorage(s3(), bucketName(), {
      downloadUrlTtlSeconds: settings.downloadUrlTtlSeconds,
      uploadUrlTtlSeconds: uploadUrlTtlSeconds(budgetMs),
    });
  /** The bucket as a sync render uses it (its upload link lives as long as a sync render). */
  const storage = once(() => pdfStorage(settings.renderBudgetMs));
  /** The bucket as the render queue's consumer uses it (an async render's budget). */
  const asyncStorage = once(() => pdfStorage(settings.asyncRenderBudgetMs));
  const renderOrders = once(() => createS3RenderOrders(s3(), bucketName()));
  const batchOrders = once(() => createS3BatchOrders(s3(), bucketName()));

  // Queues, secrets, the renderer.
  const renderQueue = once(() => createSqsQueue<RenderMessage>(sqs(), renderQueueUrl()));
  const webhookQueue = once((): MessageQueue<WebhookMessage> => {
    if (parts.webhookQueue) return parts.webhookQueue;
    if (!config.webhookQueueUrl) throw new Error('webhooks need WEBHOOK_QUEUE_URL, or a queue handed in');
    return createSqsQueue<WebhookMessage>(sqs(), config.webhookQueueUrl);
  });
  const apiKeySecret = () => need(config.apiKeySecret, 'the API key secret');
  const digestApiKey = once(() => createApiKeyDigester(apiKeySecret(), config.aws));
  const webhookSecrets = once(() => createWebhookSecretBox(apiKeySecret(), config.aws));
  const renderer = once((): Renderer => {
    if (parts.renderer) return parts.renderer;
    if (!config.rendererFunctionName) {
      throw new Error('this function needs RENDERER_FUNCTION_NAME, or a renderer handed in');
    }
    return createLambdaRenderer(config.rendererFunctionName, config.aws);
  });

  // The HTTP stack's dependencies.
  const authenticate = once(() =>
    createAuthenticator(
      need(config.auth, 'the user pool'),
      config.apiKeySecret ? createApiKeyResolver(apiKeys(), digestApiKey()) : async () => undefined,
      accounts(),
    ),
  );
  /** `rateLimit` takes the command of the resource's rate-limited route (one per resource). */
  const http = <C>(rateLimit?: RateLimitCounter<C>): HttpDeps => ({
    authenticate: authenticate(),
    settings,
    ...(rateLimit ? { rateLimit: rateLimit as RateLimitCounter } : {}),
  });

  // Presenting jobs, and what ended jobs and batches tell their webhook endpoints.
  /** A job as the API shows it; without the bucket (the sweeper) a job has no link. */
  const presentJob = once(() =>
    createJobPresenter({
      ...(config.bucketName ? { storage: storage() } : {}),
      clock,
      pdfRetentionDays: settings.pdfRetentionDays,
    }),
  );
  const webhookPayloads = {
    job: async (job: Parameters<ReturnType<typeof presentJob>>[0]) => jobResponse(await presentJob()(job)),
    batch: batchResponse,
  };
  const emitter = once(() =>
    createWebhookEmitter({ deliveries: deliveries(), queue: webhookQueue(), clock }),
  );
  const batchEvents = once(() =>
    createWebhookBatchEvents({
      endpoints: endpoints(),
      emitter: emitter(),
      describe: webhookPayloads.batch,
      onFault: logFault,
    }),
  );
  const webhookJobEvents = once(
    (): JobEvents =>
      parts.events ??
      createWebhookJobEvents({
        endpoints: endpoints(),
        emitter: emitter(),
        describe: webhookPayloads.job,
        onFault: logFault,
      }),
  );
  /**
   * What a job that ends tells: its webhook endpoint, and its batch's count (the batch's
   * batch.completed once its last job ended). `deletesBatchOrders`: only the render queue's
   * consumer may delete a finished batch's order (the API may only put orders; the sweeper has no
   * bucket), elsewhere the bucket's lifecycle rule removes it.
   */
  const jobEventsOf = (deletesBatchOrders: boolean): JobEvents => {
    const counter = once(() =>
      createBatchCounter({
        batches: batchStore(),
        ...(deletesBatchOrders ? { orders: batchOrders() } : {}),
        events: batchEvents(),
        onFault: logFault,
      }),
    );
    return {
      async ended(job) {
        await Promise.all([
          job.batch_id ? counter().jobEvents.ended(job) : undefined,
          webhookJobEvents().ended(job),
        ]);
      },
    };
  };

  // The job lifecycle: every write to a job, and what a job that ends tells.
  const lifecycleOf = (deletesBatchOrders: boolean) =>
    createJobLifecycle({
      jobs: jobs(),
      usage: usage(),
      clock,
      limits,
      onFault: logFault,
      events: jobEventsOf(deletesBatchOrders),
    });
  const lifecycle = once(() => lifecycleOf(false));
  const consumerLifecycle = once(() => lifecycleOf(true));
  /** Every template a render or a batch names, looked up and parsed (bounded, off the thread when large). */
  const resolver = once(() =>
    createTemplateResolver({ templates: templates(), parser: templateParser, limits }),
  );
  const renderCallWith = (pdfStorage: PdfStorage) =>
    createRenderCall({ storage: pdfStorage, renderer: renderer(), limits, onFault: logFault });

  // Use cases.
  const pdfJobs = once(() =>
    createPdfJobs({
      jobs: jobs(),
      usage: usage(),
      templates: templates(),
      idempotency: idempotency(),
      lifecycle: lifecycle(),
      render: renderCallWith(storage()),
      present: presentJob(),
      resolver: resolver(),
      clock,
      ...plans,
      limits,
      onFault: logFault,
      webhooks: webhookEndpointsOf(endpoints()),
    }),
  );
  const asyncRenders = once(() =>
    createAsyncRenders({
      pdfJobs: pdfJobs(),
      lifecycle: lifecycle(),
      orders: renderOrders(),
      queue: renderQueue(),
      onFault: logFault,
    }),
  );
  const renderWorker = once(() =>
    createRenderWorker({
      lifecycle: consumerLifecycle(),
      render: renderCallWith(asyncStorage()),
      jobs: jobs(),
      orders: renderOrders(),
      batchOrders: createBatchOrderReader(batchOrders()),
      clock,
      limits,
      onFault: logFault,
    }),
  );
  const batches = once(() =>
    createBatches({
      batches: batchStore(),
      usage: usage(),
      resolver: resolver(),
      present: presentJob(),
      lifecycle: lifecycle(),
      writes: batchWrites(),
      orders: batchOrders(),
      queue: createBatchQueue({ writes: batchWrites(), queue: renderQueue(), lifecycle: lifecycle() }),
      clock,
      ...plans,
      limits,
      onFault: logFault,
      // A batch's webhook_id names one of the caller's endpoints (404 WEBHOOK_ENDPOINT_NOT_FOUND otherwise).
      webhooks: webhookEndpointsOf(endpoints()),
    }),
  );
  const sweeper = once(() =>
    createSweeper({
      jobs: jobs(),
      lifecycle: lifecycle(),
      usage: usage(),
      clock,
      onFault: logFault,
      renderQueue: renderQueue(),
      limits,
      overdueDeliveries: createOverdueDeliveries({
        deliveries: deliveries(),
        queue: webhookQueue(),
        clock,
        overdueSeconds: settings.webhookOverdueSeconds,
        onFault: logFault,
      }),
    }),
  );
  const webhookSender = once(() =>
    createWebhookSender({
      endpoints: endpoints(),
      deliveries: deliveries(),
      secrets: webhookSecrets(),
      queue: webhookQueue(),
      post: createWebhookClient({
        timeoutMs: settings.webhookTimeoutMs,
        allowHosts: config.webhookAllowHosts,
        ...(parts.webhookLookup ? { lookup: parts.webhookLookup } : {}),
      }),
      clock,
      schedule: {
        firstRetrySeconds: settings.webhookFirstRetrySeconds,
        windowSeconds: settings.webhookRetryWindowSeconds,
      },
    }),
  );
  const webhookManagement = once(() =>
    createWebhookManagement({
      endpoints: endpoints(),
      deliveries: deliveries(),
      secrets: webhookSecrets(),
      queue: webhookQueue(),
      checkUrl: createWebhookUrlCheck({
        allowHosts: config.webhookAllowHosts,
        ...(parts.webhookLookup ? { lookup: parts.webhookLookup } : {}),
      }),
      clock,
    }),
  );
  const apiKeyManagement = once(() => createApiKeyManagement({ store: apiKeys(), digest: digestApiKey() }));
  const templateManagement = once(() =>
    createTemplateManagement({ store: templates(), parser: templateParser }),
  );
  const usageReport = once(() => createUsageReport({ usage: usage(), clock, ...plans }));

  return {
    config,
    settings,
    clock,
    http,
    /** The SQS client, for what a consumer does to its own messages (holding one back). */
    sqs,
    accounts,
    usage,
    pdfJobs,
    asyncRenders,
    renderWorker,
    batches,
    sweeper,
    webhookSender,
    webhookManagement,
    apiKeyManagement,
    templateManagement,
    usageReport,
  };
};

export type Services = ReturnType<typeof createServices>;
