/**
 * A batch holds every unit it could render before its 202, keyed items or not, on a fresh month as
 * on any other (issue 38: on a plan of 10 with nothing used yet, 30 keyed items were accepted and
 * rendered, 30 of 10, because the month's first write passed its condition whatever it added).
 * The boundaries, on a plan of two renders a month, each account new (its month has no usage yet):
 * one over, exactly the remainder, after one render, and keys that replay half of a batch.
 */
import { describe, expect, it } from 'vitest';
import { waitForBatch } from '../helpers/async-jobs.js';
import { useLocalStack } from '../helpers/local-stack.js';

const local = useLocalStack({ plan: 'two-a-month' });

const html = '<p>{{ n }}</p>';
const keyed = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ variables: { n: i }, idempotency_key: `${prefix}-${i}` }));

const batch = (token: string, items: unknown[]) =>
  local.api('/v1/batches', { method: 'POST', token, body: { html, items } });

const rendersUsed = async (token: string): Promise<number> =>
  (await local.api('/v1/usage', { token })).json.renders_used;

describe('a batch against the monthly quota', () => {
  it('on a fresh month, keyed items one over the quota are refused whole, nothing held or rendered', async () => {
    const token = await local.sessionToken();
    const over = await batch(token, keyed('over', 3));
    expect(over.status, over.text).toBe(429);
    expect(over.json.error.code).toBe('PLAN_QUOTA_EXCEEDED');
    expect(await rendersUsed(token)).toBe(0);
    expect((await local.api('/v1/batches', { token })).json).toEqual([]);
    expect((await local.api('/v1/pdf', { token })).json).toEqual([]);
    // Without keys the same.
    const unkeyed = await batch(token, [
      { variables: { n: 1 } },
      { variables: { n: 2 } },
      { variables: { n: 3 } },
    ]);
    expect(unkeyed.status, unkeyed.text).toBe(429);
    expect(await rendersUsed(token)).toBe(0);
  });

  it('on a fresh month, exactly the remainder is accepted and rendered; then nothing more', async () => {
    const token = await local.sessionToken();
    const res = await batch(token, keyed('exact', 2));
    expect(res.status, res.text).toBe(202);
    expect(await rendersUsed(token)).toBe(2);
    const done = await waitForBatch(local.api, token, res.json.id);
    expect(done).toMatchObject({ counts: { completed: 2, failed: 0 } });
    const more = await batch(token, keyed('more', 1));
    expect(more.status, more.text).toBe(429);
    expect(await rendersUsed(token)).toBe(2);
  });

  it('after one render, a batch of two keyed items is refused and one is accepted', async () => {
    const token = await local.sessionToken();
    const one = await local.api('/v1/pdf', { method: 'POST', token, body: { html: '<p>one</p>' } });
    expect(one.status, one.text).toBe(201);
    const two = await batch(token, keyed('after-one', 2));
    expect(two.status, two.text).toBe(429);
    expect(await rendersUsed(token)).toBe(1);
    const single = await batch(token, keyed('after-one', 1));
    expect(single.status, single.text).toBe(202);
    expect(await rendersUsed(token)).toBe(2);
  });

  it('keys that replay an earlier item reserve nothing; the new items beside them reserve one each', async () => {
    const token = await local.sessionToken();
    const first = await batch(token, keyed('half', 2));
    expect(first.status, first.text).toBe(202);
    await waitForBatch(local.api, token, first.json.id);
    expect(await rendersUsed(token)).toBe(2);
    // Half replays (the same two items), half is new: the new half cannot be covered.
    const mixed = await batch(token, [...keyed('half', 2), ...keyed('half-new', 2)]);
    expect(mixed.status, mixed.text).toBe(429);
    expect(await rendersUsed(token)).toBe(2);
    // Only the replays: accepted, the earlier jobs again, nothing charged.
    const replay = await batch(token, keyed('half', 2));
    expect(replay.status, replay.text).toBe(202);
    const done = await waitForBatch(local.api, token, replay.json.id);
    expect(done).toMatchObject({ counts: { completed: 2, failed: 0 } });
    expect(await rendersUsed(token)).toBe(2);
  });
});
