/**
 * The MessageQueue port's contract (domain/ports.ts), with the consumer side as Lambda's event
 * source mapping gives it (SQSEvent in, SQSBatchResponse out): the same cases for the memory
 * queue (functions/adapters/memory/queue.ts) and for the SQS adapter on the local SQS server with
 * its poller (lib/local/sqs). A backend's `secondMs` is how long one of its seconds lasts: the
 * memory queue runs ten times faster; every time below is in the queue's seconds.
 *
 * Times are judged only from below (a message held back at least its delay, redelivered no
 * sooner than its visibility timeout): a busy machine makes them later, never earlier.
 */
import { createHash } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, it, type TestContext } from 'vitest';
import type { MessageQueue } from '../../functions/domain/common/ports.js';
import { sleep, waitUntil } from './wait.js';

export type Consumer = (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;

export interface QueueSettings {
  readonly visibilityTimeoutSeconds: number;
  /** Absent: no dead-letter queue. */
  readonly maxReceiveCount?: number;
}

export interface QueueUnderTest<T> {
  readonly queue: MessageQueue<T>;
  /** Starts delivering to `consumer` (the mapping's BatchSize; one consumer at a time). */
  consume(consumer: Consumer, batchSize?: number): void;
  /** Bodies moved to the dead-letter queue so far (parsed). */
  deadLetters(): Promise<unknown[]>;
  close(): Promise<void>;
}

export interface QueueBackend {
  readonly name: string;
  readonly secondMs: number;
  create<T>(settings: QueueSettings): Promise<QueueUnderTest<T>>;
}

interface Received {
  readonly record: SQSRecord;
  readonly body: { n: number; pad?: string };
  readonly receives: number;
  readonly at: number;
}

export const queueContract = (backend: QueueBackend): void => {
  // Each case has a queue of its own, closed when the case ends (through its own context: the cases
  // may run side by side).
  const create = async (settings: QueueSettings, onFinished: TestContext['onTestFinished']) => {
    const q = await backend.create<{ n: number; pad?: string }>(settings);
    onFinished(() => q.close());
    return q;
  };
  const s = backend.secondMs;

  /** A consumer that logs what it receives and fails what `fail` says to. */
  const logging = (fail: (r: Received) => 'ok' | 'fail' | 'throw' = () => 'ok') => {
    const log: Received[] = [];
    const consumer: Consumer = async (event) => {
      const failures: { itemIdentifier: string }[] = [];
      let thrown = false;
      for (const record of event.Records) {
        const r: Received = {
          record,
          body: JSON.parse(record.body),
          receives: Number(record.attributes.ApproximateReceiveCount),
          at: Date.now(),
        };
        log.push(r);
        const verdict = fail(r);
        if (verdict === 'fail') failures.push({ itemIdentifier: record.messageId });
        if (verdict === 'throw') thrown = true;
      }
      if (thrown) throw new Error('a fault of the consumer');
      return { batchItemFailures: failures };
    };
    return { log, consumer };
  };

  // One case after another: a redelivery is timed from when the consumer ran, and side by side a
  // consumer ran late enough to make a 1 s visibility timeout look like 0.4 s.
  describe(`the queue port on ${backend.name}`, () => {
    it("delivers every message once, its body as JSON in Lambda's SQS shape, also those sent many at a time", async ({
      expect,
      onTestFinished,
    }) => {
      const q = await create({ visibilityTimeoutSeconds: 1 }, onTestFinished);
      const { log, consumer } = logging();
      await q.queue.send({ n: 0 });
      await q.queue.sendMany?.(Array.from({ length: 23 }, (_, i) => ({ n: i + 1 })));
      q.consume(consumer, 10);
      await waitUntil('24 messages', () => log.length >= 24);
      // Past a visibility timeout: a consumed message never comes back.
      await sleep(1.5 * s);
      expect(log.map((r) => r.body.n).sort((a, b) => a - b)).toEqual(Array.from({ length: 24 }, (_, i) => i));
      const first = log.find((r) => r.body.n === 0)?.record;
      expect(first).toMatchObject({ eventSource: 'aws:sqs', body: '{"n":0}' });
      expect(first?.md5OfBody).toBe(createHash('md5').update('{"n":0}').digest('hex'));
      expect(log.every((r) => r.receives === 1)).toBe(true);
      expect(new Set(log.map((r) => r.record.messageId)).size).toBe(24);
    });

    it('holds a message back its DelaySeconds', async ({ expect, onTestFinished }) => {
      const q = await create({ visibilityTimeoutSeconds: 5 }, onTestFinished);
      const { log, consumer } = logging();
      q.consume(consumer);
      const sentAt = Date.now();
      await q.queue.send({ n: 2 }, { delaySeconds: 2 });
      await q.queue.send({ n: 0 });
      await waitUntil('both messages', () => log.length >= 2);
      expect(log.map((r) => r.body.n)).toEqual([0, 2]);
      expect((log[1]?.at ?? 0) - sentAt).toBeGreaterThanOrEqual(1.9 * s);
    });

    it('brings back a record named in batchItemFailures after the visibility timeout, its receive count up, and only that record', async ({
      expect,
      onTestFinished,
    }) => {
      const q = await create({ visibilityTimeoutSeconds: 1 }, onTestFinished);
      const { log, consumer } = logging((r) => (r.body.n === 1 && r.receives === 1 ? 'fail' : 'ok'));
      await q.queue.sendMany?.([{ n: 1 }, { n: 2 }]);
      q.consume(consumer, 10);
      await waitUntil('the failed record again', () => log.filter((r) => r.body.n === 1).length >= 2);
      await sleep(1.5 * s);
      const ones = log.filter((r) => r.body.n === 1);
      expect(ones.map((r) => r.receives)).toEqual([1, 2]);
      expect(ones[1]?.record.messageId).toBe(ones[0]?.record.messageId);
      expect((ones[1]?.at ?? 0) - (ones[0]?.at ?? 0)).toBeGreaterThanOrEqual(0.9 * s);
      expect(log.filter((r) => r.body.n === 2).map((r) => r.receives)).toEqual([1]);
    });

    it('brings back the whole batch of a consumer that throws', async ({ expect, onTestFinished }) => {
      const q = await create({ visibilityTimeoutSeconds: 1 }, onTestFinished);
      const { log, consumer } = logging((r) => (r.receives === 1 ? 'throw' : 'ok'));
      await q.queue.send({ n: 1 });
      q.consume(consumer);
      await waitUntil('the message again', () => log.length >= 2);
      await sleep(1.5 * s);
      expect(log.map((r) => r.receives)).toEqual([1, 2]);
    });

    it('moves a message received maxReceiveCount times to the dead-letter queue', async ({
      expect,
      onTestFinished,
    }) => {
      const q = await create({ visibilityTimeoutSeconds: 1, maxReceiveCount: 2 }, onTestFinished);
      const { log, consumer } = logging(() => 'fail');
      await q.queue.send({ n: 9 });
      q.consume(consumer);
      let dead: unknown[] = [];
      const deadline = Date.now() + 30_000;
      while (dead.length === 0 && Date.now() < deadline) {
        await sleep(s / 4);
        dead = await q.deadLetters();
      }
      expect(dead).toEqual([{ n: 9 }]);
      expect(log.map((r) => r.receives)).toEqual([1, 2]);
    });

    it("serves a group that waits ahead of another group's backlog", async ({ expect, onTestFinished }) => {
      const q = await create({ visibilityTimeoutSeconds: 5 }, onTestFinished);
      const { log, consumer } = logging();
      await q.queue.sendMany?.(
        Array.from({ length: 12 }, (_, i) => ({ n: i })),
        { groupId: 'busy' },
      );
      await q.queue.send({ n: 100 }, { groupId: 'quiet' });
      q.consume(consumer);
      await waitUntil('every message', () => log.length >= 13);
      expect(log.findIndex((r) => r.body.n === 100)).toBeLessThanOrEqual(1);
      expect(log.find((r) => r.body.n === 100)?.record.attributes.MessageGroupId).toBe('quiet');
    });

    it('refuses a body over 256 KiB and a delay over 900 s, as SQS does', async ({
      expect,
      onTestFinished,
    }) => {
      const q = await create({ visibilityTimeoutSeconds: 1 }, onTestFinished);
      await expect(q.queue.send({ n: 1, pad: 'x'.repeat(262_144) })).rejects.toThrow();
      await expect(q.queue.send({ n: 1 }, { delaySeconds: 901 })).rejects.toThrow();
      await expect(q.queue.send({ n: 1, pad: 'x'.repeat(200_000) })).resolves.toBeUndefined();
    });
  });
};
