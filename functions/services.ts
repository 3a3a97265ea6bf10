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

import { createHash } from 'node:crypto';
import { inspectAsset } from './adapters/assets/inspect.js';
import { createSigningKeyImport } from './adapters/crypto/signing-key-import.js';
import { createEventBridgeUsageBus } from './adapters/eventbridge/usage-bus.js';
import { createWebhookClient, createWebhookUrlCheck } from './adapters/http/webhook-client.js';
import { createS3BatchArchiver } from './adapters/s3/batch-archive.js';
import { createS3PdfAssembler } from './adapters/s3/pdf-assembly.js';
import { createApiKeyResolver, createApiKeyRevocation } from './adapters/secrets-manager/api-key-digest.js';
import { createSqsQueue } from './adapters/sqs/queue.js';
import { RENDER_RUN_SLICE_MS } from './consumers.js';
import { createAuthenticator } from './core/auth.js';
import type { ResourceConfig } from './core/config.js';
import type { HttpDeps, RateLimitCounter, RefusedCounter } from './core/http.js';
import { countRefusedRequests } from './core/refused-requests.js';
import { logFault, systemClock } from './core/runtime.js';
import { createApiKeyManagement } from './domain/accounts/api-key-management.js';
import { createUsageEventPublisher } from './domain/accounts/usage-events.js';
import { createUsageReport } from './domain/accounts/usage-report.js';
import { createAssetManagement } from './domain/assets/assets.js';
import {
  type BatchOutputMessage,
  completionEvents,
  createBatchOutputs,
} from './domain/batches/batch-outputs.js';
import { createBatchOrderReader, createBatchQueue } from './domain/batches/batch-queue.js';
import { type Batch, createBatchCounter, createBatches } from './domain/batches/batches.js';
import { newAssetUploadId } from './domain/common/ids.js';
import type { JobEvents, MessageQueue, PdfStorage } from './domain/common/ports.js';
import { createDeliverer, type DeliverableJob, deliverableOf } from './domain/destinations/deliveries.js';
import { createDestinationManagement } from './domain/destinations/destinations.js';
import { createJobLifecycle } from './domain/jobs/job-lifecycle.js';
import { createJobPresenter } from './domain/jobs/job-view.js';
import type { Job } from './domain/jobs/jobs.js';
import { createSweeper } from './domain/jobs/sweeper.js';
import { createMerges } from './domain/merges/merges.js';
import { createAsyncRenders } from './domain/renders/async-renders.js';
import { createPdfJobs } from './domain/renders/pdf-jobs.js';
import { createPreviews } from './domain/renders/previews.js';
import { createRenderCall, createRunCall } from './domain/renders/render-call.js';
import { createRunWorker } from './domain/renders/render-run.js';
import { createRenderWorker } from './domain/renders/render-worker.js';
import { createSigningKeyManagement } from './domain/signing/signing-keys.js';
import { createTemplateResolver } from './domain/templates/render-template.js';
import { createTemplateManagement } from './domain/templates/template-management.js';
import {
  createWebhookBatchEvents,
  createWebhookDeliveryEvents,
  createWebhookJobEvents,
  webhookEndpointsOf,
} from './domain/webhooks/webhook-events.js';
import { createWebhookEmitter, createWebhookManagement } from './domain/webhooks/webhook-management.js';
import {
  ACCOUNT_CONCURRENCY,
  createOverdueDeliveries,
  createWebhookSender,
  ENDPOINT_CONCURRENCY,
} from './domain/webhooks/webhook-sender.js';
import type { ServiceParts, Services, WebhookPresenters } from './service-parts.js';
import {
  accounts,
  apiKeys,
  assetBlobs,
  assetResolver,
  assetStore,
  asyncStorage,
  batchOrders,
  batchStore,
  batchWrites,
  bodyHashDigest,
  bucketName,
  deliveries,
  deliveryQueue,
  deliveryRecords,
  destinationStore,
  destinationWriter,
  digestApiKey,
  endpoints,
  externalIds,
  idempotency,
  jobs,
  need,
  part,
  pdfReader,
  plansOf,
  renderer,
  renderOrders,
  renderQueue,
  s3,
  signingKeySecrets,
  signingKeyStore,
  signingKeys,
  sqs,
  storage,
  templates,
  usage,
  usageLedger,
  webhookQueue,
  webhookSecrets,
} from './services-stores.js';
import { PREVIEWS_PER_ACCOUNT, WEBHOOK_SENDS_PER_MINUTE } from './settings.js';
import { templateParser } from './templating/parse-pool.js';

