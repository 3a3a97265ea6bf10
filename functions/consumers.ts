/**
 * The consumer table: every Lambda that no API route answers, as data: what feeds it (a queue of
 * queues.ts, or a schedule), what it is bound to and allowed (least privilege), and how it takes
 * its messages (batch size, concurrency). The twin of routes.ts:
 * - the CDK stack makes one function per entry with its grants, event source or schedule, and the
 *   queue it reads (lib/service-consumer.ts, lib/service-queue.ts);
 * - the local stack starts every entry the same way, each queue's with its event source mapping,
 *   each schedule's with a timer (lib/local/consumers.ts);
 * - the entry's folder (functions/<name>/) holds its index.ts, whose `createHandler` (the handler
 *   factory the local stack calls) and `handler` (the Lambda's entry the CDK bundles) are made by
 *   the one consumer middleware stack (functions/core/consumer.ts) from this entry.
 * A new consumer is an entry here, its folder's index.ts and its use case.
 *
 * Like routes.ts this is data the CDK app reads, so it imports types and data only.
 */
import {
  batchOutputQueue,
  deliveryQueue,
  type QueueDeclaration,
  renderQueue,
  webhookQueue,
} from './queues.js';
import type { Settings } from './settings.js';
import type { TableAction } from './table.js';
import type { Binding } from './wiring.js';
import { SERVICE_METRICS } from './wiring.js';

/** The table's actions a consumer may be allowed (never DeleteItem unless it says so). */
export type { TableAction } from './table.js';

/** What a consumer is bound to, each with its grant. */
export interface ConsumerNeeds {
  /** TABLE_NAME, and read/write access to items and indexes, or exactly these actions. */
  readonly table?: 'readWrite' | readonly TableAction[];
  /** The API-key HMAC key (webhook signing secrets are sealed under a key derived from it). */
  readonly apiKeySecret?: true;
  /** BUCKET_NAME and PDF links signed; `consumeOrders`: async renders' orders read and deleted. */
  readonly pdfBucket?: {
    readonly consumeOrders?: true;
    /** Account assets (assets/) read: it signs the links its renders' pages load them through. */
    readonly readAssets?: true;
  };
  /** Invokes the renderer of async renders (the sync one is the API's). */
  readonly asyncRenderer?: true;
  /** The render queue: send to it, or hold its messages back (ChangeMessageVisibility) as its consumer. */
  readonly renderQueue?: 'send' | 'consume';
  /** The webhook queue: send to it (events, retries). */
  readonly webhookQueue?: 'send';
  /** The batch output queue: send a completed batch whose outputs are to be built. */
  readonly batchOutputQueue?: 'send';
  /** The delivery queue: send a completed job's delivery (and, as its consumer, each retry). */
  readonly deliveryQueue?: 'send';
  /** Customers' roles of destinations: sts:AssumeRole only with the service's external id prefix. */
  readonly destinationRoles?: true;
  /** The stack's usage event bus: put events to it (events:PutEvents on that bus alone). */
  readonly usageEventBus?: 'put';
}

/** Fed by an SQS event source mapping that reports partial batch failures (ReportBatchItemFailures). */
export interface QueueSource {
  readonly kind: 'queue';
  readonly queue: QueueDeclaration;
  /** Messages per invocation (the mapping's BatchSize). */
  readonly batchSize: number;
  /** The mapping's maximum concurrency (2-1000): invocations at once. */
  readonly maxConcurrency: (settings: Settings) => number;
  /** The local event source mapping's consumers at once. @default maxConcurrency */
  readonly localConcurrency?: (settings: Settings) => number;
  /** A batch's records handled side by side, or one after another. */
  readonly recordsInParallel: boolean;
}

/** Run on a timer: EventBridge's rate in the cloud, the local stack's interval on one machine. */
export interface ScheduleSource {
  readonly kind: 'schedule';
  readonly rateMinutes: number;
  /**
   * Lambda's retries of a failed run (0-2), within one period of the schedule: a run still failing
   * after them goes to the consumer's failure queue (lib/service-consumer.ts), as does a run
   * EventBridge could not deliver. The next run comes anyway.
   */
  readonly retryAttempts: number;
  readonly localIntervalSeconds: (settings: Settings) => number;
  /** The local stack runs it once at start-up, before it serves (what a killed stack left ends first). */
  readonly runsBeforeLocalStart: boolean;
}

