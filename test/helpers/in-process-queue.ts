/**
 * A queue inside the local stack's process with the SQS semantics the webhook sender relies on:
 * DelaySeconds, at-least-once delivery to a consumer of Lambda's SQS shape (SQSEvent →
 * SQSBatchResponse), a record named in batchItemFailures (or a consumer that throws) coming back
 * after the visibility timeout, and a dead letter after maxReceiveCount receives. Messages live in
 * memory, so the local stack does not use it (its webhook queue is on the local SQS server, whose
 * journal survives a kill): tests use it to feed a sender of their own without a server.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { MessageQueue } from '../../functions/domain/ports.js';

export type QueueConsumer = (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;

export interface InProcessQueueOptions {
  readonly name: string;
  /** @default 30 */
  readonly visibilityTimeoutSeconds?: number;
  /** @default 5 */
  readonly maxReceiveCount?: number;
  /** A message received maxReceiveCount times without being consumed. */
  readonly onDeadLetter?: (body: string) => void;
}

export interface InProcessQueue<T> extends MessageQueue<T> {
  /** Who receives the messages; those sent before are held until then. */
  consumeWith(consumer: QueueConsumer): void;
  /** Stops delivering; waits for deliveries under way. */
  close(): Promise<void>;
}

export const createInProcessQueue = <T>(options: InProcessQueueOptions): InProcessQueue<T> => {
  const visibilityMs = (options.visibilityTimeoutSeconds ?? 30) * 1000;
  const maxReceiveCount = options.maxReceiveCount ?? 5;
  const timers = new Set<NodeJS.Timeout>();
  const running = new Set<Promise<void>>();
  const held: (() => void)[] = [];
  let consumer: QueueConsumer | undefined;
  let closed = false;

  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (closed) return;
      if (consumer) run();
      else held.push(run);
    }, ms);
    timer.unref();
    timers.add(timer);
  };

  const deliver = (body: string, sentAt: number, receives: number, messageId: string) => {
    const record: SQSRecord = {
      messageId,
      receiptHandle: randomUUID(),
      body,
      attributes: {
        ApproximateReceiveCount: String(receives),
        SentTimestamp: String(sentAt),
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: createHash('md5').update(body).digest('hex'),
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:local:000000000000:${options.name}`,
      awsRegion: 'local',
    };
    const run = (async () => {
      let failed: boolean;
      try {
        const answer = await (consumer as QueueConsumer)({ Records: [record] });
        failed = (answer?.batchItemFailures ?? []).some((f) => f.itemIdentifier === messageId);
      } catch {
        failed = true;
      }
      if (!failed) return;
      if (receives >= maxReceiveCount) options.onDeadLetter?.(body);
      else later(visibilityMs, () => deliver(body, sentAt, receives + 1, messageId));
    })();
    running.add(run);
    void run.finally(() => running.delete(run));
  };

  const send = async (body: T, sendOptions: { delaySeconds?: number } = {}) => {
    if (closed) throw new Error(`the queue ${options.name} is closed`);
    const text = JSON.stringify(body);
    const sentAt = Date.now();
    later(Math.min(900, sendOptions.delaySeconds ?? 0) * 1000, () => deliver(text, sentAt, 1, randomUUID()));
  };

  return {
    send,
    async sendMany(bodies, sendOptions) {
      for (const body of bodies) await send(body, sendOptions);
    },
    consumeWith(c) {
      consumer = c;
      for (const run of held.splice(0)) run();
    },
    async close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.all([...running]);
    },
  };
};