export type { ServiceParts, Services, StoreParts, WebhookPresenters } from './service-parts.js';
/** The stores a function's index.ts reads directly (services-stores.ts). */
export { accounts, sqs, usage, usageLedger } from './services-stores.js';

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
    clock: parts.clock ?? systemClock,
    onFault: parts.onFault ?? logFault,
    get<T>(build: (services: Services) => T): T {
      if (!built.has(build)) built.set(build, build(services));
      return built.get(build) as T;
    },
  };
  return services;
};

const authenticate = (s: Services) =>
  createAuthenticator(
    need(s.config.auth, 'the user pool'),
    s.config.apiKeySecret ? createApiKeyResolver(s.get(apiKeys), s.get(digestApiKey)) : async () => undefined,
    s.get(accounts),
    s.config.apiKeySecret ? createApiKeyRevocation(s.get(apiKeys), s.get(digestApiKey)) : undefined,
  );
/** The HTTP stack's dependencies; `rateLimit` takes the command of the resource's rate-limited route. */
export const http =
  (s: Services) =>
  <C>(rateLimit?: RateLimitCounter<C>): HttpDeps => ({
    authenticate: s.get(authenticate),
    settings: s.settings,
    ...(rateLimit ? { rateLimit: rateLimit as RateLimitCounter, refused: s.get(refusedRequests) } : {}),
  });

/** Requests refused before any work, counted per account and per client address (issue 40). */
export const refusedRequests = (s: Services): RefusedCounter => countRefusedRequests(s.get(usage));

// Presenting jobs, and what ended jobs and batches tell their webhook endpoints.
/** A job as the API shows it; without the bucket (the sweeper) a job has no link. */
const presentJob = (s: Services) =>
  createJobPresenter({
    ...(s.config.bucketName || s.parts.stores?.storage ? { storage: s.get(storage) } : {}),
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
    onFault: s.onFault,
  });
const webhookJobEvents = (s: Services): JobEvents =>
  s.parts.events ??
  createWebhookJobEvents({
    endpoints: s.get(endpoints),
    emitter: s.get(emitter),
    describe: s.get(jobPayload),
    onFault: s.onFault,
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
        job.webhook_id || job.batch_id ? s.get(webhookJobEvents).ended(job) : undefined,
        // A completed job that names a destination: its delivery recorded pending, its first attempt queued.
        job.destination_id && job.status === 'completed'
          ? s.get(deliverer).start(deliverableOf(job) as DeliverableJob, job.destination_id)
          : undefined,
      ]);
    },
  };
};
/** A completed batch with outputs: its builder's message (batch.completed comes once they are built). */
const batchOutputQueue = (s: Services): MessageQueue<BatchOutputMessage> =>
  part(s, 'batchOutputQueue', () =>
    createSqsQueue<BatchOutputMessage>(
      s.get(sqs),
      need(s.config.batchOutputQueueUrl, 'the batch output queue (BATCH_OUTPUT_QUEUE_URL)'),
    ),
  );
/** What a batch that completes tells: batch.completed, or its outputs' builder first. */
const batchCompletion = (s: Services) =>
  completionEvents({ events: s.get(batchEvents), queue: () => s.get(batchOutputQueue) });
const batchCounter = (s: Services) =>
  createBatchCounter({ batches: s.get(batchStore), events: s.get(batchCompletion), onFault: s.onFault });
const consumerBatchCounter = (s: Services) =>
  createBatchCounter({
    batches: s.get(batchStore),
    orders: s.get(batchOrders),
    events: s.get(batchCompletion),
    onFault: s.onFault,
  });
