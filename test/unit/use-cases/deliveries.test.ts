/**
 * Delivery into a destination (domain/destinations/deliveries.ts) on the memory parts: the memory
 * destination store and writer (held to test/contract/destinations.contract.ts with the DynamoDB
 * store and the STS+S3 writer), the memory queue on a test clock the test moves, and the memory
 * delivery records. The test plays the queue's consumer: it drains what is due and hands it over.
 * Faults are injected into the writer (its next puts fail), nothing else is mocked.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createMemoryDeliveryRecords,
  createMemoryDestinationStore,
  createMemoryDestinationWriter,
} from '../../../functions/adapters/memory/destinations.js';
import { createMemoryQueue, type MemoryQueue } from '../../../functions/adapters/memory/queue.js';
import {
  createDeliverer,
  type DeliverableJob,
  type DeliveryMessage,
  type DeliveryOutcome,
  type JobDelivery,
} from '../../../functions/domain/destinations/deliveries.js';
import type { StoredDestination } from '../../../functions/domain/destinations/destinations.js';
import { testClock } from '../../helpers/dynalite.js';

const ACCOUNT = 'acct-ada';
const ROLE = 'arn:aws:iam::123456789012:role/pdf-delivery';
const destination: StoredDestination = {
  id: 'dst_01JABCDEFGHJKMNPQRSTVWXYZ0',
  name: 'invoices',
  bucket: 'customer-invoices',
  region: 'eu-west-1',
  role_arn: ROLE,
  external_id: 'pdf-service-abc',
  key_template: 'invoices/{{ job.created_at[:7] }}/{{ job.id }}.pdf',
  prefix: 'pdf/',
  created_at: '2026-11-28T09:00:00.000Z',
  account_id: ACCOUNT,
};
const job: DeliverableJob = {
  id: 'job_01JABCDEFGHJKMNPQRSTVWXYZ1',
  account_id: ACCOUNT,
  created_at: '2026-11-28T10:00:00.000Z',
  kind: 'render',
  reference: null,
  file_name: null,
  batch_id: null,
  template_id: null,
  object_key: `pdf/${ACCOUNT}/job_01JABCDEFGHJKMNPQRSTVWXYZ1.pdf`,
};
const PDF = new Uint8Array(Buffer.from('%PDF-1.7\n% a stored PDF\n%%EOF\n'));

let queue: MemoryQueue<DeliveryMessage> | undefined;
afterEach(async () => {
  await queue?.close();
});

const setup = async () => {
  const clock = testClock('2026-11-28T10:00:01.000Z');
  queue = createMemoryQueue<DeliveryMessage>({ name: 'deliveries', clock });
  const destinations = createMemoryDestinationStore();
  await destinations.create(destination, 20);
  const writer = createMemoryDestinationWriter();
  writer.addBucket(destination.bucket, {
    region: destination.region,
    roleArn: ROLE,
    externalId: 'pdf-service-abc',
  });
  const records = createMemoryDeliveryRecords();
  const told: { type: 'delivered' | 'failed'; delivery: JobDelivery }[] = [];
  const deliverer = createDeliverer({
    records,
    destinations,
    writer,
    jobs: { get: async (accountId, jobId) => (accountId === ACCOUNT && jobId === job.id ? job : undefined) },
    readPdf: async (key) => {
      if (key !== job.object_key) throw new Error(`no object ${key}`);
      return PDF;
    },
    queue,
    events: {
      delivered: async (_, delivery) => void told.push({ type: 'delivered', delivery }),
      failed: async (_, delivery) => void told.push({ type: 'failed', delivery }),
    },
    schedule: { firstRetrySeconds: 10, windowSeconds: 120 },
    clock,
  });
  const q = queue;
  /** Hands every message due now to the deliverer, a second time too (at least once); the outcomes. */
  const consume = async (twice = false): Promise<DeliveryOutcome[]> => {
    const outcomes: DeliveryOutcome[] = [];
    for (const message of q.drain()) {
      outcomes.push(await deliverer.handle(message));
      if (twice) outcomes.push(await deliverer.handle(message));
    }
    return outcomes;
  };
  return { clock, writer, records, told, deliverer, consume, destinations };
};

