/**
 * The service's use cases built by the composition root (functions/services.ts, createServices)
 * on the memory parts (functions/adapters/memory, each held to its port's contract in
 * test/contract): one memory table for the stores that share DynamoDB's, the memory bucket (with
 * its assembler and archiver), the render and webhook queues in memory, the memory renderer (or
 * one a test hands in), the memory e-invoice checker, and a test clock. The graph is the one every
 * function builds; only what sits behind the ports differs.
 *
 *   const m = memoryServices();
 *   afterEach(() => m.close());
 *   const view = await m.services.get(asyncRenders).create(principal, command);
 *   for (const message of m.renderQueue.drain()) await m.services.get(renderWorker).handle(message);
 */

import { createMemoryAccountStore } from '../../functions/adapters/memory/accounts.js';
import { createMemoryApiKeyStore } from '../../functions/adapters/memory/api-keys.js';
import { createMemoryAssetBlobs } from '../../functions/adapters/memory/asset-blobs.js';
import { createMemoryAssetStore } from '../../functions/adapters/memory/assets.js';
import { createMemoryBatchArchiver } from '../../functions/adapters/memory/batch-archive.js';
import { createMemoryBatchWrites } from '../../functions/adapters/memory/batch-writes.js';
import { createMemoryBatchStore } from '../../functions/adapters/memory/batches.js';
import {
  createMemoryDeliveryRecords,
  createMemoryDestinationStore,
  createMemoryDestinationWriter,
} from '../../functions/adapters/memory/destinations.js';
import { createMemoryEInvoiceChecker } from '../../functions/adapters/memory/e-invoice.js';
import { createMemoryIdempotencyStore } from '../../functions/adapters/memory/idempotency.js';
import { createMemoryJobStore } from '../../functions/adapters/memory/jobs.js';
import { createMemoryBatchOrders, createMemoryRenderOrders } from '../../functions/adapters/memory/orders.js';
import { createMemoryPdfAssembler } from '../../functions/adapters/memory/pdf-assembly.js';
import { createMemoryPdfStorage } from '../../functions/adapters/memory/pdf-storage.js';
import { createMemoryQueue } from '../../functions/adapters/memory/queue.js';
import { createMemoryRenderer } from '../../functions/adapters/memory/renderer.js';
import { createMemorySigningKeyStore } from '../../functions/adapters/memory/signing-keys.js';
import { createMemoryTable } from '../../functions/adapters/memory/table.js';
import { createMemoryTemplateStore } from '../../functions/adapters/memory/templates.js';
import { createMemoryUsageStore } from '../../functions/adapters/memory/usage.js';
import { createMemoryUsageLedger } from '../../functions/adapters/memory/usage-ledger.js';
import {
  createMemoryWebhookDeliveryStore,
  createMemoryWebhookStore,
} from '../../functions/adapters/memory/webhooks.js';
import type { ResourceConfig } from '../../functions/core/config.js';
import type { LookupAll } from '../../functions/core/public-addresses.js';
import type { BatchOutputMessage } from '../../functions/domain/batches/batch-outputs.js';
import { monthOf } from '../../functions/domain/common/clock.js';
import type { Renderer } from '../../functions/domain/common/ports.js';
import type { Principal } from '../../functions/domain/common/principal.js';
import type { DeliveryMessage } from '../../functions/domain/destinations/deliveries.js';
import { jobRecordRetentionSeconds } from '../../functions/domain/jobs/jobs.js';
import type { RenderMessage } from '../../functions/domain/renders/async-renders.js';
import type { WorkOutcome } from '../../functions/domain/renders/render-worker.js';
import type { WebhookMessage } from '../../functions/domain/webhooks/webhooks.js';
import { createServices, renderWorker } from '../../functions/services.js';
import { checkSettings, type Settings } from '../../functions/settings.js';
import { webhookPayloads } from '../../functions/webhook-payloads.js';
import { testClock } from './dynalite.js';