/** Fresh links to a batch's built outputs. */
const batchOutputUrls = (s: Services) => {
  const links = s.get(storage);
  return async (batch: Batch) => {
    const link = (key: string | null | undefined, name: string) =>
      key ? links.downloadUrl(key, name) : Promise.resolve(null);
    const [mergedPdf, zip] = await Promise.all([
      link(batch.outputs?.merged_pdf_key, `${batch.id}.pdf`),
      link(batch.outputs?.zip_key, `${batch.id}.zip`),
    ]);
    return { mergedPdf, zip };
  };
};

/** The bucket's merges (merges, batches' merged PDFs) and ZIPs (batches). */
const assembler = (s: Services) =>
  part(s, 'assembler', () => createS3PdfAssembler(s.get(s3), bucketName(s), s.onFault));
const archiver = (s: Services) => part(s, 'archiver', () => createS3BatchArchiver(s.get(s3), bucketName(s)));

// The job lifecycle: every write to a job, and what a job that ends tells.
const lifecycleOf = (s: Services, deletesBatchOrders: boolean) =>
  createJobLifecycle({
    jobs: s.get(jobs),
    usage: s.get(usage),
    clock: s.clock,
    limits: s.settings,
    onFault: s.onFault,
    events: jobEventsOf(s, deletesBatchOrders),
    ledger: s.get(usageLedger),
  });
const lifecycle = (s: Services) => lifecycleOf(s, false);
const consumerLifecycle = (s: Services) => lifecycleOf(s, true);
/** Every template a render or a batch names, looked up and parsed (bounded, off the thread when large). */
const resolver = (s: Services) =>
  createTemplateResolver({ templates: s.get(templates), parser: templateParser, limits: s.settings });
/** What a render call (single or a batch run) renders with, uploading to `to`. */
const renderDepsWith = (s: Services, to: PdfStorage) => ({
  storage: to,
  renderer: s.get(renderer),
  limits: s.settings,
  onFault: s.onFault,
  signingKeys: s.get(signingKeys),
  assets: s.get(assetResolver),
});
const renderCallWith = (s: Services, to: PdfStorage) => createRenderCall(renderDepsWith(s, to));

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
    onFault: s.onFault,
    webhooks: webhookEndpointsOf(s.get(endpoints)),
    ...(s.parts.eInvoices ? { eInvoices: s.parts.eInvoices } : {}),
    signingKeys: s.get(signingKeys),
    // A render that prints page numbers keeps its order beside its PDF, for merges (kept-orders.ts).
    keptOrders: s.get(renderOrders),
    // A render's destination_id names one of the caller's destinations (404 DESTINATION_NOT_FOUND otherwise).
    destinations: s.get(destinationStore),
  });
/** Previews (issue 40): a render's path without a job, a unit or a usage record. */
export const previews = (s: Services) =>
  createPreviews({
    usage: s.get(usage),
    prepare: s.get(pdfJobs).prepare,
    resolver: s.get(resolver),
    render: renderCallWith(s, s.get(storage)),
    storage: s.get(storage),
    parser: templateParser,
    limits: { perMinute: PREVIEWS_PER_ACCOUNT.minute, perDay: PREVIEWS_PER_ACCOUNT.day },
    clock: s.clock,
  });
export const asyncRenders = (s: Services) =>
  createAsyncRenders({
    pdfJobs: s.get(pdfJobs),
    lifecycle: s.get(lifecycle),
    orders: s.get(renderOrders),
    queue: s.get(renderQueue),
    onFault: s.onFault,
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
    onFault: s.onFault,
    // An async merge it claims runs here (its parts rendered by the async renderer).
    merges: s.get(consumerMerges),
  });
/** Batch runs (issue 43): a batch's items among the consumer's messages rendered as one run. */
export const runWorker = (s: Services) =>
  createRunWorker({
    worker: s.get(renderWorker),
    run: createRunCall(renderDepsWith(s, s.get(asyncStorage))),
    lifecycle: s.get(consumerLifecycle),
    sliceMs: RENDER_RUN_SLICE_MS,
    onFault: s.onFault,
  });
