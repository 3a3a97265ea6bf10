/**
 * A batch's acceptance in wide writes (domain/batch-acceptance.ts): 1,000 items accepted whole,
 * their units held before the 202 (one write for all), their jobs listed in item order; a batch
 * the quota cannot cover refused whole with nothing held; two requests accepting the same new item
 * key at once render and charge it once. A stack of its own: the 1,000 renders it starts are left
 * to it, not to the shared stack.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { Json } from '../helpers/local-stack.js';
import { useLocalStack } from '../helpers/local-stack.js';

const local = useLocalStack({
  env: {
    ASYNC_CONCURRENCY: '1',
    PLANS: JSON.stringify({ free: { monthlyRenders: 1002, rendersPerMinute: 1000, concurrentRenders: 2 } }),
  },
});

describe('batch acceptance', () => {
  it('1,000 items are accepted whole, their units held before the 202 and their jobs in item order; the quota then refuses the next batch with nothing held', {
    timeout: 180_000,
  }, async () => {
    const token = await local.sessionToken();
    const html = '<p>{{ n }}</p>';
    const small = Date.now();
    const one = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: { html, items: [{ variables: { n: -1 } }] },
    });
    const oneMs = Date.now() - small;
    expect(one.status, one.text).toBe(202);

    const started = Date.now();
    const res = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: { html, items: Array.from({ length: 1000 }, (_, n) => ({ variables: { n } })) },
    });
    const thousandMs = Date.now() - started;
    console.info(`batch acceptance: 1 item ${oneMs} ms, 1,000 items ${thousandMs} ms`);
    expect(res.status, res.text).toBe(202);
    expect(res.json).toMatchObject({ status: 'processing', total: 1000 });
    // Every unit held up front (the 1-item batch's too).
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(1001);

    const ids: string[] = [];
    for (let offset = 0; offset < 1000; offset += 100) {
      const page = await local.api(`/v1/batches/${res.json.id}/jobs?limit=100&offset=${offset}`, { token });
      expect(page.status, page.text).toBe(200);
      ids.push(...page.json.map((j: Json) => j.id));
      for (const job of page.json) expect(job).toMatchObject({ mode: 'async', batch_id: res.json.id });
    }
    expect(new Set(ids).size).toBe(1000);
    expect([...ids].sort()).toEqual(ids);

    // One unit left: a batch of two is refused whole.
    const over = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: { html, items: [{ variables: { n: 'a' } }, { variables: { n: 'b' } }] },
    });
    expect(over.status, over.text).toBe(429);
    expect(over.json.error.code).toBe('PLAN_QUOTA_EXCEEDED');
    expect(over.json.error.message).toContain(
      '2 items but only 1 of the monthly quota of 1002 renders remain',
    );
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(1001);
    expect((await local.api('/v1/batches', { token })).json).toHaveLength(2);
  });

  it('two requests accepting the same new item key at once: the item is rendered and charged once', {
    timeout: 180_000,
  }, async () => {
    const token = await local.sessionToken();
    const body = { html: '<p>{{ n }}</p>', items: [{ variables: { n: 1 }, idempotency_key: 'at-once' }] };
    const answers = await Promise.all(
      [1, 2].map(() => local.api('/v1/batches', { method: 'POST', token, body })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses, answers.map((a) => a.text).join('\n')).toContain(202);
    for (const a of answers) {
      if (a.status !== 202) {
        expect(a.status, a.text).toBe(503);
        expect(a.json.error.code).toBe('SERVICE_BUSY');
      }
    }
    const accepted = answers.filter((a) => a.status === 202);
    const jobIds = new Set<string>();
    for (const a of accepted) {
      for (;;) {
        const batch = (await local.api(`/v1/batches/${a.json.id}`, { token })).json;
        if (batch.status === 'completed') break;
        await sleep(250);
      }
      for (const job of (await local.api(`/v1/batches/${a.json.id}/jobs`, { token })).json)
        jobIds.add(job.id);
    }
    expect(jobIds.size).toBe(1);
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(1);
  });
});
