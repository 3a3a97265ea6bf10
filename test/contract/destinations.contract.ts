/**
 * The destination ports' contracts (domain/destinations/destinations.ts): the store, on the memory
 * store and on DynamoDB (dynalite); the writer, on the memory writer and on the STS+S3 writer
 * against the local STS stand-in and s3rver. The same cases for each.
 */
import { monotonicFactory } from 'ulid';
import { describe, expect, it } from 'vitest';
import type { DeliveryRecords, JobDelivery } from '../../functions/domain/destinations/deliveries.js';
import {
  type DestinationStore,
  type DestinationTarget,
  DestinationWriteError,
  type DestinationWriter,
  type StoredDestination,
} from '../../functions/domain/destinations/destinations.js';
import { unique } from './stores.js';

export interface DestinationStoreBackend {
  readonly name: string;
  create(): DestinationStore;
}

const nextUlid = monotonicFactory();

const destination = (accountId: string): StoredDestination => ({
  id: `dst_${nextUlid()}`,
  name: 'invoices',
  bucket: 'customer-invoices',
  region: 'eu-west-1',
  role_arn: 'arn:aws:iam::123456789012:role/pdf-delivery',
  external_id: 'pdf-service-0123456789abcdef',
  key_template: 'invoices/{{ job.id }}.pdf',
  prefix: 'pdf/',
  created_at: '2026-11-29T10:00:00.000Z',
  account_id: accountId,
});

export const destinationStoreContract = (backend: DestinationStoreBackend): void => {
  describe(`the destination store on ${backend.name}`, () => {
    it('creates, lists newest first, gets and deletes, each field as it was', async () => {
      const store = backend.create();
      const account = unique('acct');
      const first = destination(account);
      const second = { ...destination(account), prefix: '' };
      expect(await store.create(first, 5)).toEqual({ kind: 'created' });
      expect(await store.create(second, 5)).toEqual({ kind: 'created' });
      expect(await store.get(account, first.id)).toEqual(first);
      expect(await store.get(account, second.id)).toEqual(second);
      expect((await store.list(account)).map((d) => d.id)).toEqual([second.id, first.id]);
      expect(await store.delete(account, first.id)).toEqual(first);
      expect(await store.get(account, first.id)).toBeUndefined();
      expect(await store.delete(account, first.id)).toBeUndefined();
    });

    it('never finds another account’s destination, nor deletes it', async () => {
      const store = backend.create();
      const owner = unique('acct');
      const other = unique('acct');
      const mine = destination(owner);
      await store.create(mine, 5);
      expect(await store.get(other, mine.id)).toBeUndefined();
      expect(await store.delete(other, mine.id)).toBeUndefined();
      expect(await store.list(other)).toEqual([]);
      expect(await store.get(owner, mine.id)).toEqual(mine);
    });

    it('refuses one past the limit, exactly, under concurrent creations', async () => {
      const store = backend.create();
      const account = unique('acct');
      const outcomes = await Promise.all(
        Array.from({ length: 5 }, () => store.create(destination(account), 2)),
      );
      expect(outcomes.filter((o) => o.kind === 'created')).toHaveLength(2);
      expect(await store.list(account)).toHaveLength(2);
    });
  });
};

/** A customer's side as a writer backend sets it up: a bucket, the role that reaches it. */
export interface DestinationWriterWorld {
  readonly writer: DestinationWriter;
  /** A bucket and the role (with its external id) that reaches it. */
  readonly target: DestinationTarget;
  /** What the bucket holds at `key`, read as its owner reads it. */
  read(key: string): Promise<Uint8Array | undefined>;
}

export interface DestinationWriterBackend {
  readonly name: string;
  /** Called inside tests: the world of one file's run. */
  world(): DestinationWriterWorld;
}

const reasonOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
  } catch (e) {
    if (e instanceof DestinationWriteError) return e.reason;
    throw e;
  }
  return 'no error';
};