export const batches = (s: Services) =>
  createBatches({
    batches: s.get(batchStore),
    usage: s.get(usage),
    resolver: s.get(resolver),
    present: s.get(presentJob),
    writes: s.get(batchWrites),
    orders: s.get(batchOrders),
    queue: createBatchQueue({ queue: s.get(renderQueue) }),
    clock: s.clock,
    ...plansOf(s),
    limits: s.settings,
    onFault: s.onFault,
    // A batch's webhook_id names one of the caller's endpoints (404 WEBHOOK_ENDPOINT_NOT_FOUND otherwise).
    webhooks: webhookEndpointsOf(s.get(endpoints)),
    destinations: s.get(destinationStore),
    signingKeys: s.get(signingKeys),
    ...(s.parts.eInvoices ? { eInvoices: s.parts.eInvoices } : {}),
    digest: s.get(bodyHashDigest),
    // A batch it completes (all items replayed, or counted on a read) tells its endpoint
    // batch.completed, or has its outputs built first (the batches function has the webhook queue).
    events: s.get(batchCompletion),
    outputUrls: s.get(batchOutputUrls),
    // Its cancel: each pending job through the lifecycle (a conditional write, its unit back, its events).
    cancelJob: (job) => s.get(lifecycle).cancel(job),
  });
export const sweeper = (s: Services) =>
  createSweeper({
    jobs: s.get(jobs),
    lifecycle: s.get(lifecycle),
    usage: s.get(usage),
    ledger: s.get(usageLedger),
    clock: s.clock,
    onFault: s.onFault,
    renderQueue: s.get(renderQueue),
    batches: s.get(batchStore),
    limits: s.settings,
    overdueDeliveries: createOverdueDeliveries({
      deliveries: s.get(deliveries),
      queue: s.get(webhookQueue),
      clock: s.clock,
      overdueSeconds: s.settings.webhookOverdueSeconds,
      onFault: s.onFault,
    }),
  });
export const webhookSender = (s: Services) =>
  createWebhookSender({
    endpoints: s.get(endpoints),
    deliveries: s.get(deliveries),
    secrets: s.get(webhookSecrets),
    queue: s.get(webhookQueue),
    sendSlots: {
      cap: ENDPOINT_CONCURRENCY,
      accountCap: ACCOUNT_CONCURRENCY,
      // A POST's timeout, and a margin for the table calls around it.
      holdMs: s.settings.webhookTimeoutMs + 15_000,
      retryMs: s.settings.webhookTimeoutMs,
    },
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
    countSend: (accountId, webhookId) =>
      s.get(usage).hitWebhookSendLimit(accountId, webhookId, WEBHOOK_SENDS_PER_MINUTE),
  });
export const signingKeyManagement = (s: Services) =>
  createSigningKeyManagement({
    store: s.get(signingKeyStore),
    box: () => s.get(signingKeySecrets),
    importKey: createSigningKeyImport(s.parts.kmsPublicKey),
    clock: s.clock,
  });
export const assetManagement = (s: Services) =>
  createAssetManagement({
    store: s.get(assetStore),
    blobs: s.get(assetBlobs),
    inspect: inspectAsset,
    clock: s.clock,
    newUploadId: newAssetUploadId,
    digest: (bytes) => createHash('sha256').update(bytes).digest('hex'),
    onFault: s.onFault,
  });
export const apiKeyManagement = (s: Services) =>
  createApiKeyManagement({ store: s.get(apiKeys), digest: s.get(digestApiKey) });
export const templateManagement = (s: Services) =>
  createTemplateManagement({
    store: s.get(templates),
    parser: templateParser,
    signingKeys: s.get(signingKeys),
  });
/** The usage events' bus: the local stack's file, or the stack's EventBridge bus. */
const usageBus = (s: Services) =>
  s.parts.usageBus ??
  createEventBridgeUsageBus(
    need(s.config.usageEventBusName, 'the usage event bus (USAGE_EVENT_BUS_NAME)'),
    s.config.aws,
  );
/** The usage ledger's new entries published as usage events (the usage-events consumer). */
export const usageEventPublisher = (s: Services) =>
  createUsageEventPublisher({
    ledger: need(s.get(usageLedger), 'the usage ledger'),
    bus: s.get(usageBus),
    onFault: s.onFault,
  });