export interface ConsumerDeclaration {
  /** The folder under functions/ (its index.ts) and the function's name in both stacks. */
  readonly name: string;
  readonly description: string;
  /** @default functions/<name> (a test's fixture consumer lives elsewhere) */
  readonly directory?: string;
  readonly source: QueueSource | ScheduleSource;
  readonly needs: ConsumerNeeds;
  readonly timeoutSeconds: (settings: Settings) => number;
  readonly memorySizeMiB: number;
  /**
   * What its errors alarm says, and a metric of its own faults that the alarm adds to the
   * function's errors (a partial batch failure is one: Lambda does not count it as an error).
   * Every consumer has the alarm, and a heartbeat alarm (lib/service-consumer.ts).
   * @default the function's errors alone, described by the consumer's name and description
   */
  readonly errorsAlarm?: { readonly description: string; readonly faultsMetric?: string };
}

/** Above its async budget, the render worker's own start, templating and upload. */
export const RENDER_WORKER_OVERHEAD_SECONDS = 60;

/**
 * Batch runs (issue 43, domain/renders/render-run.ts): the render worker takes this many messages
 * at once, and a batch's items among them render as one run in one browser context.
 */
export const RENDER_RUN_MAX_ITEMS = 10;
/**
 * No item of a run starts after this: a run holds its consumer at most this plus one item's
 * budget (docs/batch-runs.md). Measured: 0.5 s is 5-10 invoices, enough to spread a context's
 * start over them; at 1 s another account's render mid-batch waited 3.06× its idle latency
 * (batch-fairness.test.ts's bound is 3×).
 */
export const RENDER_RUN_SLICE_MS = 500;

/**
 * The render worker's timeout: the async render budget and its own work; a batch run's slice
 * (0.5 s) is within its own minute (the budget's largest, 840 s, leaves Lambda's 900 s no more).
 */
export const renderWorkerTimeoutSeconds = (settings: Pick<Settings, 'asyncRenderBudgetMs'>): number =>
  Math.ceil(settings.asyncRenderBudgetMs / 1000) + RENDER_WORKER_OVERHEAD_SECONDS;

export const renderWorker = {
  name: 'render-worker',
  description: 'Runs async PDF jobs from the render queue, rendered by the async renderer',
  source: {
    kind: 'queue',
    queue: renderQueue,
    // A consumer renders one document at once; a batch's items among its messages as one run.
    batchSize: RENDER_RUN_MAX_ITEMS,
    maxConcurrency: (settings) => settings.asyncConcurrency,
    recordsInParallel: false,
  },
  needs: {
    table: 'readWrite',
    pdfBucket: { consumeOrders: true, readAssets: true },
    asyncRenderer: true,
    // An order's `protection` passwords are sealed under a key derived from it (order-secrets.ts).
    apiKeySecret: true,
    renderQueue: 'consume',
    // An async job that names a webhook endpoint tells it when it ends.
    webhookQueue: 'send',
    // The job that completes a batch with outputs asks for them to be built.
    batchOutputQueue: 'send',
    // A completed job that names a destination queues its delivery's first attempt.
    deliveryQueue: 'send',
  },
  timeoutSeconds: renderWorkerTimeoutSeconds,
  // It reads an order (up to the request's 6 MB), makes a few table calls and waits on the
  // renderer's invoke; Chromium's memory is the async renderer's.
  memorySizeMiB: 512,
} as const satisfies ConsumerDeclaration;

/** The sender's timeout: one attempt is at most WEBHOOK_TIMEOUT_MS (≤ 30 s) plus a few table calls. */
const WEBHOOK_SENDER_TIMEOUT_SECONDS = 60;