export const destinationWriterContract = (backend: DestinationWriterBackend): void => {
  describe(`the destination writer on ${backend.name}`, () => {
    it('puts the bytes at the key through the role, with an ETag, and deletes them', async () => {
      const { writer, target, read } = backend.world();
      const body = new Uint8Array(Buffer.from(`%PDF-1.7 ${unique('body')}`));
      const key = `invoices/2026-11/${unique('job')}.pdf`;
      const { etag } = await writer.put(target, key, body, 'application/pdf');
      expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
      expect(Buffer.from((await read(key)) ?? [])).toEqual(Buffer.from(body));
      await writer.delete(target, key);
      expect(await read(key)).toBeUndefined();
    });

    it('is refused the role with another external id, or a role that does not trust it', async () => {
      const { writer, target } = backend.world();
      const body = new Uint8Array([1, 2, 3]);
      expect(
        await reasonOf(
          writer.put({ ...target, externalId: 'pdf-service-other' }, 'k.pdf', body, 'application/pdf'),
        ),
      ).toBe('assume_role_denied');
      expect(
        await reasonOf(
          writer.put(
            { ...target, roleArn: 'arn:aws:iam::123456789012:role/nobody' },
            'k.pdf',
            body,
            'application/pdf',
          ),
        ),
      ).toBe('assume_role_denied');
    });

    it('names a bucket that does not exist', async () => {
      const { writer, target } = backend.world();
      const missing = {
        ...target,
        bucket: `missing-${unique('b')
          .toLowerCase()
          .replace(/[^a-z0-9-]/g, '')}`,
      };
      expect(await reasonOf(writer.put(missing, 'k.pdf', new Uint8Array([1]), 'application/pdf'))).toBe(
        'bucket_not_found',
      );
    });
  });
};

export interface DeliveryRecordsBackend {
  readonly name: string;
  /** The records, and a job of `accountId` made to hold one (the DynamoDB records live on the job's item). */
  create(): { records: DeliveryRecords; job(accountId: string, jobId: string): Promise<void> };
}

const pending = (attempts: number, over: Partial<JobDelivery> = {}): JobDelivery => ({
  status: 'pending',
  destination_id: 'dst_01JABCDEFGHJKMNPQRSTVWXYZ0',
  bucket: 'customer-invoices',
  key: null,
  etag: null,
  delivered_at: null,
  attempts,
  error: null,
  window_started_at: 1_764_324_000_000,
  ...over,
});

export const deliveryRecordsContract = (backend: DeliveryRecordsBackend): void => {
  describe(`the delivery records on ${backend.name}`, () => {
    it('records a delivery once, then moves it one attempt at a time, each write fenced by the attempts before it', async () => {
      const { records, job } = backend.create();
      const account = unique('acct');
      const jobId = `job_${nextUlid()}`;
      await job(account, jobId);
      expect(await records.get(account, jobId)).toBeUndefined();
      expect(await records.put(account, jobId, pending(0), null)).toBe(true);
      expect(await records.put(account, jobId, pending(0), null)).toBe(false);
      const failed = pending(1, { key: 'pdf/a.pdf', error: 'unreachable: try again (InjectedFault)' });
      // Two handlers of the same message: one wins.
      const both = await Promise.all([
        records.put(account, jobId, failed, 0),
        records.put(account, jobId, failed, 0),
      ]);
      expect(both.filter(Boolean)).toHaveLength(1);
      expect(await records.get(account, jobId)).toEqual(failed);
      const delivered = { ...failed, status: 'delivered' as const, attempts: 2, etag: '"abc"', error: null };
      expect(await records.put(account, jobId, delivered, 0)).toBe(false);
      expect(await records.put(account, jobId, delivered, 1)).toBe(true);
      // Ended: nothing moves it again.
      expect(await records.put(account, jobId, pending(3), 2)).toBe(false);
      expect(await records.get(account, jobId)).toEqual(delivered);
      expect(await records.get(unique('acct'), jobId)).toBeUndefined();
    });
  });
};
