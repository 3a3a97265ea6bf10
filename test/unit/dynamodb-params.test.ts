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
  createApiKeyRecordParams,
  createApiKeyRefParams,
  listApiKeyRefsParams,
  markApiKeyUsedParams,
  releaseApiKeySlotsParams,
  revokeApiKeyParams,
  takeApiKeySlotParams,
} from '../../functions/adapters/dynamodb/api-keys.js';
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
  apiKeyItemKey,
  apiKeyRefKey,
  apiKeySlotsKey,
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
import { type Job, jobRecordRetentionSeconds } from '../../functions/domain/jobs/jobs.js';

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
    const expiresAt = Math.floor(now.getTime() / 1000) + 60 * 86_400;
    const params = createJobParams(TABLE, job, expiresAt);
    expect(params).toMatchObject({
      TableName: TABLE,
      Item: { ...jobKey('acc_1', job.id), type: 'job', id: job.id, status: 'pending', expires_at: expiresAt },
      ConditionExpression: 'attribute_not_exists(PK)',
    });
  });

  it("keeps a job's record twice the PDF retention", () => {
    expect(jobRecordRetentionSeconds(30)).toBe(60 * 86_400);
  });

  it('reads one job by its key, and lists an account newest first', () => {
    expect(getJobParams(TABLE, 'acc_1', job.id)).toEqual({ TableName: TABLE, Key: jobKey('acc_1', job.id) });
    expect(listJobsParams(TABLE, 'acc_1', now)).toMatchObject({
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
      FilterExpression: 'attribute_not_exists(#ttl) OR #ttl > :now',
      ExpressionAttributeNames: { '#ttl': 'expires_at' },
      ExpressionAttributeValues: {
        ':pk': 'ACCOUNT#acc_1',
        ':prefix': 'JOB#',
        ':now': Math.floor(now.getTime() / 1000),
      },
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
      claimId: 'c1',
    });
    expect(params.Item).toEqual({
      ...idempotencyKey('acc_1', 'k'),
      type: 'idempotency',
      state: 'in_progress',
      body_hash: 'h',
      claim_id: 'c1',
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
      ConditionExpression: '(attribute_not_exists(#count) OR #count <= :most)',
      ExpressionAttributeValues: {
        ':one': 1,
        ':most': 9,
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
    expect(
      reserveRenderParams(TABLE, {
        accountId: 'acc_1',
        month: '2026-11',
        limit: 100,
        concurrent: 5,
        jobId: 'job_1',
      }),
    ).toMatchObject({
      Key: key,
      UpdateExpression: 'ADD renders_used :one, in_flight :one, #holders :job SET #type = :type',
      ConditionExpression:
        '(attribute_not_exists(renders_used) OR renders_used <= :most) AND (attribute_not_exists(in_flight) OR in_flight <= :mostRunning) AND NOT contains(#holders, :jobId)',
      ExpressionAttributeValues: {
        ':one': 1,
        ':most': 99,
        ':mostRunning': 4,
        ':type': 'usage',
        ':job': new Set(['job_1']),
        ':jobId': 'job_1',
      },
    });
    // A unit comes back, or its render is recorded, only from the job that holds it: once.
    expect(releaseRenderParams(TABLE, 'acc_1', '2026-11', 'job_1')).toMatchObject({
      Key: key,
      ConditionExpression: 'contains(#holders, :jobId)',
      ExpressionAttributeValues: { ':minusOne': -1, ':jobId': 'job_1' },
    });
    expect(
      recordRenderParams(TABLE, {
        accountId: 'acc_1',
        month: '2026-11',
        pdfBytes: 2048,
        renderMs: 300,
        jobId: 'job_1',
      }),
    ).toMatchObject({
      Key: key,
      ConditionExpression: 'contains(#holders, :jobId)',
      ExpressionAttributeValues: { ':bytes': 2048, ':ms': 300, ':jobId': 'job_1' },
    });
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

describe('API key requests', () => {
  const record = {
    id: 'key_1',
    prefix: 'pk_live_abcd',
    name: 'ci',
    created_at: now.toISOString(),
    last_used_at: null,
    revoked_at: null,
  };

  it('takes a slot only below the limit, and gives slots back by id', () => {
    expect(takeApiKeySlotParams(TABLE, 'acc_1', 'key_1', 25)).toMatchObject({
      Key: apiKeySlotsKey('acc_1'),
      ConditionExpression: '(attribute_not_exists(key_ids) OR size(key_ids) <= :most)',
      ExpressionAttributeValues: { ':id': new Set(['key_1']), ':most': 24, ':type': 'api_key_slots' },
    });
    // A limit of 0: no branch for an account with no slots yet, so the first is refused too.
    expect(takeApiKeySlotParams(TABLE, 'acc_1', 'key_1', 0).ConditionExpression).toBe(
      'size(key_ids) <= :most',
    );
    expect(releaseApiKeySlotsParams(TABLE, 'acc_1', ['key_1', 'key_2'])).toMatchObject({
      UpdateExpression: 'DELETE key_ids :ids',
      ExpressionAttributeValues: { ':ids': new Set(['key_1', 'key_2']) },
    });
  });

  it('writes the ref, then the record under the digest, each only where no item is', () => {
    expect(createApiKeyRefParams(TABLE, 'acc_1', { id: 'key_1', digest: 'd1' })).toEqual({
      TableName: TABLE,
      Item: { ...apiKeyRefKey('acc_1', 'key_1'), type: 'api_key_ref', id: 'key_1', digest: 'd1' },
      ConditionExpression: 'attribute_not_exists(PK)',
    });
    expect(createApiKeyRecordParams(TABLE, 'acc_1', 'd1', record).Item).toEqual({
      ...apiKeyItemKey('d1'),
      type: 'api_key',
      ...record,
      account_id: 'acc_1',
    });
  });

  it("lists refs newest first, marks use at most once a minute, and revokes only the owner's live key", () => {
    expect(listApiKeyRefsParams(TABLE, 'acc_1')).toMatchObject({
      ExpressionAttributeValues: { ':pk': 'ACCOUNT#acc_1', ':prefix': 'APIKEY#' },
      ScanIndexForward: false,
      ConsistentRead: true,
    });
    expect(markApiKeyUsedParams(TABLE, 'd1', now).ExpressionAttributeValues).toEqual({
      ':null': 'NULL',
      ':now': now.toISOString(),
      ':cutoff': new Date(now.getTime() - 60_000).toISOString(),
    });
    expect(revokeApiKeyParams(TABLE, 'acc_1', 'd1', now)).toMatchObject({
      Key: apiKeyItemKey('d1'),
      ConditionExpression:
        'attribute_exists(PK) AND account_id = :account AND (attribute_not_exists(revoked_at) OR attribute_type(revoked_at, :null))',
      ExpressionAttributeValues: { ':now': now.toISOString(), ':account': 'acc_1', ':null': 'NULL' },
      ReturnValues: 'ALL_NEW',
    });
  });
});
