/**
 * Per-item idempotency keys of POST /v1/batches (items[i].idempotency_key): an item whose key the
 * account used for the same item is that earlier job again, in the new batch at its place, neither
 * rendered nor charged again; the same key with another item is 422 IDEMPOTENCY_KEY_REUSED; a key
 * twice in one batch, or not in the Idempotency-Key header's format, is 422 VALIDATION_ERROR. Each
 * refusal holds nothing.
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { waitForBatch } from '../helpers/async-jobs.js';
import type { Json } from '../helpers/local-stack.js';
import { useLocalStack } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';
import { describeBound, type PaceBound, paceBound, since } from '../helpers/timing.js';

const local = useLocalStack();

const HTML = '<p>Invoice {{ number }}</p>';

describe('batch item idempotency keys', () => {
  it('a retried batch gives back the same jobs, neither rendered nor charged again; a later batch mixes earlier and new jobs in item order', async () => {
    const token = await local.sessionToken();
    const key = (n: number) => `invoice-${n}-${randomUUID()}`;
    const keys = [key(1), key(2), key(3)];
    const body = {
      html: HTML,
      items: keys.map((k, i) => ({ variables: { number: `K-${i}` }, idempotency_key: k })),
    };
    const first = await local.api('/v1/batches', { method: 'POST', token, body });
    expect(first.status, first.text).toBe(202);
    await waitForBatch(local.api, token, first.json.id);
    const firstJobs = (await local.api(`/v1/batches/${first.json.id}/jobs`, { token })).json;
    expect(firstJobs.map((j: Json) => j.status)).toEqual(['completed', 'completed', 'completed']);
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(3);

    // The same batch again: a batch of its own, whose items are the earlier jobs, complete at once.
    const again = await local.api('/v1/batches', { method: 'POST', token, body });
    expect(again.status, again.text).toBe(202);
    expect(again.json.id).not.toBe(first.json.id);
    expect(again.json).toMatchObject({
      status: 'completed',
      total: 3,
      counts: { pending: 0, rendering: 0, completed: 3, failed: 0, cancelled: 0 },
    });
    const againJobs = (await local.api(`/v1/batches/${again.json.id}/jobs`, { token })).json;
    expect(againJobs.map((j: Json) => j.id)).toEqual(firstJobs.map((j: Json) => j.id));
    expect(againJobs[0].download_url).toEqual(expect.any(String));
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(3);
    expect((await local.api('/v1/pdf?limit=100', { token })).json).toHaveLength(3);

    // Another batch: item 0 new (no key), item 1 an earlier key, item 2 a new key.
    const mixed = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: {
        html: HTML,
        items: [
          { variables: { number: 'M-0' } },
          { variables: { number: 'K-1' }, idempotency_key: keys[1] },
          { variables: { number: 'M-2' }, idempotency_key: key(4) },
        ],
      },
    });
    expect(mixed.status, mixed.text).toBe(202);
    expect(mixed.json.total).toBe(3);
    const done = await waitForBatch(local.api, token, mixed.json.id);
    expect(done.counts).toEqual({ pending: 0, rendering: 0, completed: 3, failed: 0, cancelled: 0 });
    const mixedJobs = (await local.api(`/v1/batches/${mixed.json.id}/jobs`, { token })).json;
    expect(mixedJobs).toHaveLength(3);
    expect(mixedJobs[1].id).toBe(firstJobs[1].id);
    expect(mixedJobs[0].id).not.toBe(firstJobs[0].id);
    const pdf = await readPdf(new Uint8Array(await (await fetch(mixedJobs[2].download_url)).arrayBuffer()));
    expect(pdf.text).toContain('Invoice M-2');
    // Pages of the listing keep item order across earlier and new jobs.
    const page = (await local.api(`/v1/batches/${mixed.json.id}/jobs?offset=1&limit=2`, { token })).json;
    expect(page.map((j: Json) => j.id)).toEqual([mixedJobs[1].id, mixedJobs[2].id]);
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(5);
  });

  it('a batch sent again while the first is still rendering waits for the same jobs and completes with them', async () => {
    const token = await local.sessionToken();
    const body = {
      html: HTML,
      items: [1, 2].map((n) => ({
        variables: { number: `W-${n}` },
        idempotency_key: `w-${n}-${randomUUID()}`,
      })),
    };
    const first = await local.api('/v1/batches', { method: 'POST', token, body });
    expect(first.status, first.text).toBe(202);
    const second = await local.api('/v1/batches', { method: 'POST', token, body });
    expect(second.status, second.text).toBe(202);
    expect(second.json.total).toBe(2);
    const started = performance.now();
    await waitForBatch(local.api, token, first.json.id);
    // The control: the first batch's own time, rendering the two jobs.
    const control = since(started);
    const done = await waitForBatch(local.api, token, second.json.id);
    // Counted as soon as a read finds them ended (their own batch counts them, not this one).
    const ms = since(started);
    const bound: PaceBound = { expectedMs: 0, slackMs: 25_000, controlMs: control, factor: 3 };
    expect(ms, describeBound(ms, bound)).toBeLessThan(paceBound(bound));
    expect(done.counts).toEqual({ pending: 0, rendering: 0, completed: 2, failed: 0, cancelled: 0 });
    const ids = async (id: string) =>
      (await local.api(`/v1/batches/${id}/jobs`, { token })).json.map((j: Json) => j.id);
    expect(await ids(second.json.id)).toEqual(await ids(first.json.id));
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(2);
  });

  it('a key used for another item (variables, metadata or the batch options) answers 422 IDEMPOTENCY_KEY_REUSED naming the item, with nothing held', async () => {
    const token = await local.sessionToken();
    const k = `reused-${randomUUID()}`;
    const first = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: { html: HTML, items: [{ variables: { number: 'R-1' }, idempotency_key: k }] },
    });
    expect(first.status, first.text).toBe(202);
    await waitForBatch(local.api, token, first.json.id);

    const others = [
      { html: HTML, items: [{ variables: {} }, { variables: { number: 'R-2' }, idempotency_key: k }] },
      {
        html: HTML,
        items: [
          { variables: {} },
          { variables: { number: 'R-1' }, idempotency_key: k, metadata: { title: 'T' } },
        ],
      },
      {
        html: HTML,
        format: 'A5',
        items: [{ variables: {} }, { variables: { number: 'R-1' }, idempotency_key: k }],
      },
    ];
    for (const body of others) {
      const res = await local.api('/v1/batches', {
        method: 'POST',
        token,
        body: {
          ...body,
          items: body.items.map((i) => ({ ...i, variables: { number: 'x', ...i.variables } })),
        },
      });
      expect(res.status, res.text).toBe(422);
      expect(res.json.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
      expect(res.json.error.details).toEqual([
        expect.objectContaining({ field: 'items[1].idempotency_key' }),
      ]);
    }
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(1);
    expect((await local.api('/v1/batches', { token })).json).toHaveLength(1);
    expect((await local.api('/v1/pdf', { token })).json).toHaveLength(1);
  });

  it('a key twice in one batch, or not 1-255 printable ASCII characters, answers 422 VALIDATION_ERROR naming the item, with nothing held', async () => {
    const token = await local.sessionToken();
    const twice = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: {
        html: HTML,
        items: [
          { variables: { number: 1 }, idempotency_key: 'same' },
          { variables: { number: 2 } },
          { variables: { number: 3 }, idempotency_key: 'same' },
        ],
      },
    });
    expect(twice.status, twice.text).toBe(422);
    expect(twice.json.error.code).toBe('VALIDATION_ERROR');
    expect(twice.json.error.details).toEqual([
      expect.objectContaining({
        field: 'items[2].idempotency_key',
        issue: expect.stringContaining('items[0]'),
      }),
    ]);

    for (const bad of ['', 'x'.repeat(256), 'naïve']) {
      const res = await local.api('/v1/batches', {
        method: 'POST',
        token,
        body: { html: HTML, items: [{ variables: { number: 1 }, idempotency_key: bad }] },
      });
      expect(res.status, res.text).toBe(422);
      expect(res.json.error.code).toBe('VALIDATION_ERROR');
      expect(res.json.error.details).toEqual([
        expect.objectContaining({ field: 'items[0].idempotency_key' }),
      ]);
    }
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(0);
    expect((await local.api('/v1/batches', { token })).json).toEqual([]);
  });
});
