/**
 * The queue table: every SQS queue of the service, as data. The CDK stack (lib/service-queue.ts)
 * and the local stack (lib/local/stack.ts, on its own SQS server) both make each queue from its
 * entry here, and the consumer table (consumers.ts) names the queue each consumer takes its
 * messages from. Like routes.ts, settings.ts and table.ts this is data both sides read, so it
 * imports types only.
 */
import type { Settings } from './settings.js';
import type { Binding } from './wiring.js';

const DAY_SECONDS = 86_400;

export interface QueueDeclaration {
  /**
   * Its name in the table. The local stack names the queue `pdf-service-<name>` and its
   * dead-letter queue `pdf-service-<name>-dlq` (names its journal keeps across restarts).
   */
  readonly name: string;
  readonly description: string;
  /** A FIFO queue (ordered per message group, deduplicated) rather than a standard one. */
  readonly fifo: boolean;
  /**
   * The binding (wiring.ts) whose variable carries the queue's URL to the functions that send to
   * it or hold its messages back. @default none: only its consumer's event source reads it
   */
  readonly binding?: Binding;
  /**
   * The cloud's visibility timeout, given the settings and the timeout of the queue's consumer
   * (consumers.ts): how long a received message stays hidden before it is delivered again.
   */
  readonly visibilityTimeoutSeconds: (settings: Settings, consumerTimeoutSeconds: number) => number;
  /**
   * The local SQS server's visibility timeout. It runs no Lambda that a slow batch could
   * outlive on another instance, so it needs none of the cloud's margin: past the longest
   * time one message can take.
   */
  readonly localVisibilityTimeoutSeconds: (settings: Settings, consumerTimeoutSeconds: number) => number;
  /** Receives after which a message moves to the dead-letter queue (the redrive policy). */
  readonly maxReceiveCount: (settings: Settings) => number;
  /** How long a message waits in the queue at most. */
  readonly retentionSeconds: number;
  /** How long the dead-letter queue keeps a message for an operator. */
  readonly deadLetterRetentionSeconds: number;
  /**
   * The local stack returns the messages its last run had received (and died with) when it
   * starts, instead of leaving them hidden for a visibility timeout sized for the longest work.
   * @default false
   */
  readonly localReturnsInFlightAtStart?: boolean;
  /**
   * What the queue's alarms say and when they fire: every queue has the dead-letter and the
   * oldest-message alarms, the depth alarm only where declared. @default generic words, an hour's age
   */
  readonly alarms?: QueueAlarms;
}

export interface QueueAlarms {
  /** Messages waiting past which the depth alarm fires (for 15 minutes). */
  readonly depth?: { readonly threshold: number; readonly description: string };
  /** The oldest message's age past which the age alarm fires. @default an hour (lib/service-queue.ts) */
  readonly oldestAge?: { readonly thresholdSeconds: number; readonly description: string };
  /** What the dead-letter alarm says: a message no consumer could process is there. */
  readonly deadLetterDescription: string;
}

/** AWS's guidance for a Lambda consumer: at least six times its timeout, so a slow batch is not received twice. */
const sixConsumerTimeouts = (_settings: Settings, consumerTimeoutSeconds: number): number =>
  6 * consumerTimeoutSeconds;

/** Receives of a webhook message the sender failed on itself (the table, the queue) before it is dead-lettered. */
const WEBHOOK_MAX_RECEIVES = 5;

export const renderQueue = {
  name: 'render',
  description: "Async renders' messages (functions/domain/renders/async-renders.ts), one per job",
  fifo: false,
  binding: 'renderQueue',
  visibilityTimeoutSeconds: sixConsumerTimeouts,
  // Past the longest async render: the consumer's timeout is the async budget and its own work.
  localVisibilityTimeoutSeconds: (_settings, consumerTimeoutSeconds) => consumerTimeoutSeconds,
  // A message no consumer could process this many times has had the attempts an async render gets.
  maxReceiveCount: (settings) => settings.asyncMaxAttempts,
  // Longer than a job waits in it (ASYNC_QUEUE_LEASE_SECONDS, after which the sweeper sends again).
  retentionSeconds: 4 * DAY_SECONDS,
  deadLetterRetentionSeconds: 14 * DAY_SECONDS,
  localReturnsInFlightAtStart: true,
  alarms: {
    depth: {
      // A batch of 1,000 is normal; more for 15 minutes is not.
      threshold: 1000,
      description:
        'Async renders are queued faster than the consumers take them: raise asyncRenders.concurrency, or a batch is larger than expected',
    },
    oldestAge: {
      // An async render should start well within it.
      thresholdSeconds: 30 * 60,
      description:
        'An async render has waited in the render queue too long: the consumer is failing, throttled or too few',
    },
    deadLetterDescription:
      "A render queue message could not be processed (moved to the DLQ after its receives); its job is ended by the sweeper. Read the consumer's logs, then purge the DLQ",
  },
} as const satisfies QueueDeclaration;

