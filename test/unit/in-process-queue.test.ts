/**
 * The local stack's interim webhook queue keeps the SQS semantics the sender relies on: a message
 * waits its DelaySeconds, a record named in batchItemFailures (or a consumer that throws) comes
 * back after the visibility timeout with its receive count up, and after maxReceiveCount receives
 * it is dead-lettered instead. Time is compared with a control measured in the same run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createInProcessQueue, type InProcessQueue } from '../helpers/in-process-queue.js';

let queue: InProcessQueue<{ n: number }> | undefined;
afterEach(async () => {
  await queue?.close();
});

const received = () => {
  const log: { n: number; receives: number; at: number }[] = [];
  return {
    log,
    record: (body: string, receives: string) =>
      log.push({ ...JSON.parse(body), receives: Number(receives), at: Date.now() }),
  };
};

describe('the in-process queue', () => {
  it('delivers after DelaySeconds, and holds messages until a consumer is given', async () => {
    const { log, record } = received();
    queue = createInProcessQueue({ name: 'q' });
    const sentAt = Date.now();
    await queue.send({ n: 1 });
    await queue.send({ n: 2 }, { delaySeconds: 1 });
    await new Promise((r) => setTimeout(r, 50));
    queue.consumeWith(async (event) => {
      for (const r of event.Records) record(r.body, r.attributes.ApproximateReceiveCount);
      return { batchItemFailures: [] };
    });
    // Both arrive: the delayed one about a second later (waited for, not slept: a busy machine).
    for (const until = Date.now() + 10_000; log.length < 2 && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(log.map((m) => m.n)).toEqual([1, 2]);
    const control = (log[0]?.at ?? 0) - sentAt; // no delay: as soon as the consumer came
    expect((log[1]?.at ?? 0) - sentAt - control).toBeGreaterThanOrEqual(900);
  });

  it('redelivers a failed record after the visibility timeout, then dead-letters it', async () => {
    const { log, record } = received();
    const dead: string[] = [];
    queue = createInProcessQueue({
      name: 'q',
      visibilityTimeoutSeconds: 0.2,
      maxReceiveCount: 3,
      onDeadLetter: (body) => dead.push(body),
    });
    queue.consumeWith(async (event) => {
      const [r] = event.Records;
      record(r?.body as string, r?.attributes.ApproximateReceiveCount as string);
      if (Number(r?.attributes.ApproximateReceiveCount) === 2) throw new Error('a fault of the consumer');
      return { batchItemFailures: [{ itemIdentifier: r?.messageId as string }] };
    });
    await queue.send({ n: 7 });
    await new Promise((r) => setTimeout(r, 1000));
    expect(log.map((m) => m.receives)).toEqual([1, 2, 3]);
    expect((log[1]?.at ?? 0) - (log[0]?.at ?? 0)).toBeGreaterThanOrEqual(180);
    expect(dead).toEqual([JSON.stringify({ n: 7 })]);
  });

  it('sends nothing once closed', async () => {
    queue = createInProcessQueue({ name: 'q' });
    await queue.close();
    await expect(queue.send({ n: 1 })).rejects.toThrow(/closed/);
  });
});
