/**
 * Storage faults, injected by taking the bucket away from the running stack (s3rver answers
 * NoSuchBucket to the presigned PUT): the render answers 502 PDF_STORAGE_FAILED with its job,
 * which is recorded as failed with no link, and the quota unit is given back.
 */
import { CreateBucketCommand, DeleteBucketCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { s3Client, useLocalStack } from '../helpers/local-stack.js';

const local = useLocalStack({
  env: { PLANS: JSON.stringify({ free: { monthlyRenders: 1, rendersPerMinute: 100 } }) },
});

describe('PDF_STORAGE_FAILED', () => {
  it('answers 502 with the job, records it failed, and keeps the quota unit', async () => {
    const s3 = s3Client(local.stack);
    const bucket = local.stack.bucketName;
    const token = await local.sessionToken();
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    expect(listed.KeyCount ?? 0).toBe(0);
    await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
    try {
      const res = await local.api('/v1/pdf', {
        method: 'POST',
        token,
        body: { html: '<p>nowhere to go</p>' },
      });
      expect(res.status).toBe(502);
      expect(res.json.error.code).toBe('PDF_STORAGE_FAILED');
      expect(res.json.error.message).not.toMatch(/127\.0\.0\.1|localhost|X-Amz/);
      const jobId = res.json.error.job_id;
      const job = await local.api(`/v1/pdf/${jobId}`, { token });
      expect(job.json).toMatchObject({
        status: 'failed',
        download_url: null,
        error: { code: 'PDF_STORAGE_FAILED' },
      });
    } finally {
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    }
    // The failed render gave its unit back: the plan's single render is still available.
    const retry = await local.api('/v1/pdf', { method: 'POST', token, body: { html: '<p>stored</p>' } });
    expect(retry.status).toBe(201);
    const over = await local.api('/v1/pdf', { method: 'POST', token, body: { html: '<p>again</p>' } });
    expect(over.json.error.code).toBe('PLAN_QUOTA_EXCEEDED');
  });
});