export const webhookQueue = {
  name: 'webhooks',
  description:
    "Webhook attempts (functions/domain/webhooks/webhook-sender.ts): events, and each retry sent with its backoff's delay",
  fifo: false,
  binding: 'webhookQueue',
  visibilityTimeoutSeconds: sixConsumerTimeouts,
  // Past one attempt: its timeout and a few table calls.
  localVisibilityTimeoutSeconds: (settings) => Math.ceil(settings.webhookTimeoutMs / 1000) + 20,
  // Retries with backoff are the sender's own: the redrive catches only the sender's own faults.
  maxReceiveCount: () => WEBHOOK_MAX_RECEIVES,
  retentionSeconds: 4 * DAY_SECONDS,
  deadLetterRetentionSeconds: 14 * DAY_SECONDS,
  alarms: {
    deadLetterDescription: `Webhook messages the sender could not process ${WEBHOOK_MAX_RECEIVES} times are in the dead-letter queue`,
  },
} as const satisfies QueueDeclaration;

/** Receives of a batch output message whose build failed on our side before it is dead-lettered. */
const BATCH_OUTPUT_MAX_RECEIVES = 3;

export const batchOutputQueue = {
  name: 'batch-outputs',
  description:
    'Completed batches whose merged PDF or ZIP is to be built (functions/domain/batches/batch-outputs.ts), one message per batch',
  fifo: false,
  binding: 'batchOutputQueue',
  visibilityTimeoutSeconds: sixConsumerTimeouts,
  localVisibilityTimeoutSeconds: (_settings, consumerTimeoutSeconds) => consumerTimeoutSeconds,
  maxReceiveCount: () => BATCH_OUTPUT_MAX_RECEIVES,
  retentionSeconds: 4 * DAY_SECONDS,
  deadLetterRetentionSeconds: 14 * DAY_SECONDS,
  alarms: {
    deadLetterDescription: `A batch's outputs could not be built ${BATCH_OUTPUT_MAX_RECEIVES} times: the batch stays without them (its outputs status says failed once recorded). Read the batch-outputs consumer's logs`,
  },
} as const satisfies QueueDeclaration;

/** Receives of a delivery message the deliverer failed on itself (the table, the bucket) before it is dead-lettered. */
const DELIVERY_MAX_RECEIVES = 5;

export const deliveryQueue = {
  name: 'deliveries',
  description:
    "Deliveries of completed jobs' PDFs into their destinations (functions/domain/destinations/deliveries.ts): one attempt a message, each retry sent with its backoff's delay",
  fifo: false,
  binding: 'deliveryQueue',
  visibilityTimeoutSeconds: sixConsumerTimeouts,
  localVisibilityTimeoutSeconds: (_settings, consumerTimeoutSeconds) => consumerTimeoutSeconds,
  // Failed puts are retried by the deliverer on the webhook schedule: the redrive catches only its own faults.
  maxReceiveCount: () => DELIVERY_MAX_RECEIVES,
  retentionSeconds: 4 * DAY_SECONDS,
  deadLetterRetentionSeconds: 14 * DAY_SECONDS,
  alarms: {
    deadLetterDescription: `Delivery messages the deliverer could not process ${DELIVERY_MAX_RECEIVES} times are in the dead-letter queue: those jobs' delivery stays pending. Read the deliveries consumer's logs`,
  },
} as const satisfies QueueDeclaration;

/** Every queue of the service. */
export const queues: readonly QueueDeclaration[] = [
  renderQueue,
  webhookQueue,
  batchOutputQueue,
  deliveryQueue,
];

/** The local SQS server's name of a queue and of its dead-letter queue (kept in DATA_DIR's journal). */
export const localQueueName = (queue: Pick<QueueDeclaration, 'name'>): string => `pdf-service-${queue.name}`;
export const localDeadLetterQueueName = (queue: Pick<QueueDeclaration, 'name'>): string =>
  `${localQueueName(queue)}-dlq`;
