/**
 * A `protection`'s passwords at rest (domain/renders/order-secrets.ts): an async render's and a
 * batch's stored orders hold them sealed, open with their own order only, and are kept whole
 * otherwise. The stores are the memory adapters, held to the same contract as S3's.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryBatchOrders, createMemoryRenderOrders } from '../../functions/adapters/memory/orders.js';
import { secretBoxOf } from '../../functions/adapters/secrets-manager/webhook-secret-box.js';
import type { BatchOrder } from '../../functions/domain/batches/batch-queue.js';
import type { StoredOrder } from '../../functions/domain/renders/async-renders.js';
import { sealedBatchOrders, sealedRenderOrders } from '../../functions/domain/renders/order-secrets.js';
import { protectionOf } from '../../functions/domain/renders/protection.js';
import { renderOptionsFrom } from '../../functions/domain/renders/render-options.js';

const OWNER = 'Owner-Secret-Passw0rd';
const USER = 'user-Secret-pw';
const box = secretBoxOf(async () => 'k'.repeat(64), 'pdf-service render order passwords v1');
const options = renderOptionsFrom({ protection: { owner_password: OWNER, user_password: USER } }, 30_000);
const order: StoredOrder = {
  v: 1,
  field: 'html',
  template: { source: '<p>x</p>', variables: '{}' },
  options,
  offline: false,
};

/** Everything the store holds, as text. */
const raw = async (store: { get(a: string, id: string): Promise<unknown> }, a: string, id: string) =>
  JSON.stringify(await store.get(a, id));

describe('sealed render orders', () => {
  it('keep the passwords sealed at rest and give them back to their own order', async () => {
    const inner = createMemoryRenderOrders();
    const orders = sealedRenderOrders(inner, () => box);
    await orders.put('acct-1', 'job_1', order);
    const stored = await raw(inner, 'acct-1', 'job_1');
    expect(stored).not.toContain(OWNER);
    expect(stored).not.toContain(USER);
    expect(await orders.get('acct-1', 'job_1')).toEqual(order);
    expect(options.protection).toEqual(protectionOf({ owner_password: OWNER, user_password: USER }));

    // A sealed order copied under another job does not open.
    await inner.put('acct-1', 'job_2', (await inner.get('acct-1', 'job_1')) as StoredOrder);
    await expect(orders.get('acct-1', 'job_2')).rejects.toThrow();
    await orders.delete('acct-1', 'job_1');
    expect(await orders.get('acct-1', 'job_1')).toBeUndefined();
  });

  it('need no box for an order without passwords', async () => {
    const inner = createMemoryRenderOrders();
    const orders = sealedRenderOrders(inner, () => {
      throw new Error('no secret in this function');
    });
    const plain = { ...order, options: renderOptionsFrom({}, 30_000) };
    await orders.put('acct-1', 'job_3', plain);
    expect(await orders.get('acct-1', 'job_3')).toEqual(plain);
  });
});

describe('sealed batch orders', () => {
  it('seal the batch’s passwords and each item’s', async () => {
    const inner = createMemoryBatchOrders();
    const orders = sealedBatchOrders(inner, () => box);
    const batch: BatchOrder = {
      v: 1,
      field: 'html',
      template: { source: '<p>x</p>' },
      options,
      offline: false,
      items: [
        { variables: '{}' },
        null,
        { variables: '{}', options: { ...options, metadata: { title: 't' } } },
      ],
    };
    await orders.put('acct-1', 'bat_1', batch);
    const stored = await raw(inner, 'acct-1', 'bat_1');
    expect(stored).not.toContain(OWNER);
    expect(stored).not.toContain(USER);
    expect(await orders.get('acct-1', 'bat_1')).toEqual(batch);
  });
});