describe('delivery into a destination', () => {
  it('puts the PDF at the templated key, byte for byte, and tells delivered once', async () => {
    const { writer, records, told, deliverer, consume } = await setup();
    await deliverer.start(job, destination.id);
    // Told twice before any attempt ran: the first attempt is queued again, and fenced.
    await deliverer.start(job, destination.id);
    expect(await consume(true)).toEqual(['delivered', 'duplicate', 'duplicate', 'duplicate']);
    expect(writer.putAttempts).toBe(1);
    // Told again once it ran: nothing more is queued.
    await deliverer.start(job, destination.id);
    expect(await consume()).toEqual([]);
    const key = `pdf/invoices/2026-11/${job.id}.pdf`;
    expect(Buffer.from(writer.objects(destination.bucket).get(key) ?? [])).toEqual(Buffer.from(PDF));
    const delivery = await records.get(ACCOUNT, job.id);
    expect(delivery).toMatchObject({
      status: 'delivered',
      bucket: destination.bucket,
      key,
      etag: `"${createHash('md5').update(PDF).digest('hex')}"`,
      delivered_at: '2026-11-28T10:00:01.000Z',
      attempts: 1,
      error: null,
    });
    expect(told.map((t) => t.type)).toEqual(['delivered']);
  });

  it('retries a put that failed twice on the webhook schedule, then delivers once and tells it once', async () => {
    const { clock, writer, records, told, deliverer, consume } = await setup();
    writer.failNextPuts(2);
    await deliverer.start(job, destination.id);
    expect(await consume(true)).toEqual(['retrying', 'duplicate']);
    expect(await records.get(ACCOUNT, job.id)).toMatchObject({ status: 'pending', attempts: 1 });
    expect((await records.get(ACCOUNT, job.id))?.error).toMatch(/^unreachable: /);
    // Not due before the first wait (10 s) has passed.
    clock.advance(9_000);
    expect(await consume()).toEqual([]);
    clock.advance(1_000);
    expect(await consume(true)).toEqual(['retrying', 'duplicate']);
    // The second wait doubles: 20 s after the first retry (30 s after the first attempt).
    clock.advance(19_000);
    expect(await consume()).toEqual([]);
    clock.advance(1_000);
    expect(await consume(true)).toEqual(['delivered', 'duplicate']);
    expect(writer.putAttempts).toBe(3);
    expect(await records.get(ACCOUNT, job.id)).toMatchObject({
      status: 'delivered',
      attempts: 3,
      error: null,
    });
    expect(told.map((t) => t.type)).toEqual(['delivered']);
    expect(writer.objects(destination.bucket).size).toBe(1);
  });

  it('fails once the retry window closes, and tells delivery_failed once with the reason', async () => {
    const { clock, writer, records, told, deliverer, consume } = await setup();
    writer.failNextPuts(100, 'put_denied');
    await deliverer.start(job, destination.id);
    const outcomes: DeliveryOutcome[] = [];
    for (let i = 0; i < 20; i++) {
      outcomes.push(...(await consume()));
      clock.advance(10_000);
    }
    // 10, 20, 40, 80 s after the first: attempts at 0, 10, 30, 70 s; the next (150 s) is past the window.
    expect(outcomes).toEqual(['retrying', 'retrying', 'retrying', 'failed']);
    expect(await records.get(ACCOUNT, job.id)).toMatchObject({ status: 'failed', attempts: 4 });
    expect((await records.get(ACCOUNT, job.id))?.error).toMatch(/^put_denied: /);
    expect(told.map((t) => t.type)).toEqual(['failed']);
  });

  it('fails a delivery whose destination was deleted since, without a put, and tells it once', async () => {
    const { writer, records, told, deliverer, consume, destinations } = await setup();
    await deliverer.start(job, destination.id);
    await destinations.delete(ACCOUNT, destination.id);
    expect(await consume(true)).toEqual(['failed', 'duplicate']);
    expect(writer.putAttempts).toBe(0);
    expect(await records.get(ACCOUNT, job.id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: 'the destination was deleted',
    });
    expect(told.map((t) => t.type)).toEqual(['failed']);
  });
});
