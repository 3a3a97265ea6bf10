/**
 * The composition root: every client, store, queue, emitter and use case of the service, each
 * built once per function (on first use, then kept for the warm Lambda's life: `Services.get`)
 * from the function's configuration and the parts the local stack or a test hands in. Every
 * `functions/<name>/index.ts` asks for what it needs (`services.get(build.pdfJobs)`) and builds
 * nothing itself; what a function is not wired with (functions/wiring.ts) is never built, and
 * asking for it fails with what is missing.
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
import { createLambdaRenderer } from './adapters/lambda/renderer-client.js';
import { createS3BatchOrders } from './adapters/s3/batch-orders.js';
import { createS3Client } from './adapters/s3/client.js';
import { createS3PdfStorage } from './adapters/s3/pdf-storage.js';
import { createS3RenderOrders } from './adapters/s3/render-orders.js';
import { createApiKeyDigester, createApiKeyResolver } from './adapters/secrets-manager/api-key-digest.js';
import { createWebhookSecretBox } from './adapters/secrets-manager/webhook-secret-box.js';
import { createSqsClient } from './adapters/sqs/client.js';
import { createSqsQueue } from './adapters/sqs/queue.js';
import { createAuthenticator } from './core/auth.js';
import type { ResourceConfig } from './core/config.js';
import type { HttpDeps, RateLimitCounter } from './core/http.js';
import { logFault, systemClock } from './core/runtime.js';
import { createApiKeyManagement } from './domain/accounts/api-key-management.js';
import { createUsageReport } from './domain/accounts/usage-report.js';
import { createBatchOrderReader, createBatchQueue } from './domain/batches/batch-queue.js';
import { type BatchView, createBatchCounter, createBatches } from './domain/batches/batches.js';
import type { Clock, JobEvents, MessageQueue, PdfStorage, Renderer } from './domain/common/ports.js';
import { createJobLifecycle } from './domain/jobs/job-lifecycle.js';
import { createJobPresenter } from './domain/jobs/job-view.js';
import { type Job, type JobView, jobRecordRetentionSeconds } from './domain/jobs/jobs.js';
import { createSweeper } from './domain/jobs/sweeper.js';
import { createAsyncRenders, type RenderMessage } from './domain/renders/async-renders.js';
import type { EInvoiceChecker } from './domain/renders/e-invoice.js';
import { createPdfJobs } from './domain/renders/pdf-jobs.js';
import { createRenderCall } from './domain/renders/render-call.js';
import { createRenderWorker } from './domain/renders/render-worker.js';
import { createTemplateResolver } from './domain/templates/render-template.js';
import { createTemplateManagement } from './domain/templates/template-management.js';
import {
  createWebhookBatchEvents,
  createWebhookJobEvents,
  webhookEndpointsOf,
} from './domain/webhooks/webhook-events.js';
import { createWebhookEmitter, createWebhookManagement } from './domain/webhooks/webhook-management.js';
import { createOverdueDeliveries, createWebhookSender } from './domain/webhooks/webhook-sender.js';
import type { WebhookMessage } from './domain/webhooks/webhooks.js';
import { DEFAULT_PLAN, type Settings } from './settings.js';
import { templateParser } from './templating/parse-pool.js';
import type { WebhookParts } from './webhooks/queue.js';

/** What the local stack and tests hand in, in place of what the cloud reaches over AWS. */
export interface ServiceParts extends WebhookParts {
  /** The local stack's in-process renderer; in the cloud the renderer Lambda is invoked. */
  readonly renderer?: Renderer;
  /** In place of the webhook job events (a job that names an endpoint tells it when it ends). */
  readonly events?: JobEvents;
  /**
   * The e-invoice checker (functions/core/e-invoice/check.ts), handed in by the pdf function
   * alone: its validators (SaxonJS, libxml2 in WebAssembly, the Factur-X artefacts: some 4 MB)
   * stay out of every other function's bundle. Absent: a render with e_invoice is refused.
   */
  readonly eInvoices?: EInvoiceChecker;
}

/**
 * The webhook payloads' shapes: a job as GET /v1/pdf/{id} shows it, a batch as GET /v1/batches/{id}
 * does (functions/webhook-payloads.ts). Handed in by the functions whose jobs or batches tell
 * their endpoints, so that the others' bundles carry no wire schema.
 */
export interface WebhookPresenters {
  readonly job: (view: JobView) => unknown;
  readonly batch: (view: BatchView) => unknown;
}

