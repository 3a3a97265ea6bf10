/**
 * The composition root's lower half (services.ts): the clients, stores, queues and the bucket each
 * function builds once, from its configuration or the parts handed in. The use cases above them
 * are put together in services.ts.
 */

import { createAccountStore } from './adapters/dynamodb/accounts.js';
import { createApiKeyStore } from './adapters/dynamodb/api-keys.js';
import { createAssetStore } from './adapters/dynamodb/assets.js';
import { createBatchWrites } from './adapters/dynamodb/batch-writes.js';
import { createBatchStore } from './adapters/dynamodb/batches.js';
import { createDocumentClient } from './adapters/dynamodb/client.js';
import { createDeliveryRecords } from './adapters/dynamodb/deliveries.js';
import { createDestinationStore } from './adapters/dynamodb/destinations.js';
import { createIdempotencyStore } from './adapters/dynamodb/idempotency.js';
import { createJobStore } from './adapters/dynamodb/jobs.js';
import { createSigningKeyStore } from './adapters/dynamodb/signing-keys.js';
import { createTemplateStore } from './adapters/dynamodb/templates.js';
import { createUsageStore } from './adapters/dynamodb/usage.js';
import { createUsageLedger } from './adapters/dynamodb/usage-ledger.js';
import { createWebhookDeliveryStore, createWebhookStore } from './adapters/dynamodb/webhooks.js';
import { createLambdaRenderer } from './adapters/lambda/renderer-client.js';
import { createS3AssetBlobs } from './adapters/s3/asset-blobs.js';
import { createS3BatchOrders } from './adapters/s3/batch-orders.js';
import { createS3Client } from './adapters/s3/client.js';
import { createS3PdfReader } from './adapters/s3/pdf-reader.js';
import { createS3PdfStorage } from './adapters/s3/pdf-storage.js';
import { createS3RenderOrders } from './adapters/s3/render-orders.js';
import { createApiKeyDigester } from './adapters/secrets-manager/api-key-digest.js';
import {
  createBodyHashDigest,
  createExternalIdDigest,
  createOrderSecretBox,
  createSigningKeySecretBox,
  createWebhookSecretBox,
} from './adapters/secrets-manager/webhook-secret-box.js';
import { createSqsClient } from './adapters/sqs/client.js';
import { createSqsQueue } from './adapters/sqs/queue.js';
import { createStsDestinationWriter } from './adapters/sts/destination-writer.js';
import { RENDER_RUN_SLICE_MS } from './consumers.js';
import { createAssetResolver } from './domain/assets/assets.js';
import type { MessageQueue, PdfStorage, Renderer } from './domain/common/ports.js';
import type { DeliveryMessage } from './domain/destinations/deliveries.js';
import { jobRecordRetentionSeconds } from './domain/jobs/jobs.js';
import type { RenderMessage } from './domain/renders/async-renders.js';
import { keyedIdempotency } from './domain/renders/idempotency.js';
import { sealedBatchOrders, sealedRenderOrders } from './domain/renders/order-secrets.js';
import { createSigningKeyResolver } from './domain/signing/signing-keys.js';
import type { WebhookMessage } from './domain/webhooks/webhooks.js';
import type { Services, StoreParts } from './service-parts.js';
import { DEFAULT_PLAN } from './settings.js';

export const need = <T>(value: T | undefined, what: string): T => {
  if (value === undefined) throw new Error(`this function is not wired with ${what}`);
  return value;
};

/** The part handed in for `name`, or what `build` makes. */
export const part = <K extends keyof StoreParts>(
  s: Services,
  name: K,
  build: () => StoreParts[K],
): StoreParts[K] => s.parts.stores?.[name] ?? build();

export const tableName = (s: Services) => need(s.config.tableName, 'the table (TABLE_NAME)');
export const bucketName = (s: Services) => need(s.config.bucketName, 'the PDF bucket (BUCKET_NAME)');
export const apiKeySecret = (s: Services) => need(s.config.apiKeySecret, 'the API key secret');
export const recordRetention = (s: Services) => ({
  recordRetentionSeconds: jobRecordRetentionSeconds(s.settings.pdfRetentionDays),
});
export const plansOf = (s: Services) => ({ plans: s.settings.plans, defaultPlan: DEFAULT_PLAN });