export interface MemoryServicesOptions {
  /** Settings over the defaults (checkSettings({})). */
  readonly settings?: Partial<Settings>;
  /** @default the memory renderer */
  readonly renderer?: Renderer;
  /** The clock's start. @default 2026-11-28T10:00:00.000Z */
  readonly at?: string;
  /** WEBHOOK_EGRESS_ALLOW_HOSTS: `host:port`s webhooks may reach though not public (a test's receiver). */
  readonly webhookAllowHosts?: readonly string[];
  /** The resolver webhook hosts are judged with. @default the system's (no unit test should need it) */
  readonly webhookLookup?: LookupAll;
}

export const memoryServices = (options: MemoryServicesOptions = {}) => {
  const clock = testClock(options.at ?? '2026-11-28T10:00:00.000Z');
  const settings: Settings = { ...checkSettings({}), ...options.settings };
  const table = createMemoryTable();
  const retention = { recordRetentionSeconds: jobRecordRetentionSeconds(settings.pdfRetentionDays) };
  /** What the service logged as faults it carried on from, in order. */
  const faults: { message: string; error: unknown }[] = [];
  const onFault = (message: string, error: unknown) => faults.push({ message, error });
  const storage = createMemoryPdfStorage({
    downloadUrlTtlSeconds: settings.downloadUrlTtlSeconds,
    uploadUrlTtlSeconds: Math.ceil(settings.asyncRenderBudgetMs / 1000) + 300,
    clock,
  });
  const stores = {
    accounts: createMemoryAccountStore(clock),
    apiKeys: createMemoryApiKeyStore(clock),
    jobs: createMemoryJobStore(clock, retention, table),
    usage: createMemoryUsageStore(clock, table),
    templates: createMemoryTemplateStore(clock),
    idempotency: createMemoryIdempotencyStore({ clock, leaseMs: (2 * settings.jobLeaseSeconds * 1000) / 3 }),
    batchStore: createMemoryBatchStore(clock, retention, table),
    batchWrites: createMemoryBatchWrites(clock, retention, table),
    endpoints: createMemoryWebhookStore(),
    signingKeys: createMemorySigningKeyStore(),
    assets: createMemoryAssetStore(),
    assetBlobs: createMemoryAssetBlobs(),
    deliveries: createMemoryWebhookDeliveryStore(clock),
    storage,
    renderOrders: createMemoryRenderOrders(),
    batchOrders: createMemoryBatchOrders(),
    renderQueue: createMemoryQueue<RenderMessage>({ name: 'renders', clock }),
    batchOutputQueue: createMemoryQueue<BatchOutputMessage>({ name: 'batch-outputs', clock }),
    assembler: createMemoryPdfAssembler(storage, onFault, clock),
    archiver: createMemoryBatchArchiver(storage),
    usageLedger: createMemoryUsageLedger(),
    destinations: createMemoryDestinationStore(),
    deliveryRecords: createMemoryDeliveryRecords(table),
    deliveryQueue: createMemoryQueue<DeliveryMessage>({ name: 'deliveries', clock }),
    pdfReader: async (key: string) => {
      const stored = storage.object(key);
      if (!stored) throw new Error(`no object ${key}`);
      return stored.body;
    },
  };
  /** Customers' buckets and roles (issue 36): a test adds them, then reads what was delivered. */
  const destinationWriter = createMemoryDestinationWriter();
  const webhookQueue = createMemoryQueue<WebhookMessage>({ name: 'webhooks', clock });
  const config: ResourceConfig = {
    settings,
    aws: {
      region: 'us-east-1',
      dynamoDbEndpoint: undefined,
      s3Endpoint: undefined,
      lambdaEndpoint: undefined,
      sqsEndpoint: undefined,
      credentials: undefined,
    },
    tableName: undefined,
    auth: undefined,
    // The real keyed digest and secret box, from a secret given as a value (no Secrets Manager).
    apiKeySecret: { kind: 'value', value: 'k'.repeat(64) },
    bucketName: undefined,
    rendererFunctionName: undefined,
    webhookQueueUrl: undefined,
    webhookAllowHosts: options.webhookAllowHosts ?? [],
    renderQueueUrl: undefined,
    batchOutputQueueUrl: undefined,
    deliveryQueueUrl: undefined,
    usageEventBusName: undefined,
  };
  const renderer = options.renderer ?? createMemoryRenderer();
  const services = createServices(
    config,
    {
      renderer,
      webhookQueue,
      // Build and XSD, no schematron: rules_checked 0 (the real checker's contract, test/contract).
      eInvoices: createMemoryEInvoiceChecker(),
      destinationWriter,
      ...(options.webhookLookup ? { webhookLookup: options.webhookLookup } : {}),
      stores,
      clock,
      onFault,
    },
    webhookPayloads,
  );
  return {
    services,
    clock,
    settings,
    renderer,
    faults,
    ...stores,
    webhookQueue,
    destinationWriter,
    /**
     * An account's jobs and units as its month's record has them: every job should end completed
     * or failed, and every unit be consumed by a completed render or given back.
     */
    async ledger(accountId: string, month = monthOf(clock.now())) {
      const all = await stores.jobs.list(accountId, { limit: 10_000, offset: 0 });
      const count = (status: string) => all.filter((j) => j.status === status).length;
      const units = await stores.usage.readUnits(accountId, month);
      // The usage ledger (issue 39): one entry per completed job of the month, and no other.
      const billed = (await stores.usageLedger.ofAccountMonth(accountId, month)).map((e) => e.job_id);
      const completedIds = all.filter((j) => j.status === 'completed').map((j) => j.id);
      return {
        /** Usage ledger entries of the month. */
        billed: billed.length,
        /** Whether the ledger's entries are exactly the completed jobs, one for one. */
        billedAgrees: [...billed].sort().join() === [...completedIds].sort().join(),
        open: count('pending') + count('rendering'),
        completed: count('completed'),
        failed: count('failed'),
        /** Jobs whose unit is not settled yet (held, or being given back). */
        unsettled: all.filter((j) => j.unit !== undefined).length,
        // Counters never written are none.
        rendersUsed: units.rendersUsed ?? 0,
        inFlight: units.inFlight ?? 0,
      };
    },
    /** The webhook events queued for delivery so far: each one's type and payload data, oldest first. */
    async events(): Promise<{ type: string; data: Record<string, unknown> }[]> {
      const out: { type: string; data: Record<string, unknown> }[] = [];
      for (const { body } of webhookQueue.messages()) {
        const found = await stores.deliveries.get(body.account_id, body.webhook_id, body.delivery_id);
        if (!found) throw new Error(`a message names delivery ${body.delivery_id}, which was not recorded`);
        out.push({
          type: found.event_type,
          data: (JSON.parse(found.payload) as { data: Record<string, unknown> }).data,
        });
      }
      return out;
    },
    close: async () => {
      await Promise.all([
        stores.storage.close(),
        stores.renderQueue.close(),
        stores.batchOutputQueue.close(),
        webhookQueue.close(),
      ]);
    },
  };
};

export type MemoryServices = ReturnType<typeof memoryServices>;

/**
 * Plays the render queue's consumer until the queue is empty: each message handled; a retry comes
 * back after its backoff (the consumer holds it back), when the clock is moved on to it.
 */
export const consumeRenderQueue = async (s: MemoryServices): Promise<WorkOutcome[]> => {
  const worker = s.services.get(renderWorker);
  const outcomes: WorkOutcome[] = [];
  for (let round = 0; round < 20; round++) {
    const messages = s.renderQueue.drain();
    if (messages.length === 0) {
      const next = s.renderQueue.messages()[0];
      if (!next) return outcomes;
      s.clock.set(new Date(next.visibleAt).toISOString());
      continue;
    }
    for (const message of messages) {
      const outcome = await worker.handle(message);
      outcomes.push(outcome);
      if (outcome.kind === 'retry') await s.renderQueue.send(message, { delaySeconds: outcome.delaySeconds });
    }
  }
  throw new Error('the queue never emptied');
};

let accounts = 0;
/** A caller of an account of its own, on the free plan. */
export const caller = (plan = 'free'): Principal => ({
  accountId: `acct-${++accounts}`,
  email: undefined,
  credential: 'session',
  plan,
});