/**
 * One function's services: its configuration, the parts handed in, and `get`, which builds a
 * service (a top-level builder of this module) on first use and keeps it for the warm Lambda's
 * life. Builders are top-level functions, not members of one object, so that a function's bundle
 * carries only what its index.ts asks for (esbuild drops the unused builders and their SDK clients).
 */
export interface Services {
  readonly config: ResourceConfig;
  readonly parts: ServiceParts;
  readonly presenters: WebhookPresenters | undefined;
  readonly settings: Settings;
  readonly clock: Clock;
  get<T>(build: (services: Services) => T): T;
}

export const createServices = (
  config: ResourceConfig,
  parts: ServiceParts = {},
  presenters?: WebhookPresenters,
): Services => {
  const built = new Map<unknown, unknown>();
  const services: Services = {
    config,
    parts,
    presenters,
    settings: config.settings,
    clock: systemClock,
    get<T>(build: (services: Services) => T): T {
      if (!built.has(build)) built.set(build, build(services));
      return built.get(build) as T;
    },
  };
  return services;
};

const need = <T>(value: T | undefined, what: string): T => {
  if (value === undefined) throw new Error(`this function is not wired with ${what}`);
  return value;
};

const tableName = (s: Services) => need(s.config.tableName, 'the table (TABLE_NAME)');
const bucketName = (s: Services) => need(s.config.bucketName, 'the PDF bucket (BUCKET_NAME)');
const apiKeySecret = (s: Services) => need(s.config.apiKeySecret, 'the API key secret');
const recordRetention = (s: Services) => ({
  recordRetentionSeconds: jobRecordRetentionSeconds(s.settings.pdfRetentionDays),
});
const plansOf = (s: Services) => ({ plans: s.settings.plans, defaultPlan: DEFAULT_PLAN });

// Clients.
const db = (s: Services) => createDocumentClient(s.config.aws);
const s3 = (s: Services) => createS3Client(s.config.aws);
/** The SQS client, for what a consumer does to its own messages (holding one back). */
export const sqs = (s: Services) => createSqsClient(s.config.aws);

// Stores.
export const accounts = (s: Services) => createAccountStore(s.get(db), tableName(s), s.clock);
const apiKeys = (s: Services) => createApiKeyStore(s.get(db), tableName(s), s.clock, logFault);
const jobs = (s: Services) => createJobStore(s.get(db), tableName(s), s.clock, recordRetention(s));
export const usage = (s: Services) => createUsageStore(s.get(db), tableName(s), s.clock);
const templates = (s: Services) =>
  createTemplateStore(s.get(db), tableName(s), s.clock, { onFault: logFault });
// A claim's lease is two of its renewals (every third of the job's lease), so a dead request's
// key is taken over that soon; a twin of a live one waits as long as the longest render.
const idempotency = (s: Services) =>
  createIdempotencyStore(
    s.get(db),
    tableName(s),
    s.clock,
    Math.ceil((2 * s.settings.jobLeaseSeconds * 1000) / 3),
    s.settings.renderBudgetMs + 30_000,
  );
const batchStore = (s: Services) => createBatchStore(s.get(db), tableName(s), s.clock, recordRetention(s));
const batchWrites = (s: Services) => createBatchWrites(s.get(db), tableName(s), s.clock, recordRetention(s));
const endpoints = (s: Services) => createWebhookStore(s.get(db), tableName(s), logFault);
const deliveries = (s: Services) => createWebhookDeliveryStore(s.get(db), tableName(s), s.clock);
/** The bucket, whose upload links live as long as a render's budget, and five minutes more. */
const pdfStorage = (s: Services, budgetMs: number): PdfStorage =>
  createS3PdfStorage(s.get(s3), bucketName(s), {
    downloadUrlTtlSeconds: s.settings.downloadUrlTtlSeconds,
    uploadUrlTtlSeconds: Math.ceil(budgetMs / 1000) + 300,
  });
/** The bucket as a sync render uses it. */
const storage = (s: Services) => pdfStorage(s, s.settings.renderBudgetMs);
/** The bucket as the render queue's consumer uses it (an async render's budget). */
const asyncStorage = (s: Services) => pdfStorage(s, s.settings.asyncRenderBudgetMs);
const renderOrders = (s: Services) => createS3RenderOrders(s.get(s3), bucketName(s));
const batchOrders = (s: Services) => createS3BatchOrders(s.get(s3), bucketName(s));

// Queues, secrets, the renderer.
const renderQueue = (s: Services) =>
  createSqsQueue<RenderMessage>(
    s.get(sqs),
    need(s.config.renderQueueUrl, 'the render queue (RENDER_QUEUE_URL)'),
  );
