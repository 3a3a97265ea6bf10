import { describe, expect, it } from 'vitest';
import { INVOICE_TEMPLATE, invoiceVariables } from '../bench/fixtures/invoice.js';
import { waitForBatch } from '../helpers/async-jobs.js';
import type { Json } from '../helpers/local-stack.js';
import { useLocalStack } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';

const local = useLocalStack();

describe('batches', () => {
  it('a batch of invoices on the free plan (2 renders at once) is accepted whole and completes, every job counted once', async () => {
    const token = await local.sessionToken();
    const items = Array.from({ length: 6 }, (_, i) => ({
      variables: {
        ...invoiceVariables(),
        invoice: { ...(invoiceVariables().invoice as object), number: `INV-B-${i}` },
      },
      ...(i === 0 ? { metadata: { title: 'First of the batch' } } : {}),
    }));
    const res = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: { html: INVOICE_TEMPLATE, metadata: { author: 'Batch test' }, items },
    });
    expect(res.status, res.text).toBe(202);
    expect(res.json).toMatchObject({ status: 'processing', total: 6, completed_at: null });
    expect(res.json.id).toMatch(/^bat_[0-9A-Z]{26}$/);
    const { pending, rendering, completed, failed } = res.json.counts;
    expect(pending + rendering + completed + failed).toBe(6);
    expect(res.json.links).toEqual({
      self: `/v1/batches/${res.json.id}`,
      jobs: `/v1/batches/${res.json.id}/jobs`,
    });

    const done = await waitForBatch(local.api, token, res.json.id);
    expect(done).toMatchObject({
      status: 'completed',
      total: 6,
      counts: { pending: 0, rendering: 0, completed: 6, failed: 0 },
    });
    expect(done.completed_at).not.toBeNull();

    const jobs = await local.api(`/v1/batches/${res.json.id}/jobs?limit=100`, { token });
    expect(jobs.status, jobs.text).toBe(200);
    expect(jobs.json).toHaveLength(6);
    for (const job of jobs.json)
      expect(job).toMatchObject({ status: 'completed', mode: 'async', page_count: 1 });
    // Item order: the first item's job first (its own title), the last item's last.
    const first = await readPdf(new Uint8Array(await (await fetch(jobs.json[0].download_url)).arrayBuffer()));
    expect(first.text).toContain('INV-B-0');
    const last = await readPdf(new Uint8Array(await (await fetch(jobs.json[5].download_url)).arrayBuffer()));
    expect(last.text).toContain('INV-B-5');
    const page = await local.api(`/v1/batches/${res.json.id}/jobs?limit=2&offset=4`, { token });
    expect(page.json.map((j: Json) => j.id)).toEqual([jobs.json[4].id, jobs.json[5].id]);

    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(6);
    const listed = await local.api('/v1/batches', { token });
    expect(listed.json.map((b: Json) => b.id)).toEqual([res.json.id]);
    expect((await local.api('/v1/batches?offset=1', { token })).json).toEqual([]);
  });

  it("each item's variables are read as JSON sent them (10.0 stays a float)", async () => {
    const token = await local.sessionToken();
    const text =
      '{"html":"<p>n={{ n }} k={{ d | list | join(\\",\\") }}</p>","items":[{"variables":{"n":10.0,"d":{"2":1,"a":2}}},{"variables":{"n":3,"d":{}}}]}';
    const res = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: text,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status, res.text).toBe(202);
    await waitForBatch(local.api, token, res.json.id);
    const jobs = (await local.api(`/v1/batches/${res.json.id}/jobs`, { token })).json;
    const pdf = await readPdf(new Uint8Array(await (await fetch(jobs[0].download_url)).arrayBuffer()));
    expect(pdf.text).toContain('n=10.0 k=2,a');
  });

  it('a batch the quota cannot cover answers 429 saying how many renders remain, with nothing held', async () => {
    const token = await local.accountOn('two-a-month');
    const res = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: {
        html: '<p>{{ n }}</p>',
        items: [{ variables: { n: 1 } }, { variables: { n: 2 } }, { variables: { n: 3 } }],
      },
    });
    expect(res.status, res.text).toBe(429);
    expect(res.json.error.code).toBe('PLAN_QUOTA_EXCEEDED');
    expect(res.json.error.message).toContain('3 items but only 2 of the monthly quota of 2 renders remain');
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(0);
    expect((await local.api('/v1/pdf', { token })).json).toEqual([]);
    expect((await local.api('/v1/batches', { token })).json).toEqual([]);

    // Two fit: accepted whole.
    const fits = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: { html: '<p>{{ n }}</p>', items: [{ variables: { n: 1 } }, { variables: { n: 2 } }] },
    });
    expect(fits.status, fits.text).toBe(202);
    expect((await waitForBatch(local.api, token, fits.json.id)).counts.completed).toBe(2);
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(2);
  });

  it('an item whose variables lack one the template needs answers 422 naming the item, with nothing held', async () => {
    const token = await local.sessionToken();
    const items = [0, 1, 2, 3].map((i) => ({ variables: i === 3 ? { other: 1 } : { name: `n${i}` } }));
    const res = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: { html: '<p>{{ name }}</p>', items },
    });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('INVALID_HTML_TEMPLATE');
    expect(res.json.error.details).toEqual([
      expect.objectContaining({ field: 'items[3].variables', name: 'name', line: 1 }),
    ]);
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(0);
    expect((await local.api('/v1/pdf', { token })).json).toEqual([]);
  });

  it('items: 1 to 1000, each an object; an unknown batch is 404', async () => {
    const token = await local.sessionToken();
    const none = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: { html: '<p>x</p>', items: [] },
    });
    expect(none.status, none.text).toBe(422);
    expect(none.json.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'items' }] });
    const many = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: { html: '<p>x</p>', items: Array.from({ length: 1001 }, () => ({})) },
    });
    expect(many.status, many.text).toBe(422);
    expect(many.json.error.details[0].field).toBe('items');
    const bad = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: { html: '<p>x</p>', items: [{}, { variables: 'no' }] },
    });
    expect(bad.status, bad.text).toBe(422);
    expect(bad.json.error).toMatchObject({
      code: 'INVALID_PDF_OPTIONS',
      details: [{ field: 'items[1].variables' }],
    });
    const missing = await local.api('/v1/batches/bat_01J00000000000000000000000', { token });
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('BATCH_NOT_FOUND');
  });
});