export const webhookSender = {
  name: 'webhook-sender',
  description: 'Sends signed webhooks to public addresses, one attempt per message',
  source: {
    kind: 'queue',
    queue: webhookQueue,
    // One message per run (issue 38): a run ends with its own POST, not with its batch's slowest
    // receiver, so a slow or silent endpoint holds one consumer per attempt in flight, and at
    // most ENDPOINT_CONCURRENCY of them (webhook-sender.ts); the others go on.
    batchSize: 1,
    maxConcurrency: () => 10,
    // Waiting on receivers costs no CPU: enough that two stalled endpoints leave room.
    localConcurrency: () => 8,
    recordsInParallel: false,
  },
  needs: {
    // It reads endpoints and deliveries and appends attempts; it never deletes.
    table: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
    apiKeySecret: true,
    webhookQueue: 'send',
  },
  timeoutSeconds: () => WEBHOOK_SENDER_TIMEOUT_SECONDS,
  memorySizeMiB: 256,
  errorsAlarm: {
    description:
      'The webhook sender failed on its own side (the table, the queue or a crash): deliveries wait for the redrive',
    faultsMetric: SERVICE_METRICS.webhookSenderFaults,
  },
} as const satisfies ConsumerDeclaration;

/**
 * The event of a schedule's run at the local stack's start, before it serves (runsBeforeLocalStart;
 * the later runs' is `local.schedule`): every render the table holds open then was the stack's
 * previous process's, which is gone, so the sweeper frees their slots at once (issue 37).
 */
export const LOCAL_START_EVENT = { source: 'local.start' } as const;

