/** The queue contract (test/contract/queue.contract.ts) on the memory queue, ten times faster than SQS's seconds. */
import { createMemoryQueue, type MemoryQueue } from '../../../functions/adapters/memory/queue.js';
import { queueContract } from '../../contract/queue.contract.js';

const TIME_SCALE = 0.1;

queueContract({
  name: 'memory',
  secondMs: 1000 * TIME_SCALE,
  async create(settings) {
    const dlq: MemoryQueue<unknown> = createMemoryQueue({ name: 'contract-dlq', timeScale: TIME_SCALE });
    const queue = createMemoryQueue<never>({
      name: 'contract',
      timeScale: TIME_SCALE,
      visibilityTimeoutSeconds: settings.visibilityTimeoutSeconds,
      ...(settings.maxReceiveCount !== undefined
        ? { maxReceiveCount: settings.maxReceiveCount, deadLetter: dlq }
        : {}),
    });
    return {
      queue,
      consume: (consumer, batchSize) => queue.consumeWith(consumer, { batchSize: batchSize ?? 1 }),
      deadLetters: async () => dlq.drain(),
      close: async () => {
        await queue.close();
        await dlq.close();
      },
    };
  },
});
