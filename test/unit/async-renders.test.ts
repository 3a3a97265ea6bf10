/**
 * Async renders' pure parts: the DynamoDB claim and re-queue (the attempt as fence), the SQS and
 * S3 request builders, the Prefer header, the retry backoff, the message format, and the
 * sweeper's choice to re-queue rather than fail.
 */
import { describe, expect, it } from 'vitest';
import {
  claimJobParams,
  renewJobParams,
  requeueJobParams,
  transitionJobParams,
} from '../../functions/adapters/dynamodb/jobs.js';
import {
  deleteOrderParams,
  getOrderParams,
  putOrderParams,
} from '../../functions/adapters/s3/render-orders.js';
import {
  changeVisibilityParams,
  sendMessageBatchParams,
  sendMessageParams,
} from '../../functions/adapters/sqs/queue.js';
import type { Job } from '../../functions/domain/jobs/jobs.js';
import { fenceOf } from '../../functions/domain/jobs/jobs.js';
import { decide } from '../../functions/domain/jobs/sweeper.js';
import {
  parseRenderMessage,
  renderMessage,
  type StoredOrder,
} from '../../functions/domain/renders/async-renders.js';
import { keptOrderObjectKey } from '../../functions/domain/renders/kept-orders.js';
import { retryDelaySeconds } from '../../functions/domain/renders/render-worker.js';
import { prefersAsync } from '../../functions/pdf/request.js';

const job = (over: Partial<Job> = {}): Job => ({
  id: 'job_01JBQ5Y8S1W8M3ZT6YDV1KQ0XE',
  account_id: 'acct-1',
  status: 'pending',
  template_id: null,
  template_version: null,
  object_key: 'pdf/acct-1/job_01JBQ5Y8S1W8M3ZT6YDV1KQ0XE.pdf',
  file_size_bytes: null,
  page_count: null,
  render_duration_ms: null,
  error: null,
  created_at: '2026-11-25T10:00:00.000Z',
  updated_at: '2026-11-25T10:00:00.000Z',
  completed_at: null,
  mode: 'async',
  attempts: 0,
  unit: 'held',
  usage_month: '2026-11',
  lease_until: 1000,
  ...over,
});

describe('the job store: claims and re-queues fenced by the attempt', () => {
  it('claims a pending job, or a rendering one past its lease, only at the attempt read', () => {
    const p = claimJobParams('t', job({ attempts: 1 }), 5000, 2000, 'at');
    expect(p.ConditionExpression).toBe(
      '#status IN (:from0, :from1) AND #attempts = :attempts AND (#status = :from0 OR lease_until < :now)',
    );
    expect(p.ExpressionAttributeValues).toMatchObject({
      ':from0': 'pending',
      ':from1': 'rendering',
      ':attempts': 1,
      ':now': 2000,
    });
    // Sets rendering, the next attempt, the unit held and the lease (with its index entry).
    const sets = Object.fromEntries(
      Object.entries(p.ExpressionAttributeNames ?? {})
        .filter(([k]) => k.startsWith('#f'))
        .map(([k, name]) => [name, p.ExpressionAttributeValues?.[`:v${k.slice(2)}`]]),
    );
    expect(sets).toMatchObject({ status: 'rendering', attempts: 2, unit: 'held', lease_until: 5000 });
  });

  it('re-queues at the attempt it is at: the holder after a retryable failure, the sweeper only past the lease', () => {
    const holder = requeueJobParams('t', job({ status: 'rendering', attempts: 2 }), 9000, 'at');
    expect(holder.ConditionExpression).toBe('#status IN (:from0, :from1) AND #attempts = :attempts');
    expect(holder.ExpressionAttributeValues).toMatchObject({ ':attempts': 2 });
    const sweeper = requeueJobParams('t', job({ status: 'rendering', attempts: 2 }), 9000, 'at', 3000);
    expect(sweeper.ConditionExpression).toBe(
      '#status IN (:from0, :from1) AND #attempts = :attempts AND lease_until < :now',
    );
    expect(sweeper.ExpressionAttributeValues).toMatchObject({ ':now': 3000 });
  });

  it('fences an async job’s renewals and transitions by its attempt; a sync job’s are as before', () => {
    expect(fenceOf(job({ attempts: 3 }))).toBe(3);
    expect(fenceOf(job({ mode: 'sync', attempts: 1 }))).toBeUndefined();
    expect(fenceOf(job({ mode: undefined, attempts: undefined }))).toBeUndefined();
    expect(renewJobParams('t', job({ attempts: 3 }), 1).ConditionExpression).toBe(
      '#status IN (:from0, :from1) AND #attempts = :attempts',
    );
    expect(renewJobParams('t', job({ mode: 'sync' }), 1).ConditionExpression).toBe(
      '#status IN (:from0, :from1)',
    );
    expect(transitionJobParams('t', job(), ['rendering'], { status: 'completed' }).ConditionExpression).toBe(
      '#status IN (:from0)',
    );
  });
});