const webhookQueue = (s: Services): MessageQueue<WebhookMessage> => {
  if (s.parts.webhookQueue) return s.parts.webhookQueue;
  if (!s.config.webhookQueueUrl) throw new Error('webhooks need WEBHOOK_QUEUE_URL, or a queue handed in');
  return createSqsQueue<WebhookMessage>(s.get(sqs), s.config.webhookQueueUrl);
};
const digestApiKey = (s: Services) => createApiKeyDigester(apiKeySecret(s), s.config.aws);
const webhookSecrets = (s: Services) => createWebhookSecretBox(apiKeySecret(s), s.config.aws);
const renderer = (s: Services): Renderer => {
  if (s.parts.renderer) return s.parts.renderer;
  if (!s.config.rendererFunctionName) {
    throw new Error('this function needs RENDERER_FUNCTION_NAME, or a renderer handed in');
  }
  return createLambdaRenderer(s.config.rendererFunctionName, s.config.aws);
};

// The HTTP stack's dependencies.
const authenticate = (s: Services) =>
  createAuthenticator(
    need(s.config.auth, 'the user pool'),
    s.config.apiKeySecret ? createApiKeyResolver(s.get(apiKeys), s.get(digestApiKey)) : async () => undefined,
    s.get(accounts),
  );
/** The HTTP stack's dependencies; `rateLimit` takes the command of the resource's rate-limited route. */
export const http =
  (s: Services) =>
  <C>(rateLimit?: RateLimitCounter<C>): HttpDeps => ({
    authenticate: s.get(authenticate),
    settings: s.settings,
    ...(rateLimit ? { rateLimit: rateLimit as RateLimitCounter } : {}),
  });

// Presenting jobs, and what ended jobs and batches tell their webhook endpoints.
/** A job as the API shows it; without the bucket (the sweeper) a job has no link. */
const presentJob = (s: Services) =>
  createJobPresenter({
    ...(s.config.bucketName ? { storage: s.get(storage) } : {}),
    clock: s.clock,
    pdfRetentionDays: s.settings.pdfRetentionDays,
  });
const presenters = (s: Services) => need(s.presenters, 'the webhook payloads (WebhookPresenters)');
/** A job's webhook payload: its view, as the API shows it. */
const jobPayload = (s: Services) => {
  const present = s.get(presentJob);
  const payload = presenters(s).job;
  return async (job: Job): Promise<unknown> => payload(await present(job));
};
const emitter = (s: Services) =>
  createWebhookEmitter({ deliveries: s.get(deliveries), queue: s.get(webhookQueue), clock: s.clock });
const batchEvents = (s: Services) =>
  createWebhookBatchEvents({
    endpoints: s.get(endpoints),
    emitter: s.get(emitter),
    describe: presenters(s).batch,
    onFault: logFault,
  });
const webhookJobEvents = (s: Services): JobEvents =>
  s.parts.events ??
  createWebhookJobEvents({
    endpoints: s.get(endpoints),
    emitter: s.get(emitter),
    describe: s.get(jobPayload),
    onFault: logFault,
  });
/**
 * What a job that ends tells: its webhook endpoint, and its batch's count (the batch's
 * batch.completed once its last job ended). Only the render queue's consumer deletes a finished
 * batch's order (the API may only put orders; the sweeper has no bucket): elsewhere the bucket's
 * lifecycle rule removes it.
 */
const jobEventsOf = (s: Services, deletesBatchOrders: boolean): JobEvents => {
  const counter = () => s.get(deletesBatchOrders ? consumerBatchCounter : batchCounter);
  return {
    async ended(job) {
      await Promise.all([
        job.batch_id ? counter().jobEvents.ended(job) : undefined,
        s.get(webhookJobEvents).ended(job),
      ]);
    },
  };
};
const batchCounter = (s: Services) =>
  createBatchCounter({ batches: s.get(batchStore), events: s.get(batchEvents), onFault: logFault });
const consumerBatchCounter = (s: Services) =>
  createBatchCounter({
    batches: s.get(batchStore),
    orders: s.get(batchOrders),
    events: s.get(batchEvents),
    onFault: logFault,
  });

// The job lifecycle: every write to a job, and what a job that ends tells.
const lifecycleOf = (s: Services, deletesBatchOrders: boolean) =>
  createJobLifecycle({
    jobs: s.get(jobs),
    usage: s.get(usage),
    clock: s.clock,
    limits: s.settings,
    onFault: logFault,
    events: jobEventsOf(s, deletesBatchOrders),
  });
const lifecycle = (s: Services) => lifecycleOf(s, false);
const consumerLifecycle = (s: Services) => lifecycleOf(s, true);
/** Every template a render or a batch names, looked up and parsed (bounded, off the thread when large). */
const resolver = (s: Services) =>
  createTemplateResolver({ templates: s.get(templates), parser: templateParser, limits: s.settings });
