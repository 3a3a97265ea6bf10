/**
 * Batches without AWS: the request's parse (every item's variables as JSON sent them, problems
 * named `items[i]...`) and the batch store's requests (a job counted once, a batch completed once,
 * its jobs listed in item order from its index).
 */
import { describe, expect, it } from 'vitest';
import {
  claimItemKeyParams,
  releaseUnitsParams,
  reserveUnitsParams,
} from '../../functions/adapters/dynamodb/batch-writes.js';
import {
  batchJobsParams,
  completeBatchParams,
  countEndedParams,
  getBatchCountsParams,
} from '../../functions/adapters/dynamodb/batches.js';
import { batchJobIndexKey } from '../../functions/adapters/dynamodb/keys.js';
import { createBatchSchema, parseCreateBatch } from '../../functions/batches/request.js';
import { checkItemKeys, itemBodyHash } from '../../functions/domain/batches/batch-acceptance.js';
import { ServiceError } from '../../functions/domain/common/errors.js';
import { parseTemplateData, stringifyTemplateData } from '../../functions/templating/index.js';

const schema = createBatchSchema({ maxInlineHtmlBytes: 1000, maxVariablesBytes: 200 });
const parse = (text: string) => parseCreateBatch(JSON.parse(text), schema, {}, text);

const rejection = (text: string): ServiceError => {
  try {
    parse(text);
  } catch (e) {
    if (e instanceof ServiceError) return e;
    throw e;
  }
  throw new Error(`expected ${text} to be rejected`);
};

describe('POST /v1/batches body', () => {
  it("reads each item's variables as JSON sent them, and its own document information", () => {
    const command = parse(
      '{"html":"<p>{{ a }}</p>","metadata":{"author":"B"},"items":[{"variables":{"2":1,"a":10.0,"big":12345678901234567890}},{"metadata":{"title":"T"}},{"variables":null}]}',
    );
    expect(command.source).toEqual({
      kind: 'inline',
      html: '<p>{{ a }}</p>',
      headerHtml: null,
      footerHtml: null,
    });
    expect(command.options).toEqual({ metadata: { author: 'B' } });
    expect(command.items.map((i) => stringifyTemplateData(i.variables))).toEqual([
      '{"2":1,"a":10.0,"big":12345678901234567890}',
      '{}',
      '{}',
    ]);
    expect(command.items[1]?.metadata).toEqual({ title: 'T' });
    expect(command.webhookId).toBeNull();
  });

  it('takes 1 to 1000 items, and names an item by its index', () => {
    expect(rejection('{"html":"x","items":[]}')).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ field: 'items' }],
    });
    expect(rejection(`{"html":"x","items":[${Array(1001).fill('{}').join(',')}]}`).code).toBe(
      'VALIDATION_ERROR',
    );
    expect(rejection('{"html":"x","items":[{},{"variables":[1]}]}')).toMatchObject({
      code: 'INVALID_PDF_OPTIONS',
      message: 'items[1].variables must be an object',
      details: [{ field: 'items[1].variables' }],
    });
    expect(rejection('{"html":"x","items":[{"colour":1}]}').details).toEqual([
      { field: 'items[0].colour', issue: 'is not a known field' },
    ]);
    expect(rejection('{"items":[{}]}').code).toBe('INVALID_PDF_OPTIONS');
    expect(rejection('{"html":"x","variables":{},"items":[{}]}').details?.[0]?.field).toBe('variables');
  });
});

describe('batch store requests', () => {
  it('counts a job once: its id joins the set in the same conditional write', () => {
    const params = countEndedParams('t', {
      accountId: 'a',
      batchId: 'bat_1',
      jobId: 'job_1',
      how: 'failed',
      at: 'now',
    });
    expect(params).toMatchObject({
      Key: { PK: 'ACCOUNT#a', SK: 'BATCH#bat_1' },
      UpdateExpression: 'ADD #count :one, #ended :job SET updated_at = :at',
      ConditionExpression: 'attribute_exists(PK) AND NOT contains(#ended, :jobId)',
      ExpressionAttributeNames: { '#count': 'failed', '#ended': 'ended_jobs' },
    });
    // Its answer is read back without the set of counted jobs (up to 1,000 ids).
    expect(getBatchCountsParams('t', 'a', 'bat_1').ProjectionExpression).not.toContain('ended');
    expect(completeBatchParams('t', { account_id: 'a', id: 'bat_1' }, 'now')).toMatchObject({
      ConditionExpression: '#status = :processing',
      ExpressionAttributeValues: { ':completed': 'completed', ':processing': 'processing' },
    });
  });

  it("lists a batch's jobs from its own index partition, in job id (= item) order", () => {
    expect(batchJobIndexKey('a', 'bat_1', 'job_1')).toEqual({ GSI2PK: 'BATCH#a#bat_1', GSI2SK: 'JOB#job_1' });
    expect(batchJobsParams('t', 'a', 'bat_1')).toMatchObject({
      IndexName: 'GSI2',
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeValues: { ':pk': 'BATCH#a#bat_1' },
    });
    expect(batchJobsParams('t', 'a', 'bat_1').ScanIndexForward).toBeUndefined();
  });
});

