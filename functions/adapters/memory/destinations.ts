/**
 * The destination store and writer (domain/destinations/destinations.ts) in memory, as the real
 * adapters behave; held to test/contract/destinations.contract.ts with them.
 * - The store: at most `limit` an account, newest first, each account's its own.
 * - The writer: buckets of objects, each reachable through one role with one external id, as a
 *   customer's trust policy makes it; a put or a delete the role is not allowed is refused as S3
 *   refuses it. `faults` injects a failure for the next calls (tests of retries).
 */
import { createHash } from 'node:crypto';
import type { DeliveryRecords, JobDelivery } from '../../domain/destinations/deliveries.js';
import {
  type DestinationFailure,
  type DestinationStore,
  type DestinationTarget,
  DestinationWriteError,
  type DestinationWriter,
  type StoredDestination,
} from '../../domain/destinations/destinations.js';
import { jobKey, type MemoryTable } from './table.js';

export const createMemoryDestinationStore = (): DestinationStore => {
  const accounts = new Map<string, Map<string, StoredDestination>>();
  const of = (accountId: string) => {
    let found = accounts.get(accountId);
    if (!found) {
      found = new Map();
      accounts.set(accountId, found);
    }
    return found;
  };
  return {
    async create(destination, limit) {
      const mine = of(destination.account_id);
      if (mine.size >= limit) return { kind: 'limitReached' };
      mine.set(destination.id, structuredClone(destination));
      return { kind: 'created' };
    },
    async get(accountId, id) {
      const found = accounts.get(accountId)?.get(id);
      return found ? structuredClone(found) : undefined;
    },
    async list(accountId) {
      return [...of(accountId).values()]
        .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
        .map((d) => structuredClone(d));
    },
    async delete(accountId, id) {
      const mine = accounts.get(accountId);
      const found = mine?.get(id);
      if (!found) return undefined;
      mine?.delete(id);
      return found;
    },
  };
};

export interface MemoryBucket {
  readonly region: string;
  /** The role that reaches it, and the external id its trust policy requires. */
  readonly roleArn: string;
  readonly externalId: string;
  /** @default true */
  readonly mayPut?: boolean;
  /** @default true */
  readonly mayDelete?: boolean;
}

export interface MemoryDestinationWriter extends DestinationWriter {
  /** A customer's bucket and the role that reaches it. */
  addBucket(name: string, bucket: MemoryBucket): void;
  /** What a bucket holds, by key. */
  objects(bucket: string): ReadonlyMap<string, Uint8Array>;
  /** The next `count` puts fail with `reason` (a fault a test injects). */
  failNextPuts(count: number, reason?: DestinationFailure): void;
  /** Puts attempted so far, failed ones included. */
  readonly putAttempts: number;
}

export const createMemoryDestinationWriter = (): MemoryDestinationWriter => {
  const buckets = new Map<string, MemoryBucket & { readonly objects: Map<string, Uint8Array> }>();
  const faults: DestinationFailure[] = [];
  let putAttempts = 0;
  const reach = (target: DestinationTarget) => {
    const bucket = buckets.get(target.bucket);
    // A role is assumed before its bucket is read: a role of nobody's is refused first.
    const roleKnown = [...buckets.values()].some(
      (b) => b.roleArn === target.roleArn && b.externalId === target.externalId,
    );
    if (!roleKnown) throw new DestinationWriteError('assume_role_denied', 'AccessDenied');
    if (!bucket) throw new DestinationWriteError('bucket_not_found', 'NoSuchBucket');
    if (bucket.roleArn !== target.roleArn) throw new DestinationWriteError('put_denied', 'AccessDenied');
    if (bucket.region !== target.region) throw new DestinationWriteError('wrong_region', 'PermanentRedirect');
    return bucket;
  };
  return {
    addBucket(name, bucket) {
      buckets.set(name, { ...bucket, objects: new Map() });
    },
    objects: (bucket) => buckets.get(bucket)?.objects ?? new Map(),
    failNextPuts(count, reason = 'unreachable') {
      for (let i = 0; i < count; i++) faults.push(reason);
    },
    get putAttempts() {
      return putAttempts;
    },
    async put(target, key, body) {
      putAttempts++;
      const fault = faults.shift();
      if (fault) throw new DestinationWriteError(fault, 'InjectedFault');
      const bucket = reach(target);
      if (bucket.mayPut === false) throw new DestinationWriteError('put_denied', 'AccessDenied');
      bucket.objects.set(key, new Uint8Array(body));
      return { etag: `"${createHash('md5').update(body).digest('hex')}"` };
    },
    async delete(target, key) {
      const bucket = reach(target);
      if (bucket.mayDelete === false) throw new DestinationWriteError('delete_denied', 'AccessDenied');
      bucket.objects.delete(key);
    },
  };
};

/**
 * A job's delivery records (domain/destinations/deliveries.ts) in memory, with the same fence. With
 * the memory table (`table`), kept on the job's own entry as the DynamoDB adapter keeps it on the
 * job's item: written only while the job exists, and read with the job (its `delivery`).
 */
export const createMemoryDeliveryRecords = (table?: MemoryTable): DeliveryRecords => {
  const records = new Map<string, JobDelivery>();
  const id = (accountId: string, jobId: string) => `${accountId}\n${jobId}`;
  const read = (accountId: string, jobId: string): JobDelivery | undefined =>
    table ? table.jobs.get(jobKey(accountId, jobId))?.job.delivery : records.get(id(accountId, jobId));
  return {
    async get(accountId, jobId) {
      const found = read(accountId, jobId);
      return found ? structuredClone(found) : undefined;
    },
    async put(accountId, jobId, next, afterAttempts) {
      const stored = table?.jobs.get(jobKey(accountId, jobId));
      if (table && !stored) return false;
      const current = read(accountId, jobId);
      if (
        afterAttempts === null
          ? current !== undefined
          : current?.status !== 'pending' || current.attempts !== afterAttempts
      )
        return false;
      if (stored) stored.job = { ...stored.job, delivery: structuredClone(next) };
      else records.set(id(accountId, jobId), structuredClone(next));
      return true;
    },
  };
};