const renderCallWith = (s: Services, to: PdfStorage) =>
  createRenderCall({ storage: to, renderer: s.get(renderer), limits: s.settings, onFault: logFault });

// Use cases.
export const pdfJobs = (s: Services) =>
  createPdfJobs({
    jobs: s.get(jobs),
    usage: s.get(usage),
    templates: s.get(templates),
    idempotency: s.get(idempotency),
    lifecycle: s.get(lifecycle),
    render: renderCallWith(s, s.get(storage)),
    present: s.get(presentJob),
    resolver: s.get(resolver),
    clock: s.clock,
    ...plansOf(s),
    limits: s.settings,
    onFault: logFault,
    webhooks: webhookEndpointsOf(s.get(endpoints)),
    ...(s.parts.eInvoices ? { eInvoices: s.parts.eInvoices } : {}),
  });
export const asyncRenders = (s: Services) =>
  createAsyncRenders({
    pdfJobs: s.get(pdfJobs),
    lifecycle: s.get(lifecycle),
    orders: s.get(renderOrders),
    queue: s.get(renderQueue),
    onFault: logFault,
  });
export const renderWorker = (s: Services) =>
  createRenderWorker({
    lifecycle: s.get(consumerLifecycle),
    render: renderCallWith(s, s.get(asyncStorage)),
    jobs: s.get(jobs),
    orders: s.get(renderOrders),
    batchOrders: createBatchOrderReader(s.get(batchOrders)),
    clock: s.clock,
    limits: s.settings,
    onFault: logFault,
  });
export const batches = (s: Services) =>
  createBatches({
    batches: s.get(batchStore),
    usage: s.get(usage),
    resolver: s.get(resolver),
    present: s.get(presentJob),
    lifecycle: s.get(lifecycle),
    writes: s.get(batchWrites),
    orders: s.get(batchOrders),
    queue: createBatchQueue({
      writes: s.get(batchWrites),
      queue: s.get(renderQueue),
      lifecycle: s.get(lifecycle),
    }),
    clock: s.clock,
    ...plansOf(s),
    limits: s.settings,
    onFault: logFault,
    // A batch's webhook_id names one of the caller's endpoints (404 WEBHOOK_ENDPOINT_NOT_FOUND otherwise).
    webhooks: webhookEndpointsOf(s.get(endpoints)),
  });
export const sweeper = (s: Services) =>
  createSweeper({
    jobs: s.get(jobs),
    lifecycle: s.get(lifecycle),
    usage: s.get(usage),
    clock: s.clock,
    onFault: logFault,
    renderQueue: s.get(renderQueue),
    limits: s.settings,
    overdueDeliveries: createOverdueDeliveries({
      deliveries: s.get(deliveries),
      queue: s.get(webhookQueue),
      clock: s.clock,
      overdueSeconds: s.settings.webhookOverdueSeconds,
      onFault: logFault,
    }),
  });
export const webhookSender = (s: Services) =>
  createWebhookSender({
    endpoints: s.get(endpoints),
    deliveries: s.get(deliveries),
    secrets: s.get(webhookSecrets),
    queue: s.get(webhookQueue),
    post: createWebhookClient({
      timeoutMs: s.settings.webhookTimeoutMs,
      allowHosts: s.config.webhookAllowHosts,
      ...(s.parts.webhookLookup ? { lookup: s.parts.webhookLookup } : {}),
    }),
    clock: s.clock,
    schedule: {
      firstRetrySeconds: s.settings.webhookFirstRetrySeconds,
      windowSeconds: s.settings.webhookRetryWindowSeconds,
    },
  });
export const webhookManagement = (s: Services) =>
  createWebhookManagement({
    endpoints: s.get(endpoints),
    deliveries: s.get(deliveries),
    secrets: s.get(webhookSecrets),
    queue: s.get(webhookQueue),
    checkUrl: createWebhookUrlCheck({
      allowHosts: s.config.webhookAllowHosts,
      ...(s.parts.webhookLookup ? { lookup: s.parts.webhookLookup } : {}),
    }),
    clock: s.clock,
  });
export const apiKeyManagement = (s: Services) =>
  createApiKeyManagement({ store: s.get(apiKeys), digest: s.get(digestApiKey) });
export const templateManagement = (s: Services) =>
  createTemplateManagement({ store: s.get(templates), parser: templateParser });
export const usageReport = (s: Services) =>
  createUsageReport({ usage: s.get(usage), clock: s.clock, ...plansOf(s) });
