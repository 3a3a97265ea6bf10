/**
 * A MessageQueue (domain/ports.ts) in memory, with the SQS semantics the service relies on and
 * Lambda's event source mapping in front of its consumer, as lib/local/sqs serves them:
 *
 * - at-least-once: a message received by a consumer comes back once its visibility timeout runs
 *   out unless the consumer's answer leaves it out of `batchItemFailures` (a consumer that throws
 *   fails its whole batch);
 * - DelaySeconds per message (an integer from 0 to 900, as SQS takes it);
 * - redrive: a message about to be received for the (maxReceiveCount + 1)th time moves to the
 *   dead-letter queue instead;
 * - fair delivery across groups (`groupId`): the group served least recently goes first;
 * - bodies of at most 256 KiB.
 *
 * The contract suite (test/contract/queue.contract.ts) holds it and the local SQS server to the
 * same cases. `timeScale` runs its clock faster for tests (0.1: a second lasts 100 ms); the
 * seconds it takes are checked as SQS checks them.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Clock, MessageQueue, SendOptions } from '../../domain/common/ports.js';

export type MemoryQueueConsumer = (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;

export interface MemoryQueueOptions {
  readonly name: string;
  /** Seconds a received message stays invisible. @default 30 */
  readonly visibilityTimeoutSeconds?: number;
  /**
   * Receives before a message moves to `deadLetter` (SQS's RedrivePolicy). @default no redrive:
   * a message comes back until it is consumed.
   */
  readonly maxReceiveCount?: number;
  /** Where redriven messages go: a queue, or a function told their body. */
  readonly deadLetter?: MemoryQueue<unknown> | ((body: string) => void);
  /** Real milliseconds per queue millisecond. @default 1 */
  readonly timeScale?: number;
  /**
   * The queue's time instead of the real one, for a use-case test that moves a test clock: delays
   * and visibility are judged by it when messages are taken (`drain`, or a send or a consumer's
   * answer waking the consumer), so such a test plays the consumer with `drain`.
   */
  readonly clock?: Clock;
}

export interface ConsumeOptions {
  /** Messages per event (the mapping's BatchSize). @default 1 */
  readonly batchSize?: number;
  /** Consumers running at once (the mapping's maximum concurrency). @default 1 */
  readonly concurrency?: number;
  /** Told about a consumer that threw (its batch comes back after the visibility timeout). */
  readonly onError?: (error: unknown) => void;
}

/** A message as a test looks at it: its body parsed, how often it was received, its group. */
export interface QueuedMessage<T> {
  readonly body: T;
  readonly receiveCount: number;
  readonly groupId?: string;
  /** When it can next be received, in the queue's time (epoch ms). */
  readonly visibleAt: number;
}

export interface MemoryQueue<T> extends MessageQueue<T> {
  readonly name: string;
  /** Who receives the messages (Lambda's SQS shape); those sent before wait until then. */
  consumeWith(consumer: MemoryQueueConsumer, options?: ConsumeOptions): void;
  /** Messages not yet consumed (waiting, delayed or in flight), oldest first. */
  messages(): QueuedMessage<T>[];
  /**
   * Receives and deletes what is visible now, for a test that plays the consumer itself: the
   * bodies, oldest first (fairly across groups).
   */
  drain(): T[];
  /** Stops delivering and waits for consumers under way; a later send is refused. */
  close(): Promise<void>;
}

/** Limits as SQS has them. */
const MAX_DELAY_SECONDS = 900;
const MAX_BODY_BYTES = 262_144;

interface Stored {
  readonly id: string;
  readonly body: string;
  readonly groupId: string | undefined;
  readonly sentAt: number;
  visibleAt: number;
  receiveCount: number;
  firstReceivedAt?: number;
  receipt?: string;
}