describe('batch acceptance', () => {
  it("holds every job's unit in one write, refused whole past the quota, and knows its own write by the first job", () => {
    const params = reserveUnitsParams('t', {
      accountId: 'a',
      month: '2026-11',
      limit: 10,
      jobIds: ['job_1', 'job_2'],
    });
    expect(params).toMatchObject({
      Key: { PK: 'ACCOUNT#a', SK: 'USAGE#2026-11' },
      UpdateExpression: 'ADD renders_used :n, #queued :jobs SET #type = :type',
      ExpressionAttributeNames: { '#queued': 'queued_unit_holders', '#holders': 'unit_holders' },
      ExpressionAttributeValues: {
        ':n': 2,
        ':most': 8,
        ':jobs': new Set(['job_1', 'job_2']),
        ':first': 'job_1',
      },
    });
    expect(params.ConditionExpression).toContain('renders_used <= :most');
    expect(params.ConditionExpression).toContain('NOT contains(#queued, :first)');
    expect(
      releaseUnitsParams('t', { accountId: 'a', month: '2026-11', jobIds: ['job_1', 'job_2'] }),
    ).toMatchObject({
      UpdateExpression: 'ADD renders_used :minus DELETE #queued :jobs',
      ConditionExpression: 'contains(#queued, :first)',
      ExpressionAttributeValues: { ':minus': -2 },
    });
  });

  it('claims an item key only when no live record has it, or the live one names the job it replaces', () => {
    const now = new Date('2026-11-25T00:00:00Z');
    const record = { bodyHash: 'h', jobId: 'job_2', batchId: 'bat_1' };
    const fresh = claimItemKeyParams('t', { accountId: 'a', key: 'k', record, now });
    expect(fresh.ConditionExpression).toBe('attribute_not_exists(PK) OR #ttl < :now');
    expect(fresh.Item).toMatchObject({ body_hash: 'h', job_id: 'job_2', batch_id: 'bat_1' });
    expect(fresh.Item?.SK).toMatch(/^BATCH_ITEM_KEY#[0-9a-f]{64}$/);
    const again = claimItemKeyParams('t', { accountId: 'a', key: 'k', record, replacing: 'job_1', now });
    expect(again.ConditionExpression).toBe('attribute_not_exists(PK) OR #ttl < :now OR job_id = :replacing');
    expect(again.ExpressionAttributeValues).toMatchObject({ ':replacing': 'job_1' });
  });

  it("an item key stands for the item's render: template, options in any key order, metadata (its own, else the batch's), variables as sent", () => {
    const source = { kind: 'inline', html: '<p>{{ n }}</p>', headerHtml: null, footerHtml: null } as const;
    const vars = (text: string) => parseTemplateData(text);
    const hash = (options: object, item: object) =>
      itemBodyHash(source, options, { variables: vars('{"n":1}'), ...item });
    const base = hash({ format: 'A4', landscape: true }, {});
    expect(hash({ landscape: true, format: 'A4' }, {})).toBe(base);
    expect(hash({ format: 'A5', landscape: true }, {})).not.toBe(base);
    expect(hash({ format: 'A4', landscape: true, metadata: { title: 'T' } }, {})).toBe(
      hash({ format: 'A4', landscape: true }, { metadata: { title: 'T' } }),
    );
    expect(itemBodyHash(source, {}, { variables: vars('{"n":1.0}') })).not.toBe(
      itemBodyHash(source, {}, { variables: vars('{"n":1}') }),
    );
  });

  it('an item key is the header format, once per batch', () => {
    expect(() => checkItemKeys([{ variables: parseTemplateData('{}'), idempotencyKey: 'a' }])).not.toThrow();
    const twice = () =>
      checkItemKeys([
        { variables: parseTemplateData('{}'), idempotencyKey: 'a' },
        { variables: parseTemplateData('{}') },
        { variables: parseTemplateData('{}'), idempotencyKey: 'a' },
      ]);
    expect(twice).toThrow(/items\[2\]\.idempotency_key repeats the idempotency_key of items\[0\]/);
    expect(rejection('{"html":"x","items":[{"idempotency_key":""}]}')).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [expect.objectContaining({ field: 'items[0].idempotency_key' })],
    });
  });
});
