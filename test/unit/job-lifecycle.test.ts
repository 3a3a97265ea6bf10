/**
 * The pure parts of the job lifecycle (issue 19), without AWS: how a job counts when its month is
 * reconciled, what the sweeper does with an expired index entry, and the requests that lease,
 * fail and settle jobs.
 */
import { describe, expect, it } from 'vitest';
import {
  cancelJobParams,
  failExpiredJobParams,
  monthJobsParams,
  openBeforeParams,
  renewJobParams,
  settledJobParams,
} from '../../functions/adapters/dynamodb/jobs.js';
import {
  jobKey,
  leaseSortKey,
  openJobIndexKey,
  parseOpenJobSortKey,
} from '../../functions/adapters/dynamodb/keys.js';
import {
  releaseQueuedParams,
  releaseRenderParams,
  reserveAsyncParams,
  reserveQueuedParams,
  setUnitsParams,
} from '../../functions/adapters/dynamodb/usage.js';
import { type CountedJob, countJob, reconcileCounts } from '../../functions/domain/accounts/usage.js';
import type { Job } from '../../functions/domain/jobs/jobs.js';
import { decide } from '../../functions/domain/jobs/sweeper.js';

const TABLE = 't';
const NOW = 1_764_064_800_000;

describe('reconciling a month from its jobs', () => {
  const live = NOW + 1;
  const past = NOW - 1;
  it.each<[CountedJob, ReturnType<typeof countJob>]>([
    [{ status: 'completed' }, 'completed'],
    [{ status: 'rendering', unit: 'held', lease_until: live }, 'running'],
    [{ status: 'pending', unit: 'held', lease_until: live }, 'running'],
    [{ status: 'pending', unit: 'reserving', lease_until: live }, 'unsure'],
    [{ status: 'pending', unit: 'reserving', lease_until: past }, 'expired'],
    [{ status: 'rendering', unit: 'held', lease_until: past }, 'expired'],
    [{ status: 'failed', unit: 'refunding', lease_until: live }, 'unsure'],
    [{ status: 'failed', unit: 'refunding', lease_until: past }, 'expired'],
    [{ status: 'failed' }, 'ended'],
  ])('%o counts as %s', (job, count) => {
    expect(countJob(job, NOW)).toBe(count);
  });

  it('holds completed and running units; running ones are in flight; expired ones hold nothing', () => {
    expect(
      reconcileCounts(
        [
          { status: 'completed' },
          { status: 'completed' },
          { id: 'job_live', status: 'rendering', unit: 'held', lease_until: NOW + 5 },
          { id: 'job_dead', status: 'rendering', unit: 'held', lease_until: NOW - 5 },
          { status: 'failed', unit: 'refunding', lease_until: NOW - 5 },
          { status: 'failed' },
        ],
        NOW,
      ),
    ).toEqual({
      counts: { rendersUsed: 3, inFlight: 1 },
      expired: 2,
      holders: ['job_live'],
      queuedHolders: [],
      asyncHolders: [],
    });
  });

  it("holds a batch item's unit apart: it is not a running render (reserveQueued)", () => {
    expect(
      reconcileCounts(
        [
          { id: 'job_sync', status: 'rendering', unit: 'held', lease_until: NOW + 5 },
          { id: 'job_item', status: 'pending', unit: 'held', lease_until: NOW + 5, batch_id: 'bat_1' },
          { status: 'completed', batch_id: 'bat_1' },
        ],
        NOW,
      ),
    ).toEqual({
      counts: { rendersUsed: 3, inFlight: 1 },
      expired: 0,
      holders: ['job_sync'],
      queuedHolders: ['job_item'],
      asyncHolders: [],
    });
    // An async render of its own is queued too, but counted against the queue depth (issue 37).
    expect(
      reconcileCounts(
        [{ id: 'job_async', status: 'pending', unit: 'held', lease_until: NOW + 5, mode: 'async' }],
        NOW,
      ),
    ).toMatchObject({ counts: { rendersUsed: 1, inFlight: 0 }, holders: [], asyncHolders: ['job_async'] });
    expect(
      reserveAsyncParams(TABLE, { accountId: 'a', month: '2026-11', limit: 5, depth: 20, jobId: 'job_1' }),
    ).toMatchObject({
      UpdateExpression: 'ADD renders_used :one, #async :job SET #type = :type',
      ConditionExpression:
        '(attribute_not_exists(renders_used) OR renders_used <= :most) AND (attribute_not_exists(#async) OR size(#async) <= :mostQueued) AND NOT contains(#async, :jobId) AND NOT contains(#holders, :jobId)',
      ExpressionAttributeValues: expect.objectContaining({ ':mostQueued': 19 }),
    });
    expect(
      reserveQueuedParams(TABLE, { accountId: 'a', month: '2026-11', limit: 5, jobId: 'job_1' }),
    ).toMatchObject({
      UpdateExpression: 'ADD renders_used :one, #queued :job SET #type = :type',
      ConditionExpression:
        '(attribute_not_exists(renders_used) OR renders_used <= :most) AND NOT contains(#queued, :jobId) AND NOT contains(#holders, :jobId)',
    });
    expect(releaseQueuedParams(TABLE, 'a', '2026-11', 'job_1').UpdateExpression).toBe(
      'ADD renders_used :minusOne DELETE #queued :job',
    );
    expect(
      setUnitsParams(TABLE, 'a', '2026-11', {}, { rendersUsed: 2, inFlight: 1 }, ['job_1'], ['job_2']),
    ).toMatchObject({
      UpdateExpression:
        'SET renders_used = :used, in_flight = :running, #type = :type, #holders = :holders, #queued = :queued REMOVE #async',
      ExpressionAttributeValues: { ':holders': new Set(['job_1']), ':queued': new Set(['job_2']) },
    });
  });

  it('waits while a live job may or may not be counted yet', () => {
    expect(reconcileCounts([{ status: 'pending', unit: 'reserving', lease_until: NOW + 5 }], NOW)).toBe(
      undefined,
    );
    expect(reconcileCounts([], NOW)).toEqual({
      counts: { rendersUsed: 0, inFlight: 0 },
      expired: 0,
      holders: [],
      queuedHolders: [],
      asyncHolders: [],
    });
  });

  it('sets the counters only if they still hold what was read (absent: never written)', () => {
    expect(
      setUnitsParams(
        TABLE,
        'a',
        '2026-11',
        { rendersUsed: 4, inFlight: undefined },
        { rendersUsed: 2, inFlight: 0 },
      ),
    ).toMatchObject({
      UpdateExpression:
        'SET renders_used = :used, in_flight = :running, #type = :type REMOVE #holders, #queued, #async',
      ConditionExpression: 'renders_used = :seenUsed AND attribute_not_exists(in_flight)',
      ExpressionAttributeValues: { ':used': 2, ':running': 0, ':seenUsed': 4 },
    });
    expect(releaseRenderParams(TABLE, 'a', '2026-11', 'job_1').UpdateExpression).toBe(
      'ADD renders_used :minusOne, in_flight :minusOne DELETE #holders :job',
    );
    // The running jobs are the month's holders again.
    expect(
      setUnitsParams(TABLE, 'a', '2026-11', {}, { rendersUsed: 3, inFlight: 2 }, ['job_1', 'job_2']),
    ).toMatchObject({
      UpdateExpression:
        'SET renders_used = :used, in_flight = :running, #type = :type, #holders = :holders REMOVE #queued, #async',
      ExpressionAttributeValues: { ':holders': new Set(['job_1', 'job_2']) },
    });
  });
});

