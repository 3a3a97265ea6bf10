/**
 * Delivery into a destination over HTTP (issue 36), on a stack of its own (a child process) whose
 * retry schedule is short: the first retry after 1 s, a window of 5 s (attempts at 0, 1 and 3 s).
 * Its deliveries consumer copies the PDF through the stack's STS stand-in (the trust policies of
 * DATA_DIR/local-roles.json) into its S3 server's buckets. The fault is a real one, not a mock:
 * the destination's bucket is deleted (bucket_not_found), then made again. (Taking the role's trust
 * away would not do: the writer keeps a role's credentials while they last.)
 * A webhook receiver on loopback counts job.delivered / job.delivery_failed.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
} from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { LOCAL_ROLES_FILE } from '../../lib/local/sts.js';
import { type Json, s3Client, useLocalStack } from '../helpers/local-stack.js';
import { useWebhookReceiver } from '../helpers/webhook-receiver.js';

const env: Record<string, string> = {
  WEBHOOK_FIRST_RETRY_SECONDS: '1',
  WEBHOOK_RETRY_WINDOW_SECONDS: '5',
};
const receiver = useWebhookReceiver(env);
const local = useLocalStack({ env });

const HTML = '<h1>Invoice 42</h1><p>Thank you.</p>';

/** Writes the role's trust policy as the stack's STS stand-in reads it (on every call). */
const trust = async (roleArn: string, externalId: string) => {
  const file = join(local.stack.dataDir, LOCAL_ROLES_FILE);
  const roles = await readFile(file, 'utf8').then(JSON.parse, () => ({}));
  await writeFile(file, JSON.stringify({ ...roles, [roleArn]: { externalId } }));
};

/** A bucket, a role that trusts the caller's external id, and the destination on them. */
const destination = async (token: string, name: string) => {
  const bucket = `deliveries-${name}-${process.pid}`;
  const role = `arn:aws:iam::123456789012:role/delivery-${name}-${process.pid}`;
  const s3 = s3Client(local.stack);
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  s3.destroy();
  const body = {
    name,
    bucket,
    region: 'us-east-1',
    role_arn: role,
    key_template: 'invoices/{{ job.created_at[:7] }}/{{ job.id }}.pdf',
    prefix: 'pdf/',
  };
  const refused = await local.api('/v1/destinations', { method: 'POST', token, body });
  const externalId = /the external id is (pdf-service-[0-9a-f]+)/.exec(
    refused.json.error.message,
  )?.[1] as string;
  await trust(role, externalId);
  const created = await local.api('/v1/destinations', { method: 'POST', token, body });
  expect(created.status, created.text).toBe(201);
  return { id: created.json.id as string, bucket, role, externalId };
};

