/**
 * The order stores' contract (RenderOrders, domain/async-renders.ts; BatchOrders,
 * domain/batch-queue.ts): the same cases for the memory stores and the S3 adapters on s3rver.
 */
import { describe, expect, it } from 'vitest';
import type { BatchOrder, BatchOrders } from '../../functions/domain/batches/batch-queue.js';
import type { RenderOrders, StoredOrder } from '../../functions/domain/renders/async-renders.js';
import { unique } from './stores.js';

export interface OrdersBackend {
  readonly name: string;
  create(): { renders: RenderOrders; batches: BatchOrders };
}

const options: StoredOrder['options'] = {
  pdf: {
    format: 'A4',
    landscape: false,
    printBackground: true,
    margins: { top: 0.4, right: 0.4, bottom: 0.4, left: 0.4 },
  },
  pageLoad: { waitUntil: 'load', timeoutMs: 30_000, waitForSelector: null },
  metadata: { title: 'Rechnung – März' },
};

const renderOrder: StoredOrder = {
  v: 1,
  field: 'html',
  // Variables as text: key order, 10.0 and a big integer kept byte for byte.
  template: {
    source: '<p>{{ a }}</p>',
    variables: '{"b":1,"a":10.0,"big":12345678901234567890}',
    header: null,
    footer: '{{ n }}',
  },
  options,
  offline: true,
};

const batchOrder: BatchOrder = {
  v: 1,
  field: 'template_id',
  template: { source: '<p>{{ a }}</p>', header: null, footer: null },
  options,
  offline: false,
  items: [
    { variables: '{"a":1}' },
    null,
    { variables: '{"a":2}', options: { ...options, metadata: { title: 'T' } } },
  ],
};

export const ordersContract = (backend: OrdersBackend): void => {
  describe(`the order stores on ${backend.name}`, () => {
    it('keeps a render order as written until it is deleted, per account and job', async () => {
      const { renders } = backend.create();
      const account = unique('acct');
      expect(await renders.get(account, 'job_1')).toBeUndefined();
      await renders.put(account, 'job_1', renderOrder);
      expect(await renders.get(account, 'job_1')).toEqual(renderOrder);
      expect(await renders.get(unique('acct'), 'job_1')).toBeUndefined();
      await renders.put(account, 'job_1', { ...renderOrder, offline: false });
      expect(await renders.get(account, 'job_1')).toMatchObject({ offline: false });
      await renders.delete(account, 'job_1');
      expect(await renders.get(account, 'job_1')).toBeUndefined();
      await expect(renders.delete(account, 'job_1')).resolves.toBeUndefined();
    });

    it("keeps a completed job's order apart from its pending order: each read, written and deleted alone", async () => {
      const { renders } = backend.create();
      const account = unique('acct');
      expect(await renders.kept(account, 'job_1')).toBeUndefined();
      await renders.put(account, 'job_1', renderOrder);
      await renders.keep(account, 'job_1', { ...renderOrder, offline: false });
      // The pending order's delete (the consumer's, once the job ended) leaves the kept one.
      await renders.delete(account, 'job_1');
      expect(await renders.get(account, 'job_1')).toBeUndefined();
      expect(await renders.kept(account, 'job_1')).toEqual({ ...renderOrder, offline: false });
      expect(await renders.kept(unique('acct'), 'job_1')).toBeUndefined();
      await renders.keep(account, 'job_2', { v: 1, withheld: 'protection' });
      expect(await renders.kept(account, 'job_2')).toEqual({ v: 1, withheld: 'protection' });
      await renders.discardKept(account, 'job_1');
      expect(await renders.kept(account, 'job_1')).toBeUndefined();
      await expect(renders.discardKept(account, 'job_1')).resolves.toBeUndefined();
    });

    it('keeps a batch order as written, apart from render orders, until it is deleted', async () => {
      const { renders, batches } = backend.create();
      const account = unique('acct');
      await batches.put(account, 'bat_1', batchOrder);
      expect(await batches.get(account, 'bat_1')).toEqual(batchOrder);
      expect(await renders.get(account, 'bat_1')).toBeUndefined();
      await batches.delete(account, 'bat_1');
      expect(await batches.get(account, 'bat_1')).toBeUndefined();
    });
  });
};