export const sweeper = {
  name: 'sweeper',
  description: 'Ends jobs whose request died and reconciles their render units',
  source: {
    kind: 'schedule',
    // EventBridge's finest rate: a job stays unresolved at most its lease plus this plus one pass.
    rateMinutes: 1,
    retryAttempts: 0,
    localIntervalSeconds: (settings) => settings.sweepIntervalSeconds,
    runsBeforeLocalStart: true,
  },
  needs: {
    // Query on the table and its indexes, read and update; a delivery it records is a conditional
    // put of a new item before its message is queued. It never deletes one.
    table: ['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
    // Async jobs whose lease ran out with attempts left are sent again.
    renderQueue: 'send',
    // job.failed of a job it fails, batch.completed of a batch it ends, overdue deliveries.
    webhookQueue: 'send',
    // A batch it ends whose outputs are to be built.
    batchOutputQueue: 'send',
  },
  // A pass reads at most 500 expired entries, each a few DynamoDB calls of milliseconds.
  timeoutSeconds: () => 50,
  memorySizeMiB: 256,
} as const satisfies ConsumerDeclaration;

/**
 * A batch's outputs (its merged PDF, its ZIP) are built by one invocation: 1,000 items' PDFs read
 * one after another, the ZIP streamed to the bucket, the merged PDF held whole (pdf-lib writes it
 * at once). Lambda's longest timeout.
 */
const BATCH_OUTPUTS_TIMEOUT_SECONDS = 900;

export const batchOutputs = {
  name: 'batch-outputs',
  description: "Builds a completed batch's merged PDF and ZIP once, then tells batch.completed",
  source: {
    kind: 'queue',
    queue: batchOutputQueue,
    batchSize: 1,
    maxConcurrency: () => 2,
    localConcurrency: () => 1,
    recordsInParallel: false,
  },
  needs: {
    // It reads the batch and its jobs, records the outputs, and writes batch.completed's delivery.
    table: 'readWrite',
    // Items' PDFs read and the outputs written (pdf/), the batch's file names read and deleted (orders/).
    pdfBucket: { consumeOrders: true },
    webhookQueue: 'send',
  },
  timeoutSeconds: () => BATCH_OUTPUTS_TIMEOUT_SECONDS,
  // Measured in the Lambda-like sandbox (test/integration/lambda-sandbox.test.ts): 1,000 items of
  // two pages (11.6 KB each; a merged PDF of 9.4 MiB and a ZIP of 10.2 MiB) peaked at 201 MiB. The
  // merged PDF is held whole, so the peak grows with the items' size: room for invoices four times
  // as large.
  memorySizeMiB: 1024,
} as const satisfies ConsumerDeclaration;

/**
 * Deliveries (issue 36): a completed job's PDF copied into its destination, the customer's bucket,
 * through the role it assumes there; one attempt a message, retried on the webhook schedule, and
 * job.delivered / job.delivery_failed told once (domain/destinations/deliveries.ts).
 */
export const deliveries = {
  name: 'deliveries',
  description:
    "Copies completed jobs' PDFs into their destinations (customers' buckets), one attempt per message",
  source: {
    kind: 'queue',
    queue: deliveryQueue,
    // One put a run, as the webhook sender's one POST: a slow bucket holds one consumer.
    batchSize: 1,
    maxConcurrency: () => 5,
    localConcurrency: () => 2,
    recordsInParallel: false,
  },
  needs: {
    // The job, its destination, its delivery and the job's endpoint read (GetItem); the delivery
    // written on the job's item (UpdateItem); job.delivered / job.delivery_failed recorded as a
    // webhook delivery (a conditional PutItem). Never a query, never a delete.
    table: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
    // The job's PDF read.
    pdfBucket: {},
    // job.delivered / job.delivery_failed queued (the sender signs them).
    webhookQueue: 'send',
    // Its own retries.
    deliveryQueue: 'send',
    // sts:AssumeRole on the customers' roles, only with the service's external id prefix.
    destinationRoles: true,
  },
  // One attempt: a role assumed and a PDF (at most the service's PDF cap) put, with AWS's retries.
  timeoutSeconds: () => 120,
  memorySizeMiB: 512,
} as const satisfies ConsumerDeclaration;

/**
 * Usage events (issue 39): the usage ledger's unpublished entries put to the stack's EventBridge
 * bus, each marked published once the bus took it (at least once; the job id is the dedupe key).
 * The only function that may put events to the bus.
 */
export const usageEvents = {
  name: 'usage-events',
  description: "Publishes the usage ledger's new entries to the usage event bus",
  source: {
    kind: 'schedule',
    rateMinutes: 1,
    retryAttempts: 0,
    localIntervalSeconds: (settings) => settings.sweepIntervalSeconds,
    runsBeforeLocalStart: true,
  },
  needs: {
    // The outbox (GSI1) read, an entry marked published: nothing else.
    table: ['dynamodb:Query', 'dynamodb:UpdateItem'],
    usageEventBus: 'put',
  },
  // A pass puts at most 500 events, ten at a time.
  timeoutSeconds: () => 50,
  memorySizeMiB: 256,
} as const satisfies ConsumerDeclaration;

/** Every consumer of the service. */
export const consumers: readonly ConsumerDeclaration[] = [
  renderWorker,
  webhookSender,
  sweeper,
  batchOutputs,
  usageEvents,
  deliveries,
];

/**
 * The bindings a consumer's function is given (the wiring declaration's, as an API resource's):
 * its configuration reads exactly these (functions/core/config.ts), the stacks set exactly these.
 */
export const consumerWiring = (c: ConsumerDeclaration): Readonly<Record<Binding, boolean>> => ({
  table: c.needs.table !== undefined,
  userPool: false,
  apiKeySecret: c.needs.apiKeySecret === true,
  pdfBucket: c.needs.pdfBucket !== undefined,
  renderer: c.needs.asyncRenderer === true,
  renderQueue: c.needs.renderQueue !== undefined,
  webhookQueue: c.needs.webhookQueue !== undefined,
  batchOutputQueue: c.needs.batchOutputQueue !== undefined,
  kmsSigningKeys: false,
  destinationRoles: c.needs.destinationRoles === true,
  deliveryQueue: c.needs.deliveryQueue !== undefined,
  usageEventBus: c.needs.usageEventBus !== undefined,
});

/** The consumer that takes `queue`'s messages; every queue has one. */
export const consumerOf = (
  queue: Pick<QueueDeclaration, 'name'>,
  table: readonly ConsumerDeclaration[] = consumers,
): ConsumerDeclaration & { readonly source: QueueSource } => {
  const found = table.filter((c) => c.source.kind === 'queue' && c.source.queue.name === queue.name);
  if (found.length !== 1) {
    throw new Error(
      `the queue "${queue.name}" has ${found.length} consumers (functions/consumers.ts): one is needed`,
    );
  }
  return found[0] as ConsumerDeclaration & { readonly source: QueueSource };
};