export const usageReport = (s: Services) =>
  createUsageReport({ usage: s.get(usage), clock: s.clock, ...plansOf(s) });
/**
 * Merges (POST /v1/merges): parts rendered as a sync render is (pdfJobs), laid out again with the
 * renderer, and assembled from the bucket.
 */
const mergesWith = (s: Services, to: PdfStorage) =>
  createMerges({
    jobs: s.get(jobs),
    usage: s.get(usage),
    lifecycle: s.get(lifecycle),
    pdfJobs: s.get(pdfJobs),
    render: renderCallWith(s, to),
    assembler: s.get(assembler),
    present: s.get(presentJob),
    clock: s.clock,
    ...plansOf(s),
    limits: s.settings,
    orders: s.get(renderOrders),
    queue: s.get(renderQueue),
    webhooks: webhookEndpointsOf(s.get(endpoints)),
    onFault: s.onFault,
    destinations: s.get(destinationStore),
  });
export const merges = (s: Services) => mergesWith(s, s.get(storage));
/** Async merges, run by the render queue's consumer: a second layout uploads as its renders do. */
const consumerMerges = (s: Services) => mergesWith(s, s.get(asyncStorage));
/**
 * A completed batch's merged PDF and ZIP, built once (the batch output queue's consumer), then its
 * batch.completed told with their links.
 */
export const batchOutputBuilder = (s: Services) => {
  // Its counts only: the batch completed already, this counter completes nothing.
  const counter = createBatchCounter({ batches: s.get(batchStore), onFault: s.onFault });
  const urls = s.get(batchOutputUrls);
  return createBatchOutputs({
    batches: s.get(batchStore),
    getJobs: (accountId, ids) => s.get(batchWrites).getJobs(accountId, ids),
    orders: s.get(batchOrders),
    assembler: s.get(assembler),
    archiver: s.get(archiver),
    events: s.get(batchEvents),
    view: async (batch) => ({ ...(await counter.view(batch)), outputUrls: await urls(batch) }),
    now: () => s.clock.now(),
    limits: s.settings,
    onFault: s.onFault,
  });
};

/**
 * Deliveries (issue 36): a completed job's PDF copied into its destination. Started by the job's
 * end (jobEventsOf), each attempt the delivery queue's consumer's (functions/deliveries).
 */
const deliveryEvents = (s: Services) =>
  createWebhookDeliveryEvents({
    endpoints: s.get(endpoints),
    emitter: s.get(emitter),
    job: (accountId, jobId) => s.get(jobs).get(accountId, jobId),
    describe: s.get(jobPayload),
    onFault: s.onFault,
  });
export const deliverer = (s: Services) =>
  createDeliverer({
    records: s.get(deliveryRecords),
    destinations: s.get(destinationStore),
    // Only the consumer puts: the functions that start deliveries never build an STS client.
    writer: {
      put: (...a) => s.get(destinationWriter).put(...a),
      delete: (...a) => s.get(destinationWriter).delete(...a),
    },
    jobs: { get: async (accountId, jobId) => deliverableOf(await s.get(jobs).get(accountId, jobId)) },
    readPdf: (key) => s.get(pdfReader)(key),
    queue: s.get(deliveryQueue),
    // Built when a delivery ends (the consumer's): the functions that start one need no webhook queue.
    events: {
      delivered: (job, delivery) => s.get(deliveryEvents).delivered(job, delivery),
      failed: (job, delivery) => s.get(deliveryEvents).failed(job, delivery),
    },
    schedule: {
      firstRetrySeconds: s.settings.webhookFirstRetrySeconds,
      windowSeconds: s.settings.webhookRetryWindowSeconds,
    },
    clock: s.clock,
  });

/** The destinations resource's use cases (issue 36). */
export const destinationManagement = (s: Services) =>
  createDestinationManagement({
    store: s.get(destinationStore),
    writer: () => s.get(destinationWriter),
    externalIds: s.get(externalIds),
    clock: s.clock,
  });
