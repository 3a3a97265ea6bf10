/**
 * Async renders' and batches' orders (domain/async-renders.ts RenderOrders, domain/batch-queue.ts
 * BatchOrders) in memory, as the S3 adapters keep them: written whole, read back as a copy (JSON,
 * as S3 stores them), absent once deleted, and a delete of an absent order is no error. The
 * orders contract (test/contract/orders.contract.ts) runs the same cases against both on s3rver.
 */

import type { BatchOrder, BatchOrders } from '../../domain/batches/batch-queue.js';
import type { AnyStoredOrder, RenderOrders } from '../../domain/renders/async-renders.js';
import type { KeptOrder } from '../../domain/renders/kept-orders.js';

const jsonStore = <T>() => {
  const objects = new Map<string, string>();
  const key = (accountId: string, id: string) => JSON.stringify([accountId, id]);
  return {
    async put(accountId: string, id: string, order: T) {
      objects.set(key(accountId, id), JSON.stringify(order));
    },
    async get(accountId: string, id: string): Promise<T | undefined> {
      const text = objects.get(key(accountId, id));
      return text === undefined ? undefined : (JSON.parse(text) as T);
    },
    async delete(accountId: string, id: string) {
      objects.delete(key(accountId, id));
    },
    /** How many orders are kept: what a test checks was cleaned up. */
    size: () => objects.size,
  };
};

export type MemoryRenderOrders = RenderOrders & { size(): number; keptSize(): number };
export type MemoryBatchOrders = BatchOrders & { size(): number };

/** Pending orders and kept ones (kept-orders.ts) apart, as the bucket keeps them under two prefixes. */
export const createMemoryRenderOrders = (): MemoryRenderOrders => {
  const pending = jsonStore<AnyStoredOrder>();
  const kept = jsonStore<KeptOrder>();
  return {
    ...pending,
    keep: kept.put,
    kept: kept.get,
    discardKept: kept.delete,
    keptSize: kept.size,
  };
};
export const createMemoryBatchOrders = (): MemoryBatchOrders => jsonStore<BatchOrder>();
