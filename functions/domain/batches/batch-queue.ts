/**
 * A batch's jobs into the render queue. The batch has one order (S3
 * `orders/{account}/batches/{batch}.json`: the template once, the options, each item's variables
 * as text), not one per job: one write at acceptance instead of a thousand, and the consumer reads
 * it once per batch (BatchOrderReader) instead of once per job. Each job carries its item's index
 * (`batch_item`). The consumer whose count completes the batch deletes it (the API may only put
 * orders: a lifecycle rule on `orders/` removes any other).
 *
 * Once the batch is accepted its jobs' messages are sent, ten to an SQS request, several chunks at
 * once (the consumer holds each job as it receives it). Each message carries the account
 * as its group: the queue delivers fairly across groups, so one account's thousand items do not
 * hold back another account's render.
 */

import type { MessageQueue, RenderRequest } from '../common/ports.js';
import type { Job } from '../jobs/jobs.js';
import { type RenderMessage, renderMessage, type StoredOrder } from '../renders/async-renders.js';
import type { RenderOptions } from '../renders/render-options.js';
import type { TemplateField } from '../templates/template-check.js';

/** One item of a batch's order: its variables as text, and its options when its metadata differs. */
export interface BatchOrderItem {
  readonly variables: string;
  readonly options?: RenderOptions;
}

export interface BatchOrder {
  readonly v: 1;
  readonly field: TemplateField;
  readonly template: Omit<RenderRequest['template'], 'variables'>;
  readonly options: RenderOptions;
  readonly offline: boolean;
  /** By item index; null: an item that is an earlier job again (its key replayed), rendered elsewhere. */
  readonly items: readonly (BatchOrderItem | null)[];
  /** A batch with outputs: each item's file name in its ZIP (null: the default), by item index. */
  readonly outputs?: { readonly file_names: readonly (string | null)[] };
}

/** Where batch orders wait (private, in the PDF bucket). */
export interface BatchOrders {
  put(accountId: string, batchId: string, order: BatchOrder): Promise<void>;
  /** Undefined: no such order (deleted, or never written). */
  get(accountId: string, batchId: string): Promise<BatchOrder | undefined>;
  delete(accountId: string, batchId: string): Promise<void>;
}

/** Object key (in the PDF bucket) of a batch's order: under `orders/{account}/`, as a render's. */
export const batchOrderObjectKey = (accountId: string, batchId: string): string =>
  `orders/${accountId}/batches/${batchId}.json`;

/** Item `index` of a batch's order as a render's own order would say it. */
export const itemOrder = (order: BatchOrder, index: number): StoredOrder | undefined => {
  const item = order.items[index];
  if (!item) return undefined;
  return {
    v: 1,
    field: order.field,
    template: { ...order.template, variables: item.variables },
    options: item.options ?? order.options,
    offline: order.offline,
  };
};

/**
 * A consumer's reads of batch orders: each batch's read once and kept (the last `keep` batches),
 * since its jobs come one after another.
 */
export const createBatchOrderReader = (orders: BatchOrders, keep = 2) => {
  const cache = new Map<string, Promise<BatchOrder | undefined>>();
  return {
    async item(accountId: string, batchId: string, index: number): Promise<StoredOrder | undefined> {
      const key = `${accountId}/${batchId}`;
      let read = cache.get(key);
      if (!read) {
        read = orders.get(accountId, batchId);
        cache.set(key, read);
        while (cache.size > keep) cache.delete(cache.keys().next().value as string);
      }
      let order: BatchOrder | undefined;
      try {
        order = await read;
      } catch (e) {
        cache.delete(key);
        throw e;
      }
      // A missing order is not kept: it may be a read that came before the write.
      if (!order) cache.delete(key);
      return order && itemOrder(order, index);
    },
  };
};

export type BatchOrderReader = ReturnType<typeof createBatchOrderReader>;

/** Where a batch's jobs go once the batch is accepted: the render queue. */
export interface BatchQueue {
  /** Sends each job's message; the batch's order and record are stored already. */
  enqueue(jobs: readonly Job[]): Promise<void>;
}

export interface BatchQueueDeps {
  readonly queue: MessageQueue<RenderMessage>;
}

/** Messages sent ten to an SQS request (sendMany), this many jobs at once. */
const CHUNK = 50;
const PARALLEL = 6;

/**
 * Only messages: a job is held in the queue (its unit `held`, the queue's lease) by the consumer
 * that receives it, or by the sweeper once its acceptance lease ran out (batches.ts), so that
 * nothing after the batch's acceptance is a write.
 */
export const createBatchQueue = ({ queue }: BatchQueueDeps): BatchQueue => {
  return {
    async enqueue(jobs: readonly Job[]): Promise<void> {
      const groupId = jobs[0]?.account_id;
      const options = groupId ? { groupId } : {};
      // Chunk by chunk: the consumers start on the first items while the rest are sent.
      let next = 0;
      const worker = async () => {
        while (next < jobs.length) {
          const messages = jobs.slice(next, next + CHUNK).map((j) => renderMessage(j));
          next += CHUNK;
          if (queue.sendMany) await queue.sendMany(messages, options);
          else for (const m of messages) await queue.send(m, options);
        }
      };
      await Promise.all(Array.from({ length: Math.min(PARALLEL, Math.ceil(jobs.length / CHUNK)) }, worker));
    },
  };
};