describe('the sweeper’s decisions', () => {
  const job = (fields: Partial<Job>): Job =>
    ({ id: 'job_1', account_id: 'a', status: 'rendering', usage_month: '2026-11', ...fields }) as Job;

  it('skips an entry whose job is gone, settled, or renewed since', () => {
    expect(decide(undefined, NOW)).toEqual({ kind: 'skip' });
    expect(decide(job({ status: 'completed' }), NOW)).toEqual({ kind: 'skip' });
    expect(decide(job({ unit: 'held', lease_until: NOW + 1 }), NOW)).toEqual({ kind: 'skip' });
  });

  it('interrupts an open job past its lease, reconciles a failed one whose refund was not confirmed', () => {
    expect(decide(job({ unit: 'held', lease_until: NOW - 1 }), NOW)).toEqual({
      kind: 'interrupt',
      month: '2026-11',
    });
    expect(decide(job({ status: 'pending', unit: 'reserving', lease_until: NOW - 1 }), NOW)).toEqual({
      kind: 'interrupt',
      month: '2026-11',
    });
    expect(decide(job({ status: 'failed', unit: 'refunding', lease_until: NOW - 1 }), NOW)).toEqual({
      kind: 'reconcile',
      month: '2026-11',
    });
  });
});

describe('lease requests', () => {
  const ref = { account_id: 'a#b', id: 'job_01' };

  it('indexes an open job by its lease, in time order, and reads its account and job back', () => {
    const key = openJobIndexKey('a#b', 'job_01', 42);
    expect(key.GSI1PK).toMatch(/^OPEN_JOBS#[0-7]$/);
    expect(key.GSI1SK).toBe('000000000000042#a#b#job_01');
    expect(parseOpenJobSortKey(key.GSI1SK as string)).toEqual({ accountId: 'a#b', jobId: 'job_01' });
    expect(parseOpenJobSortKey('nonsense')).toBeUndefined();
    expect(leaseSortKey(9) < leaseSortKey(10)).toBe(true);
  });

  it('renews only an open job, moving its index entry with it', () => {
    const params = renewJobParams(TABLE, ref, NOW);
    expect(params.ConditionExpression).toBe('#status IN (:from0, :from1)');
    expect(params.ExpressionAttributeValues).toMatchObject({
      ':from0': 'pending',
      ':from1': 'rendering',
      ':v0': NOW,
      ':v1': openJobIndexKey('a#b', 'job_01', NOW).GSI1PK,
    });
  });

  it('fails a job for the sweeper only while it is open and its lease ran out (the fence)', () => {
    const params = failExpiredJobParams(TABLE, ref, NOW, 'at');
    expect(params.Key).toEqual(jobKey('a#b', 'job_01'));
    expect(params.ConditionExpression).toBe('(#status IN (:from0, :from1)) AND lease_until < :now');
    expect(params.ExpressionAttributeValues?.[':now']).toBe(NOW);
    expect(Object.values(params.ExpressionAttributeValues ?? {})).toContainEqual({
      code: 'PDF_RENDERING_INTERRUPTED',
      message: expect.stringContaining('given back'),
    });
  });

  it('lets only a failed or cancelled job leave the index', () => {
    expect(settledJobParams(TABLE, ref)).toMatchObject({
      UpdateExpression: 'REMOVE #r0, #r1, #r2, #r3',
      ConditionExpression: '#status IN (:failed, :cancelled)',
    });
  });

  it('cancels only a pending job, its unit refunding until it is settled (issue 37)', () => {
    const params = cancelJobParams(TABLE, ref, NOW + 1000, '2026-11-28T10:00:00.000Z');
    expect(params.ConditionExpression).toBe('#status IN (:from0)');
    expect(params.ExpressionAttributeValues).toMatchObject({ ':from0': 'pending' });
    expect(Object.values(params.ExpressionAttributeValues ?? {})).toEqual(
      expect.arrayContaining(['cancelled', 'refunding', NOW + 1000]),
    );
  });

  it('reads expired entries keys-only, and a month’s jobs consistently by their ULID range', () => {
    expect(openBeforeParams(TABLE, 3, NOW)).toMatchObject({
      IndexName: 'GSI1',
      ExpressionAttributeValues: { ':pk': 'OPEN_JOBS#3', ':before': leaseSortKey(NOW) },
    });
    const month = monthJobsParams(TABLE, 'a', '2026-11');
    expect(month.ConsistentRead).toBe(true);
    const { ':from': from = '', ':to': to = '' } = month.ExpressionAttributeValues as Record<string, string>;
    expect(from < 'JOB#job_01M7E81W00' && to > 'JOB#job_01M7E81W00').toBe(true);
  });
});