export const createMemoryQueue = <T>(options: MemoryQueueOptions): MemoryQueue<T> => {
  const scale = options.timeScale ?? 1;
  const visibilityMs = (options.visibilityTimeoutSeconds ?? 30) * 1000;
  const stored = new Map<string, Stored>();
  const served = new Map<string, number>();
  const running = new Set<Promise<void>>();
  let serveCounter = 0;
  let timer: NodeJS.Timeout | undefined;
  let consumer: { run: MemoryQueueConsumer; options: ConsumeOptions } | undefined;
  let inFlight = 0;
  let closed = false;
  // Queue time: real time since the queue's start, stretched by 1 / timeScale.
  const start = Date.now();
  const now = () => options.clock?.now().getTime() ?? start + (Date.now() - start) / scale;

  const redrive = (m: Stored): void => {
    stored.delete(m.id);
    const target = options.deadLetter;
    if (typeof target === 'function') target(m.body);
    else target?.send(JSON.parse(m.body));
  };

  /** What can be received now, fairly across groups; marks them received. */
  const take = (max: number): Stored[] => {
    const at = now();
    const byGroup = new Map<string, Stored[]>();
    for (const m of [...stored.values()]) {
      if (m.visibleAt > at) continue;
      if (options.maxReceiveCount !== undefined && m.receiveCount >= options.maxReceiveCount) {
        redrive(m);
        continue;
      }
      const group = m.groupId ?? '';
      byGroup.set(group, [...(byGroup.get(group) ?? []), m]);
    }
    const groups = [...byGroup.keys()].sort((a, b) => (served.get(a) ?? -1) - (served.get(b) ?? -1));
    const picked: Stored[] = [];
    for (let round = 0; picked.length < max; round++) {
      let any = false;
      for (const group of groups) {
        const m = byGroup.get(group)?.[round];
        if (!m || picked.length >= max) continue;
        any = true;
        picked.push(m);
        served.set(group, ++serveCounter);
      }
      if (!any) break;
    }
    for (const m of picked) {
      m.receiveCount++;
      m.firstReceivedAt ??= at;
      m.visibleAt = at + visibilityMs;
      m.receipt = randomUUID();
    }
    return picked;
  };

  const record = (m: Stored): SQSRecord => ({
    messageId: m.id,
    receiptHandle: m.receipt ?? '',
    body: m.body,
    attributes: {
      ApproximateReceiveCount: String(m.receiveCount),
      SentTimestamp: String(Math.round(m.sentAt)),
      SenderId: 'memory',
      ApproximateFirstReceiveTimestamp: String(Math.round(m.firstReceivedAt ?? m.sentAt)),
      ...(m.groupId !== undefined ? { MessageGroupId: m.groupId } : {}),
    },
    messageAttributes: {},
    md5OfBody: createHash('md5').update(m.body).digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:memory:000000000000:${options.name}`,
    awsRegion: 'memory',
  });

  const deliver = async (batch: Stored[], c: NonNullable<typeof consumer>): Promise<void> => {
    let failed: Set<string>;
    try {
      const answer = await c.run({ Records: batch.map(record) });
      failed = new Set((answer?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (e) {
      c.options.onError?.(e);
      return;
    }
    for (const m of batch) {
      // Deleted by its receipt only: a message that came back meanwhile is another receive's.
      if (!failed.has(m.id) && stored.get(m.id)?.receipt === m.receipt) stored.delete(m.id);
    }
  };

  /** Hands what is visible to the consumer, up to its concurrency; wakes again when more is due. */
  const pump = (): void => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (closed || !consumer) return;
    const c = consumer;
    while (inFlight < (c.options.concurrency ?? 1)) {
      const batch = take(c.options.batchSize ?? 1);
      if (batch.length === 0) break;
      inFlight++;
      const run = deliver(batch, c).finally(() => {
        inFlight--;
        running.delete(run);
        pump();
      });
      running.add(run);
    }
    let next: number | undefined;
    const at = now();
    for (const m of stored.values()) {
      if (m.visibleAt > at && (next === undefined || m.visibleAt < next)) next = m.visibleAt;
    }
    if (next !== undefined && !options.clock) {
      timer = setTimeout(pump, Math.max(1, (next - at) * scale));
      timer.unref();
    }
  };

  const send = async (body: T, sendOptions: SendOptions = {}): Promise<void> => {
    if (closed) throw new Error(`the queue ${options.name} is closed`);
    const text = JSON.stringify(body);
    if (Buffer.byteLength(text, 'utf8') > MAX_BODY_BYTES) {
      throw new Error(`InvalidParameterValue: MessageBody must be at most ${MAX_BODY_BYTES} bytes`);
    }
    const delay = sendOptions.delaySeconds ?? 0;
    if (!Number.isInteger(delay) || delay < 0 || delay > MAX_DELAY_SECONDS) {
      throw new Error(
        `InvalidParameterValue: DelaySeconds must be an integer from 0 to ${MAX_DELAY_SECONDS}`,
      );
    }
    const at = now();
    const id = randomUUID();
    stored.set(id, {
      id,
      body: text,
      groupId: sendOptions.groupId,
      sentAt: at,
      visibleAt: at + delay * 1000,
      receiveCount: 0,
    });
    // After the sender's turn, as a receive would see it.
    queueMicrotask(pump);
  };

  return {
    name: options.name,
    send,
    async sendMany(bodies, sendOptions) {
      for (const body of bodies) await send(body, sendOptions);
    },
    consumeWith(run, consumeOptions = {}) {
      consumer = { run, options: consumeOptions };
      pump();
    },
    messages() {
      return [...stored.values()].map((m) => ({
        body: JSON.parse(m.body) as T,
        receiveCount: m.receiveCount,
        visibleAt: m.visibleAt,
        ...(m.groupId !== undefined ? { groupId: m.groupId } : {}),
      }));
    },
    drain() {
      const out: T[] = [];
      for (let batch = take(10); batch.length > 0; batch = take(10)) {
        for (const m of batch) {
          stored.delete(m.id);
          out.push(JSON.parse(m.body) as T);
        }
      }
      return out;
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await Promise.allSettled([...running]);
    },
  };
};
