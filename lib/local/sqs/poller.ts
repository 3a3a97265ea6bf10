/**
 * The local event source mapping: what Lambda does between an SQS queue and its consumer. It
 * receives (long polling), hands the consumer an `SQSEvent`, and deletes the messages the
 * answer's `batchItemFailures` does not name (ReportBatchItemFailures); a consumer that throws
 * deletes nothing, so every message of the batch comes back after its visibility timeout. The
 * consumer is the same handler the cloud's Lambda runs.
 */
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

export type SqsConsumer = (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;

export interface PollerOptions {
  readonly client: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly region: string;
  readonly consumer: SqsConsumer;
  /** Messages per event (the mapping's BatchSize). @default 1 */
  readonly batchSize?: number;
  /** Consumers running at once (the mapping's maximum concurrency). @default 1 */
  readonly concurrency?: number;
  /** Told about a receive or delete that failed, or a consumer that threw. */
  readonly onError?: (message: string, error: unknown) => void;
}

export interface Poller {
  /**
   * Stops receiving; waits up to `drainMs` for consumers under way (a message whose consumer is
   * cut off comes back after its visibility timeout, as after a Lambda timeout).
   */
  stop(drainMs?: number): Promise<void>;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** A received message as Lambda's event source mapping hands it over. */
export const sqsRecord = (m: Message, o: Pick<PollerOptions, 'queueArn' | 'region'>): SQSRecord => ({
  messageId: m.MessageId ?? '',
  receiptHandle: m.ReceiptHandle ?? '',
  body: m.Body ?? '',
  attributes: {
    ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
    SentTimestamp: m.Attributes?.SentTimestamp ?? '',
    SenderId: 'local',
    ApproximateFirstReceiveTimestamp: m.Attributes?.ApproximateFirstReceiveTimestamp ?? '',
    ...(m.Attributes?.MessageGroupId ? { MessageGroupId: m.Attributes.MessageGroupId } : {}),
  },
  messageAttributes: {},
  md5OfBody: m.MD5OfBody ?? '',
  eventSource: 'aws:sqs',
  eventSourceARN: o.queueArn,
  awsRegion: o.region,
});

export const startPoller = (o: PollerOptions): Poller => {
  const stopping = new AbortController();
  const onError = o.onError ?? ((message, e) => console.error(`local event source mapping: ${message}:`, e));
  const batchSize = o.batchSize ?? 1;
  const running = new Set<Promise<unknown>>();

  /** Deletes what the consumer processed; the loop receives again meanwhile (as the mapping does). */
  const remove = async (done: Message[]): Promise<void> => {
    try {
      await o.client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: o.queueUrl,
          Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
        }),
      );
    } catch (e) {
      onError('deleting processed messages failed (they will be delivered again)', e);
    }
  };

  const deliver = async (messages: Message[]): Promise<void> => {
    const event: SQSEvent = { Records: messages.map((m) => sqsRecord(m, o)) };
    let failed: Set<string>;
    try {
      const answer = await o.consumer(event);
      failed = new Set((answer?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (e) {
      onError('the consumer threw (the batch comes back after its visibility timeout)', e);
      return;
    }
    const done = messages.filter((m) => !failed.has(m.MessageId ?? ''));
    if (done.length === 0) return;
    const removal = remove(done);
    running.add(removal);
    void removal.finally(() => running.delete(removal));
  };

  const loop = async (): Promise<void> => {
    while (!stopping.signal.aborted) {
      let messages: Message[];
      try {
        const out = await o.client.send(
          new ReceiveMessageCommand({
            QueueUrl: o.queueUrl,
            MaxNumberOfMessages: batchSize,
            WaitTimeSeconds: 20,
            MessageSystemAttributeNames: ['All'],
          }),
          { abortSignal: stopping.signal },
        );
        messages = out.Messages ?? [];
      } catch (e) {
        if (stopping.signal.aborted) return;
        onError('receiving failed', e);
        await sleep(1000, stopping.signal);
        continue;
      }
      if (messages.length === 0) continue;
      const delivery = deliver(messages);
      running.add(delivery);
      await delivery.finally(() => running.delete(delivery));
    }
  };

  const loops = Array.from({ length: o.concurrency ?? 1 }, () => loop());
  return {
    async stop(drainMs = 10_000) {
      stopping.abort();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        // The consumers under way, then the deletes they left behind.
        Promise.allSettled(loops).then(() => Promise.allSettled([...running])),
        new Promise((resolve) => {
          timer = setTimeout(resolve, drainMs);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
    },
  };
};