describe('the sweeper’s decision for an async job past its lease', () => {
  it('re-queues one with attempts left, fails one without, and fails a sync one as before', () => {
    expect(decide(job({ attempts: 1 }), 2000, 3)).toEqual({ kind: 'requeue' });
    expect(decide(job({ status: 'rendering', attempts: 2 }), 2000, 3)).toEqual({ kind: 'requeue' });
    expect(decide(job({ status: 'rendering', attempts: 3 }), 2000, 3)).toEqual({
      kind: 'interrupt',
      month: '2026-11',
    });
    expect(decide(job({ mode: 'sync' }), 2000, 3)).toEqual({ kind: 'interrupt', month: '2026-11' });
    // Still being accepted (its unit not yet held): failed, as a sync one would be.
    expect(decide(job({ unit: 'reserving' }), 2000, 3)).toEqual({ kind: 'interrupt', month: '2026-11' });
    // Without a render queue (maxAttempts 0): failed.
    expect(decide(job(), 2000)).toEqual({ kind: 'interrupt', month: '2026-11' });
    expect(decide(job({ lease_until: 5000 }), 2000, 3)).toEqual({ kind: 'skip' });
  });
});

describe('SQS and S3 requests', () => {
  it('sends JSON with the fair-queue group and the delay, in batches of 10', () => {
    expect(sendMessageParams('https://q', { v: 1 }, { groupId: 'acct-1', delaySeconds: 5 })).toEqual({
      QueueUrl: 'https://q',
      MessageBody: '{"v":1}',
      MessageGroupId: 'acct-1',
      DelaySeconds: 5,
    });
    expect(sendMessageParams('https://q', 'x')).toEqual({ QueueUrl: 'https://q', MessageBody: '"x"' });
    const batches = sendMessageBatchParams(
      'https://q',
      Array.from({ length: 23 }, (_, i) => i),
      { groupId: 'g' },
    );
    expect(batches.map((b) => b.Entries?.length)).toEqual([10, 10, 3]);
    expect(batches[2]?.Entries?.[2]).toEqual({ Id: '2', MessageBody: '22', MessageGroupId: 'g' });
    expect(changeVisibilityParams('https://q', 'r', 20)).toEqual({
      QueueUrl: 'https://q',
      ReceiptHandle: 'r',
      VisibilityTimeout: 20,
    });
  });

  it('keeps orders under orders/{account}/{job}.json', () => {
    const order: StoredOrder = {
      v: 1,
      field: 'html',
      template: { source: '<p>{{ a }}</p>', variables: '{"a":1.0}', header: null, footer: null },
      options: {
        pdf: {
          format: 'A4',
          landscape: false,
          printBackground: true,
          margins: { top: 0, right: 0, bottom: 0, left: 0 },
        },
        pageLoad: { waitUntil: 'load', timeoutMs: 30_000, waitForSelector: null },
      },
      offline: false,
    };
    const put = putOrderParams('b', 'acct-1', 'job_1', order);
    expect(put).toMatchObject({
      Bucket: 'b',
      Key: 'orders/acct-1/job_1.json',
      ContentType: 'application/json',
    });
    // The variables stay text: `1.0` survives the trip.
    expect(JSON.parse(String(put.Body)).template.variables).toBe('{"a":1.0}');
    expect(getOrderParams('b', 'acct-1', 'job_1')).toEqual({ Bucket: 'b', Key: 'orders/acct-1/job_1.json' });
    expect(deleteOrderParams('b', 'acct-1', 'job_1')).toEqual({
      Bucket: 'b',
      Key: 'orders/acct-1/job_1.json',
    });
    // A completed job's kept order sits beside its PDF, under pdf/: the PDFs' lifecycle rule deletes both.
    expect(putOrderParams('b', 'acct-1', 'job_1', order, keptOrderObjectKey).Key).toBe(
      'pdf/acct-1/job_1.order.json',
    );
  });
});

describe('messages, preferences and backoff', () => {
  it('writes and reads the render message; anything else is not one', () => {
    const m = renderMessage(job());
    expect(m).toEqual({ v: 1, account_id: 'acct-1', job_id: 'job_01JBQ5Y8S1W8M3ZT6YDV1KQ0XE' });
    expect(parseRenderMessage(JSON.stringify(m))).toEqual(m);
    expect(parseRenderMessage('{"v":2,"account_id":"a","job_id":"j"}')).toBeUndefined();
    expect(parseRenderMessage('not json')).toBeUndefined();
    expect(parseRenderMessage('{"v":1,"account_id":"a"}')).toBeUndefined();
  });

  it('reads Prefer: respond-async among other preferences, in any case, with parameters', () => {
    expect(prefersAsync('respond-async')).toBe(true);
    expect(prefersAsync('return=minimal, Respond-Async; x=1, wait=10')).toBe(true);
    expect(prefersAsync('wait=10')).toBe(false);
    expect(prefersAsync('respond-asynchronously')).toBe(false);
    expect(prefersAsync(undefined)).toBe(false);
  });

  it('backs off base × 2^(attempt - 1), at most SQS’s 900 s', () => {
    expect([1, 2, 3, 4].map((n) => retryDelaySeconds(10, n))).toEqual([10, 20, 40, 80]);
    expect(retryDelaySeconds(10, 10)).toBe(900);
    expect(retryDelaySeconds(0, 3)).toBe(0);
  });
});
