/**
 * The DynamoDB adapters' requests, built by pure `*Params()` functions: checked here without AWS
 * (no client, no network); test/integration/stores.test.ts sends them to dynalite.
 */
import { describe, expect, it } from 'vitest';
import {
  createAccountParams,
  findAccountsByEmailParams,
  getAccountParams,
  setAccountEmailParams,
  setAccountPlanParams,
} from '../../functions/adapters/dynamodb/accounts.js';
import {
  claimIdempotencyParams,
  finishIdempotencyParams,
  getIdempotencyParams,
  releaseIdempotencyParams,
} from '../../functions/adapters/dynamodb/idempotency.js';
import {
  createJobParams,
  getJobParams,
  listJobsParams,
  transitionJobParams,
} from '../../functions/adapters/dynamodb/jobs.js';
import {
  accountKey,
  idempotencyKey,
  jobKey,
  rateWindowKey,
  usageKey,
} from '../../functions/adapters/dynamodb/keys.js';
import {
  getMonthUsageParams,
  getRateWindowParams,
  hitRateWindowParams,
  recordRenderParams,
  releaseRenderParams,
  reserveRenderParams,
} from '../../functions/adapters/dynamodb/usage.js';
import type { Job } from '../../functions/domain/jobs.js';

const TABLE = 'pdf-table';
const now = new Date('2026-11-21T10:00:30.000Z');

const job: Job = {
  id: 'job_01JD0000000000000000000000',
  account_id: 'acc_1',
  status: 'pending',
  template_id: null,
  template_version: null,
  object_key: 'pdf/acc_1/job_01JD0000000000000000000000.pdf',
  file_size_bytes: null,
  page_count: null,
  render_duration_ms: null,
  error: null,
  diagnostics: null,
  created_at: now.toISOString(),
  updated_at: now.toISOString(),
  completed_at: null,
};

describe('job requests', () => {
  it('creates a job tagged with its entity, only where no item is', () => {
    const params = createJobParams(TABLE, job);
    expect(params).toMatchObject({
      TableName: TABLE,
      Item: { ...jobKey('acc_1', job.id), type: 'job', id: job.id, status: 'pending' },
      ConditionExpression: 'attribute_not_exists(PK)',
    });
  });

  it('reads one job by its key, and lists an account newest first', () => {
    expect(getJobParams(TABLE, 'acc_1', job.id)).toEqual({ TableName: TABLE, Key: jobKey('acc_1', job.id) });
    expect(listJobsParams(TABLE, 'acc_1')).toMatchObject({
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
      ExpressionAttributeValues: { ':pk': 'ACCOUNT#acc_1', ':prefix': 'JOB#' },
      ScanIndexForward: false,
    });
  });

  it('moves a job only from the states it may leave, and answers the new item', () => {
    const params = transitionJobParams(TABLE, job, ['pending', 'rendering'], {
      status: 'failed',
      updated_at: 'then',
    });
    expect(params).toEqual({
      TableName: TABLE,
      Key: jobKey('acc_1', job.id),
      UpdateExpression: 'SET #f0 = :v0, #f1 = :v1',
      ConditionExpression: '#status IN (:from0, :from1)',
      ExpressionAttributeNames: { '#status': 'status', '#f0': 'status', '#f1': 'updated_at' },
      ExpressionAttributeValues: {
        ':v0': 'failed',
        ':v1': 'then',
        ':from0': 'pending',
        ':from1': 'rendering',
      },
      ReturnValues: 'ALL_NEW',
    });
  });
});

describe('idempotency requests', () => {
  it('claims a key for a lease: absent, expired, or a dead claim of the same body', () => {
    const params = claimIdempotencyParams(TABLE, {
      accountId: 'acc_1',
      key: 'k',
      hash: 'h',
      now,
      leaseMs: 5000,
    });
    expect(params.Item).toEqual({
      ...idempotencyKey('acc_1', 'k'),
      type: 'idempotency',
      state: 'in_progress',
      body_hash: 'h',
      lease_until: now.getTime() + 5000,
      expires_at: Math.floor(now.getTime() / 1000) + 24 * 3600,
    });
    expect(params.ConditionExpression).toBe(
      'attribute_not_exists(PK) OR #ttl < :now OR (#state = :progress AND lease_until < :nowMs AND body_hash = :hash)',
    );
    expect(params.ExpressionAttributeValues).toEqual({
      ':now': Math.floor(now.getTime() / 1000),
      ':nowMs': now.getTime(),
      ':progress': 'in_progress',
      ':hash': 'h',
    });
  });

  it('reads consistently, finishes with the answer, and releases by key', () => {
    const key = idempotencyKey('acc_1', 'k');
    expect(getIdempotencyParams(TABLE, 'acc_1', 'k')).toEqual({
      TableName: TABLE,
      Key: key,
      ConsistentRead: true,
    });
    const answer = { job_id: 'job_x', error: null };
    expect(finishIdempotencyParams(TABLE, 'acc_1', 'k', answer)).toMatchObject({
      Key: key,
      UpdateExpression: 'SET #state = :done, answer = :answer REMOVE lease_until',
      ExpressionAttributeValues: { ':done': 'done', ':answer': answer },
    });
    expect(releaseIdempotencyParams(TABLE, 'acc_1', 'k')).toEqual({ TableName: TABLE, Key: key });
  });
});

