import type { ResourceConfig } from './core/config.js';
import type { AccountStore } from './domain/accounts/accounts.js';
import type { ApiKeyStore } from './domain/accounts/api-keys.js';
import type { UsageStore } from './domain/accounts/usage.js';
import type { UsageEventBus } from './domain/accounts/usage-events.js';
import type { UsageLedger } from './domain/accounts/usage-ledger.js';
import type { AssetBlobs, AssetStore } from './domain/assets/assets.js';
import type { BatchWrites } from './domain/batches/batch-acceptance.js';
import type { BatchArchiver, BatchOutputMessage } from './domain/batches/batch-outputs.js';
import type { BatchOrders } from './domain/batches/batch-queue.js';
import type { BatchStore, BatchView } from './domain/batches/batches.js';
import type { Clock, JobEvents, MessageQueue, PdfStorage, Renderer } from './domain/common/ports.js';
import type { DeliveryMessage, DeliveryRecords } from './domain/destinations/deliveries.js';
import type { DestinationStore, DestinationWriter } from './domain/destinations/destinations.js';
import type { JobStore, JobView } from './domain/jobs/jobs.js';
import type { PdfAssembler } from './domain/merges/merges.js';
import type { RenderMessage, RenderOrders } from './domain/renders/async-renders.js';
import type { EInvoiceChecker } from './domain/renders/e-invoice.js';
import type { IdempotencyStore } from './domain/renders/idempotency.js';
import type { KmsPublicKey, SigningKeyStore } from './domain/signing/signing-keys.js';
import type { TemplateStore } from './domain/templates/templates.js';
import type { WebhookDeliveryStore, WebhookStore } from './domain/webhooks/webhooks.js';
import type { Settings } from './settings.js';
import type { WebhookParts } from './webhooks/queue.js';

/** What the local stack and tests hand in, in place of what the cloud reaches over AWS. */
export interface ServiceParts extends WebhookParts {
  /** The local stack's in-process renderer; in the cloud the renderer Lambda is invoked. */
  readonly renderer?: Renderer;
  /** In place of the webhook job events (a job that names an endpoint tells it when it ends). */
  readonly events?: JobEvents;
  /** The local stack's usage event bus (a JSON-lines file in DATA_DIR); in the cloud, EventBridge. */
  readonly usageBus?: UsageEventBus;
  /**
   * Tests only: stores, the bucket and the render queue in place of DynamoDB, S3 and SQS (the
   * memory adapters, functions/adapters/memory, held to the same contracts as the real ones), so
   * that use cases are built here, as every function builds them, and tested in milliseconds.
   */
  readonly stores?: Partial<StoreParts>;
  /** Tests only: the clock every store and use case reads (a test clock). @default the system's */
  readonly clock?: Clock;
  /** Tests only: told of every fault the service logs and carries on from. @default logged */
  readonly onFault?: (message: string, error: unknown) => void;
  /**
   * The e-invoice checker (functions/core/e-invoice/check.ts), handed in by the pdf function
   * alone: its validators (SaxonJS, libxml2 in WebAssembly, the Factur-X artefacts: some 4 MB)
   * stay out of every other function's bundle. Absent: a render with e_invoice is refused.
   */
  readonly eInvoices?: EInvoiceChecker;
  /**
   * The public half of a KMS key, handed in by the signing-keys function alone (its KMS client;
   * the local stack's refusal, lib/local/stack.ts): a KMS key is registered only when its
   * certificate certifies it. Absent: registering a KMS key is refused.
   */
  readonly kmsPublicKey?: KmsPublicKey;
  /**
   * The writer into customers' buckets (issue 36): the local stack's, through its STS stand-in
   * and S3 server (lib/local/sts.ts), or a test's memory writer. @default STS and S3 on AWS
   */
  readonly destinationWriter?: DestinationWriter;
}

/** The ports the composition root otherwise builds on AWS, by the name of their builder. */
export interface StoreParts {
  readonly accounts: AccountStore;
  readonly apiKeys: ApiKeyStore;
  readonly jobs: JobStore;
  readonly usage: UsageStore;
  readonly templates: TemplateStore;
  readonly idempotency: IdempotencyStore;
  readonly batchStore: BatchStore;
  readonly batchWrites: BatchWrites;
  readonly endpoints: WebhookStore;
  readonly deliveries: WebhookDeliveryStore;
  readonly signingKeys: SigningKeyStore;
  /** Account assets: what the table knows of them, and their bytes in the bucket. */
  readonly assets: AssetStore;
  readonly assetBlobs: AssetBlobs;
  /** The PDF bucket, for sync and async renders alike. */
  readonly storage: PdfStorage;
  readonly renderOrders: RenderOrders;
  readonly batchOrders: BatchOrders;
  readonly renderQueue: MessageQueue<RenderMessage>;
  readonly batchOutputQueue: MessageQueue<BatchOutputMessage>;
  /** Merges and batches' merged PDFs, read from and written to the bucket. */
  readonly assembler: PdfAssembler;
  /** Batches' ZIPs, read from and written to the bucket. */
  readonly archiver: BatchArchiver;
  /** The usage ledger (issue 39). Not handed in with the other stores: none is kept. */
  readonly usageLedger: UsageLedger;
  /** Destinations (issue 36): customers' buckets. */
  readonly destinations: DestinationStore;
  /** Jobs' deliveries into their destinations: the records (on the job's item), the queue, the PDF's bytes. */
  readonly deliveryRecords: DeliveryRecords;
  readonly deliveryQueue: MessageQueue<DeliveryMessage>;
  readonly pdfReader: (objectKey: string) => Promise<Uint8Array>;
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
  /** A fault logged, and carried on from (the parts' `onFault` in tests). */
  readonly onFault: (message: string, error: unknown) => void;
  get<T>(build: (services: Services) => T): T;
}
