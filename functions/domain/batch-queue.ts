/**
 * A batch's jobs into the render queue, as an async render's job goes (async-renders.ts `submit`):
 * its order stored, the job held in the queue (pending, its unit held, the queue's long lease),
 * then its message sent, ten to an SQS request. Each message carries the account as its group:
 * the queue delivers fairly across groups, so one account's thousand items do not hold back
 * another account's render.
 */
import { INTEGER_SETTINGS } from '../settings.js';
import { type RenderMessage, type RenderOrders, renderMessage, storedOrder } from './async-renders.js';
import type { BatchQueue } from './batches.js';
import type { JobStore } from './jobs.js';
import type { Clock, MessageQueue } from './ports.js';
import type { AcceptedRender } from './render-order.js';

export interface BatchQueueDeps {
  readonly jobs: JobStore;
  readonly orders: RenderOrders;
  readonly queue: MessageQueue<RenderMessage>;
  readonly clock: Clock;
  readonly limits: { readonly asyncQueueLeaseSeconds?: number };
}

/** Orders stored and jobs held this many at once, then their messages sent (SQS batches of ten). */
const WIDTH = 10;

export const createBatchQueue = ({ jobs, orders, queue, clock, limits }: BatchQueueDeps): BatchQueue => {
  const queueLeaseMs =
    (limits.asyncQueueLeaseSeconds ?? INTEGER_SETTINGS.asyncQueueLeaseSeconds.default) * 1000;
  return {
    async enqueue(accepted: readonly AcceptedRender[]): Promise<void> {
      const groupId = accepted[0]?.job.account_id;
      const options = groupId ? { groupId } : {};
      // Chunk by chunk, so that the consumers start on the first items while the rest are queued.
      for (let i = 0; i < accepted.length; i += WIDTH) {
        const chunk = accepted.slice(i, i + WIDTH);
        await Promise.all(
          chunk.map(async (a) => {
            await orders.put(a.job.account_id, a.job.id, storedOrder(a));
            await jobs.hold(a.job, clock.now().getTime() + queueLeaseMs);
          }),
        );
        const messages = chunk.map((a) => renderMessage(a.job));
        if (queue.sendMany) await queue.sendMany(messages, options);
        else for (const m of messages) await queue.send(m, options);
      }
    },
  };
};