describe('usage requests', () => {
  it('counts a request in the minute it falls in, up to the limit, and lets the window expire', () => {
    const minute = Math.floor(now.getTime() / 60_000);
    const params = hitRateWindowParams(TABLE, { accountId: 'acc_1', now, limit: 10 });
    expect(params).toMatchObject({
      Key: rateWindowKey('acc_1', minute),
      UpdateExpression: 'ADD #count :one SET #type = :type, #ttl = :expires',
      ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
      ExpressionAttributeValues: {
        ':one': 1,
        ':limit': 10,
        ':type': 'rate_window',
        ':expires': Math.floor(now.getTime() / 1000) + 180,
      },
    });
    expect(getRateWindowParams(TABLE, 'acc_1', minute)).toEqual({
      TableName: TABLE,
      Key: rateWindowKey('acc_1', minute),
      ConsistentRead: true,
    });
  });

  it("holds, gives back and records a month's units on that month's item", () => {
    const key = usageKey('acc_1', '2026-11');
    expect(reserveRenderParams(TABLE, { accountId: 'acc_1', month: '2026-11', limit: 100 })).toMatchObject({
      Key: key,
      ConditionExpression: 'attribute_not_exists(renders_used) OR renders_used < :limit',
      ExpressionAttributeValues: { ':one': 1, ':limit': 100, ':type': 'usage' },
    });
    expect(releaseRenderParams(TABLE, 'acc_1', '2026-11')).toMatchObject({
      Key: key,
      ExpressionAttributeValues: { ':minusOne': -1 },
    });
    expect(
      recordRenderParams(TABLE, { accountId: 'acc_1', month: '2026-11', pdfBytes: 2048, renderMs: 300 }),
    ).toMatchObject({ Key: key, ExpressionAttributeValues: { ':bytes': 2048, ':ms': 300 } });
    expect(getMonthUsageParams(TABLE, 'acc_1', '2026-11')).toEqual({
      TableName: TABLE,
      Key: key,
      ConsistentRead: true,
    });
  });
});

describe('account requests', () => {
  const account = { id: 'acc_1', email: 'Ada@Example.com', plan: 'free', created_at: now.toISOString() };

  it('creates an account findable by its lower-cased email, only where no item is', () => {
    expect(createAccountParams(TABLE, account)).toEqual({
      TableName: TABLE,
      Item: {
        ...accountKey('acc_1'),
        type: 'account',
        ...account,
        GSI1PK: 'EMAIL#ada@example.com',
        GSI1SK: 'ACCOUNT#acc_1',
      },
      ConditionExpression: 'attribute_not_exists(PK)',
    });
    expect(createAccountParams(TABLE, { ...account, email: null }).Item).not.toHaveProperty('GSI1PK');
  });

  it('reads consistently, moves email and index together, and sets a plan on an existing account only', () => {
    expect(getAccountParams(TABLE, 'acc_1')).toEqual({
      TableName: TABLE,
      Key: accountKey('acc_1'),
      ConsistentRead: true,
    });
    expect(setAccountEmailParams(TABLE, 'acc_1', 'b@example.com')).toMatchObject({
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: {
        ':email': 'b@example.com',
        ':gpk': 'EMAIL#b@example.com',
        ':gsk': 'ACCOUNT#acc_1',
      },
      ReturnValues: 'ALL_NEW',
    });
    expect(setAccountPlanParams(TABLE, 'acc_1', 'pro')).toMatchObject({
      ConditionExpression: 'attribute_exists(PK) AND #type = :type',
      ExpressionAttributeValues: { ':plan': 'pro', ':type': 'account' },
      ReturnValues: 'ALL_OLD',
    });
    expect(findAccountsByEmailParams(TABLE, ' ADA@example.com ')).toMatchObject({
      IndexName: 'GSI1',
      ExpressionAttributeValues: { ':gpk': 'EMAIL#ada@example.com' },
    });
  });
});