// Clients.
export const db = (s: Services) => createDocumentClient(s.config.aws);
export const s3 = (s: Services) => createS3Client(s.config.aws);
/** The SQS client, for what a consumer does to its own messages (holding one back). */
export const sqs = (s: Services) => createSqsClient(s.config.aws);

// Stores.
export const accounts = (s: Services) =>
  part(s, 'accounts', () => createAccountStore(s.get(db), tableName(s), s.clock));
export const apiKeys = (s: Services) =>
  part(s, 'apiKeys', () => createApiKeyStore(s.get(db), tableName(s), s.clock, s.onFault));
export const jobs = (s: Services) =>
  part(s, 'jobs', () => createJobStore(s.get(db), tableName(s), s.clock, recordRetention(s)));
export const usage = (s: Services) =>
  part(s, 'usage', () => createUsageStore(s.get(db), tableName(s), s.clock));
/**
 * The usage ledger (issue 39): entries kept USAGE_LEDGER_RETENTION_DAYS after their job completed.
 * A test that hands in its stores without one keeps none.
 */
export const usageLedger = (s: Services) =>
  s.parts.stores
    ? s.parts.stores.usageLedger
    : createUsageLedger(s.get(db), tableName(s), {
        retentionSeconds: s.settings.usageLedgerRetentionDays * 86_400,
      });
export const templates = (s: Services) =>
  part(s, 'templates', () => createTemplateStore(s.get(db), tableName(s), s.clock, { onFault: s.onFault }));
// A claim's lease is two of its renewals (every third of the job's lease), so a dead request's
// key is taken over that soon; a twin of a live one waits as long as the longest render.
// Body hashes keyed (HMAC) before the store keeps them: a body may hold passwords (idempotency.ts).
export const idempotency = (s: Services) => keyedIdempotency(s.get(idempotencyStore), s.get(bodyHashDigest));
export const bodyHashDigest = (s: Services) => createBodyHashDigest(apiKeySecret(s), s.config.aws);
export const idempotencyStore = (s: Services) =>
  part(s, 'idempotency', () =>
    createIdempotencyStore(
      s.get(db),
      tableName(s),
      s.clock,
      Math.ceil((2 * s.settings.jobLeaseSeconds * 1000) / 3),
      s.settings.renderBudgetMs + 30_000,
    ),
  );
export const batchStore = (s: Services) =>
  part(s, 'batchStore', () => createBatchStore(s.get(db), tableName(s), s.clock, recordRetention(s)));
export const batchWrites = (s: Services) =>
  part(s, 'batchWrites', () => createBatchWrites(s.get(db), tableName(s), s.clock, recordRetention(s)));
export const endpoints = (s: Services) =>
  part(s, 'endpoints', () => createWebhookStore(s.get(db), tableName(s), s.onFault));
export const deliveries = (s: Services) =>
  part(s, 'deliveries', () => createWebhookDeliveryStore(s.get(db), tableName(s), s.clock));
export const signingKeyStore = (s: Services) =>
  part(s, 'signingKeys', () => createSigningKeyStore(s.get(db), tableName(s), s.onFault));
export const assetStore = (s: Services) =>
  part(s, 'assets', () => createAssetStore(s.get(db), tableName(s), s.onFault));
/** Assets' bytes; the renderer's links live as long as the longest render's budget, and five minutes more. */
export const assetBlobs = (s: Services) =>
  part(s, 'assetBlobs', () =>
    createS3AssetBlobs(s.get(s3), bucketName(s), {
      readUrlTtlSeconds: Math.ceil(s.settings.asyncRenderBudgetMs / 1000) + 300,
      downloadUrlTtlSeconds: s.settings.downloadUrlTtlSeconds,
    }),
  );
/** The assets a render's page may load: the rendering account's (domain/assets/assets.ts). */
export const assetResolver = (s: Services) =>
  createAssetResolver({ store: s.get(assetStore), blobs: s.get(assetBlobs) });
/** The bucket, whose upload links live as long as a render's budget, and five minutes more. */
export const pdfStorage = (s: Services, budgetMs: number): PdfStorage =>
  part(s, 'storage', () =>
    createS3PdfStorage(s.get(s3), bucketName(s), {
      downloadUrlTtlSeconds: s.settings.downloadUrlTtlSeconds,
      uploadUrlTtlSeconds: Math.ceil(budgetMs / 1000) + 300,
    }),
  );
