/**
 * The passwords of a render's `protection` (protection.ts) at rest: an async render's stored order
 * and a batch's keep them sealed by a SecretBox (AES-256-GCM under a key derived from the
 * deployment's API-key secret, as webhook signing secrets are), bound to the order's account and
 * job (or batch). The wrapped store, S3 or memory, never holds one in clear. The box is asked
 * for only when an order has passwords: a function never given the secret handles every other.
 */
import type { BatchOrder, BatchOrders } from '../batches/batch-queue.js';
import type { SecretBox } from '../webhooks/webhooks.js';
import type { AnyStoredOrder, RenderOrders } from './async-renders.js';
import type { RenderOptions } from './render-options.js';

type Transform = (secret: string, context: string) => Promise<string>;

/** The options with their passwords sealed (or opened) by `transform`; the same object without any. */
const withPasswords = async (
  options: RenderOptions,
  transform: Transform,
  context: string,
): Promise<RenderOptions> => {
  const { protection } = options;
  if (!protection) return options;
  const [ownerPassword, userPassword] = await Promise.all([
    transform(protection.ownerPassword, context),
    protection.userPassword === null ? null : transform(protection.userPassword, context),
  ]);
  return { ...options, protection: { ...protection, ownerPassword, userPassword } };
};

const renderContext = (accountId: string, jobId: string) => `render-order:${accountId}:${jobId}`;
const batchContext = (accountId: string, batchId: string) => `batch-order:${accountId}:${batchId}`;

/** Render orders whose passwords are sealed at rest (what the wrapped store keeps). */
export const sealedRenderOrders = (orders: RenderOrders, box: () => SecretBox): RenderOrders => ({
  async put(accountId, jobId, order) {
    // An async merge's order holds no password (merge parts refuse protection: merge-order.ts).
    if (order.kind === 'merge') return orders.put(accountId, jobId, order);
    const context = renderContext(accountId, jobId);
    const options = await withPasswords(order.options, (s, c) => box().seal(s, c), context);
    await orders.put(accountId, jobId, { ...order, options });
  },
  async get(accountId, jobId): Promise<AnyStoredOrder | undefined> {
    const order = await orders.get(accountId, jobId);
    if (!order || order.kind === 'merge') return order;
    return {
      ...order,
      options: await withPasswords(
        order.options,
        (s, c) => box().open(s, c),
        renderContext(accountId, jobId),
      ),
    };
  },
  delete: (accountId, jobId) => orders.delete(accountId, jobId),
  // A kept order never holds a password (kept-orders.ts withholds a protected job's).
  keep: (accountId, jobId, order) => orders.keep(accountId, jobId, order),
  kept: (accountId, jobId) => orders.kept(accountId, jobId),
  discardKept: (accountId, jobId) => orders.discardKept(accountId, jobId),
});

const batchWith = async (order: BatchOrder, transform: Transform, context: string): Promise<BatchOrder> => ({
  ...order,
  options: await withPasswords(order.options, transform, context),
  items: await Promise.all(
    order.items.map(async (item) =>
      item?.options ? { ...item, options: await withPasswords(item.options, transform, context) } : item,
    ),
  ),
});

/** Batch orders whose passwords (the batch's, and any item's) are sealed at rest. */
export const sealedBatchOrders = (orders: BatchOrders, box: () => SecretBox): BatchOrders => ({
  async put(accountId, batchId, order) {
    await orders.put(
      accountId,
      batchId,
      await batchWith(order, (s, c) => box().seal(s, c), batchContext(accountId, batchId)),
    );
  },
  async get(accountId, batchId) {
    const order = await orders.get(accountId, batchId);
    return order && batchWith(order, (s, c) => box().open(s, c), batchContext(accountId, batchId));
  },
  delete: (accountId, batchId) => orders.delete(accountId, batchId),
});