/** The job once `until` holds of it (polled). */
const jobWhen = async (token: string, id: string, until: (job: Json) => boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = (await local.api(`/v1/pdf/${id}`, { token })).json;
    if (until(job)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} never got there: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

const objectBytes = async (bucket: string, key: string) => {
  const s3 = s3Client(local.stack);
  try {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return { bytes: Buffer.from(await (out.Body as Json).transformToByteArray()), etag: out.ETag };
  } finally {
    s3.destroy();
  }
};

const keysOf = async (bucket: string) => {
  const s3 = s3Client(local.stack);
  try {
    return ((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((o) => o.Key);
  } finally {
    s3.destroy();
  }
};

/** Deletes the bucket (or makes it again): every put into it fails meanwhile. */
const bucket = async (name: string, exists: boolean) => {
  const s3 = s3Client(local.stack);
  try {
    await s3.send(
      exists ? new CreateBucketCommand({ Bucket: name }) : new DeleteBucketCommand({ Bucket: name }),
    );
  } finally {
    s3.destroy();
  }
};

/** The event types an endpoint's path received, in order. */
const eventsAt = (path: string): string[] =>
  receiver.received.filter((r) => r.path === path).map((r) => JSON.parse(r.body).type);

const endpoint = async (token: string, path: string) => {
  const res = await local.api('/v1/webhooks', { method: 'POST', token, body: { url: receiver.url(path) } });
  expect(res.status, res.text).toBe(201);
  return res.json.id as string;
};

describe('delivery into a destination', () => {
  it('puts a render at the templated key, byte-identical to the download, and tells job.delivered once', async () => {
    const token = await local.sessionToken();
    const dst = await destination(token, 'plain');
    const webhookId = await endpoint(token, '/ok/plain');
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: HTML, destination_id: dst.id, webhook_id: webhookId },
    });
    expect(res.status, res.text).toBe(201);
    const job = await jobWhen(token, res.json.id, (j) => j.delivery && j.delivery.status !== 'pending');
    const key = `pdf/invoices/${job.created_at.slice(0, 7)}/${job.id}.pdf`;
    expect(job.delivery).toMatchObject({
      status: 'delivered',
      bucket: dst.bucket,
      key,
      attempts: 1,
      error: null,
    });
    expect(Date.parse(job.delivery.delivered_at)).toBeGreaterThanOrEqual(Date.parse(job.completed_at));
    expect(await keysOf(dst.bucket)).toEqual([key]);
    const delivered = await objectBytes(dst.bucket, key);
    const downloaded = Buffer.from(await (await fetch(job.download_url)).arrayBuffer());
    expect(downloaded.subarray(0, 5).toString()).toBe('%PDF-');
    expect(delivered.bytes.equals(downloaded)).toBe(true);
    expect(job.delivery.etag).toBe(delivered.etag);

    await receiver.waitFor('/ok/plain', 2);
    await new Promise((r) => setTimeout(r, 1000));
    expect(eventsAt('/ok/plain').sort()).toEqual(['job.completed', 'job.delivered']);
    const told = JSON.parse(
      receiver.received.find((r) => r.path === '/ok/plain' && r.body.includes('job.delivered'))
        ?.body as string,
    );
    expect(told.data.delivery).toMatchObject({ status: 'delivered', key });
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(1);
  });

  it('retries a put that fails twice, then delivers it once: job.delivered once, the unit unchanged', async () => {
    const token = await local.sessionToken();
    const dst = await destination(token, 'flaky');
    const webhookId = await endpoint(token, '/ok/flaky');
    // The bucket is gone: each put fails until it is made again.
    await bucket(dst.bucket, false);
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: HTML, destination_id: dst.id, webhook_id: webhookId },
    });
    expect(res.status, res.text).toBe(201);
    const failedTwice = await jobWhen(token, res.json.id, (j) => j.delivery?.attempts === 2);
    expect(failedTwice.status).toBe('completed');
    expect(failedTwice.delivery).toMatchObject({ status: 'pending', etag: null, delivered_at: null });
    expect(failedTwice.delivery.error).toContain('bucket_not_found');
    await bucket(dst.bucket, true);

    const job = await jobWhen(token, res.json.id, (j) => j.delivery.status !== 'pending');
    expect(job.delivery).toMatchObject({ status: 'delivered', attempts: 3, error: null });
    expect(await keysOf(dst.bucket)).toEqual([job.delivery.key]);
    await receiver.waitFor('/ok/flaky', 2);
    await new Promise((r) => setTimeout(r, 1500));
    expect(eventsAt('/ok/flaky').sort()).toEqual(['job.completed', 'job.delivered']);
    expect(job.status).toBe('completed');
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(1);
  });

  it('gives a delivery up at the end of the window: job.delivery_failed once, the job still completed and charged', async () => {
    const token = await local.sessionToken();
    const dst = await destination(token, 'denied');
    const webhookId = await endpoint(token, '/ok/denied');
    await bucket(dst.bucket, false);
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: HTML, destination_id: dst.id, webhook_id: webhookId, async: true },
    });
    expect(res.status, res.text).toBe(202);
    const job = await jobWhen(token, res.json.id, (j) => j.delivery && j.delivery.status !== 'pending');
    // Attempts at 0, 1 and 3 s; the next (7 s) is past the 5 s window.
    expect(job.delivery).toMatchObject({ status: 'failed', attempts: 3, etag: null, delivered_at: null });
    expect(job.delivery.error).toContain('bucket_not_found');
    expect(job.status).toBe('completed');
    await bucket(dst.bucket, true);
    expect(await keysOf(dst.bucket)).toEqual([]);
    await receiver.waitFor('/ok/denied', 2);
    await new Promise((r) => setTimeout(r, 1500));
    expect(eventsAt('/ok/denied').sort()).toEqual(['job.completed', 'job.delivery_failed']);
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(1);
  });

  it("delivers a batch's items and a merge that name a destination, each at its own key", async () => {
    const token = await local.sessionToken();
    const dst = await destination(token, 'batch');
    const batch = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: {
        html: '<h1>Invoice {{ n }}</h1>',
        items: [
          { variables: { n: 1 }, reference: 'INV-1' },
          { variables: { n: 2 }, reference: 'INV-2' },
        ],
        destination_id: dst.id,
      },
    });
    expect(batch.status, batch.text).toBe(202);
    const jobIds: string[] = (
      await local.api(`/v1/batches/${batch.json.id}/jobs`, { token }).then((r) => r.json.data ?? r.json)
    ).map((j: Json) => j.id);
    expect(jobIds).toHaveLength(2);
    const items = await Promise.all(
      jobIds.map((id) => jobWhen(token, id, (j) => j.delivery && j.delivery.status !== 'pending')),
    );
    for (const job of items) {
      expect(job.destination_id).toBe(dst.id);
      expect(job.delivery).toMatchObject({ status: 'delivered', attempts: 1 });
    }
    const merge = await local.api('/v1/merges', {
      method: 'POST',
      token,
      body: { parts: jobIds.map((job_id) => ({ job_id })), destination_id: dst.id },
    });
    expect(merge.status, merge.text).toBe(201);
    const merged = await jobWhen(token, merge.json.id, (j) => j.delivery && j.delivery.status !== 'pending');
    expect(merged.delivery).toMatchObject({ status: 'delivered', attempts: 1 });
    expect((await keysOf(dst.bucket)).sort()).toEqual(
      [...items, merged].map((j) => `pdf/invoices/${j.created_at.slice(0, 7)}/${j.id}.pdf`).sort(),
    );
    const mergedBytes = await objectBytes(dst.bucket, merged.delivery.key);
    const downloaded = Buffer.from(await (await fetch(merged.download_url)).arrayBuffer());
    expect(mergedBytes.bytes.equals(downloaded)).toBe(true);
  });
});