/** The bucket as a sync render uses it. */
export const storage = (s: Services) => pdfStorage(s, s.settings.renderBudgetMs);
/** The bucket as the render queue's consumer uses it (an async render's budget). */
// A batch run's upload links are signed when the run starts: valid through its slice too.
export const asyncStorage = (s: Services) =>
  pdfStorage(s, s.settings.asyncRenderBudgetMs + RENDER_RUN_SLICE_MS);
// Orders keep a `protection`'s passwords sealed (domain/renders/order-secrets.ts).
export const orderSecrets = (s: Services) => createOrderSecretBox(apiKeySecret(s), s.config.aws);
export const renderOrders = (s: Services) =>
  sealedRenderOrders(
    part(s, 'renderOrders', () => createS3RenderOrders(s.get(s3), bucketName(s))),
    () => s.get(orderSecrets),
  );
export const batchOrders = (s: Services) =>
  sealedBatchOrders(
    part(s, 'batchOrders', () => createS3BatchOrders(s.get(s3), bucketName(s))),
    () => s.get(orderSecrets),
  );

// Queues, secrets, the renderer.
export const renderQueue = (s: Services) =>
  part(s, 'renderQueue', () =>
    createSqsQueue<RenderMessage>(
      s.get(sqs),
      need(s.config.renderQueueUrl, 'the render queue (RENDER_QUEUE_URL)'),
    ),
  );
export const webhookQueue = (s: Services): MessageQueue<WebhookMessage> => {
  if (s.parts.webhookQueue) return s.parts.webhookQueue;
  if (!s.config.webhookQueueUrl) throw new Error('webhooks need WEBHOOK_QUEUE_URL, or a queue handed in');
  return createSqsQueue<WebhookMessage>(s.get(sqs), s.config.webhookQueueUrl);
};
export const digestApiKey = (s: Services) => createApiKeyDigester(apiKeySecret(s), s.config.aws);
// Uploaded signing keys' private keys, sealed under their own derived key (domain/signing/signing-keys.ts).
export const signingKeySecrets = (s: Services) => createSigningKeySecretBox(apiKeySecret(s), s.config.aws);
/** The keys a render's signature names: checked at acceptance, opened when the renderer is called. */
export const signingKeys = (s: Services) =>
  createSigningKeyResolver({ store: s.get(signingKeyStore), box: () => s.get(signingKeySecrets) });
export const webhookSecrets = (s: Services) => createWebhookSecretBox(apiKeySecret(s), s.config.aws);
export const renderer = (s: Services): Renderer => {
  if (s.parts.renderer) return s.parts.renderer;
  if (!s.config.rendererFunctionName) {
    throw new Error('this function needs RENDERER_FUNCTION_NAME, or a renderer handed in');
  }
  return createLambdaRenderer(s.config.rendererFunctionName, s.config.aws);
};

// The HTTP stack's dependencies.

// Destinations (issue 36): customers' buckets, reached through their roles.
export const destinationStore = (s: Services) =>
  part(s, 'destinations', () => createDestinationStore(s.get(db), tableName(s), s.onFault));
/** STS and S3 on AWS (the local stack hands its own in: its STS stand-in and S3 server). */
export const destinationWriter = (s: Services) => s.parts.destinationWriter ?? createStsDestinationWriter();
/** Deliveries (issue 36): each job's delivery, kept on its item. */
export const deliveryRecords = (s: Services) =>
  part(s, 'deliveryRecords', () => createDeliveryRecords(s.get(db), tableName(s)));
export const deliveryQueue = (s: Services) =>
  part(s, 'deliveryQueue', () =>
    createSqsQueue<DeliveryMessage>(
      s.get(sqs),
      need(s.config.deliveryQueueUrl, 'the delivery queue (DELIVERY_QUEUE_URL)'),
    ),
  );
/** A stored PDF's bytes, as the deliverer copies them. */
export const pdfReader = (s: Services) =>
  part(s, 'pdfReader', () => createS3PdfReader(s.get(s3), bucketName(s)));
/** A destination's external id: keyed by the API-key secret, a function of the account and the role. */
export const externalIds = (s: Services) => createExternalIdDigest(apiKeySecret(s), s.config.aws);
