/**
 * Async renders through the HTTP API against the local stack (its SQS server, event source
 * mapping and consumer): 202 at once with the pending job and a Location, then the job moves on
 * to completed (or failed) as GET /v1/pdf/{id} shows it; quota and refunds as for a sync render.
 */
import { describe, expect, it } from 'vitest';
import { INVOICE_TEMPLATE, invoiceVariables } from '../bench/fixtures/invoice.js';
import { waitForJob } from '../helpers/async-jobs.js';
import { useLocalStack } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';

const local = useLocalStack();

describe('async renders', () => {
  it('an async invoice answers 202 with the pending job and a Location, then completes', async () => {
    const token = await local.sessionToken();
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: INVOICE_TEMPLATE, variables: invoiceVariables(), async: true },
    });
    expect(res.status, res.text).toBe(202);
    expect(res.json).toMatchObject({ status: 'pending', mode: 'async', download_url: null, attempts: 0 });
    expect(res.headers.get('location')).toBe(`/v1/pdf/${res.json.id}`);
    expect(res.headers.get('preference-applied')).toBeNull();

    const job = await waitForJob(local.api, token, res.json.id);
    expect(job).toMatchObject({
      status: 'completed',
      mode: 'async',
      attempts: 1,
      page_count: 1,
      error: null,
    });
    const pdf = await fetch(job.download_url);
    expect(pdf.status).toBe(200);
    const info = await readPdf(new Uint8Array(await pdf.arrayBuffer()));
    expect(info.pageCount).toBe(1);
    expect(info.text).toContain('Invoice');
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(1);
  });

  it('Prefer: respond-async asks for the same, and says it was applied', async () => {
    const token = await local.sessionToken();
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      token,
      headers: { Prefer: 'respond-async, wait=10' },
      body: { html: '<p>preferred</p>' },
    });
    expect(res.status, res.text).toBe(202);
    expect(res.headers.get('preference-applied')).toBe('respond-async');
    expect((await waitForJob(local.api, token, res.json.id)).status).toBe('completed');
  });

  it('a template that fails only when executed fails the job at once (no retry) and gives its unit back', async () => {
    const token = await local.sessionToken();
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: '<p>{{ customer.name }}</p>', variables: { customer: {} }, async: true },
    });
    expect(res.status, res.text).toBe(202);
    const job = await waitForJob(local.api, token, res.json.id);
    expect(job).toMatchObject({ status: 'failed', attempts: 1, download_url: null });
    expect(job.error.code).toBe('INVALID_HTML_TEMPLATE');
    expect(job.error.message).toMatch(/^Template error \(line 1\): .*has no attribute 'name'/);
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(0);
  });

  it('checks the request as a sync render does before answering: a template that does not parse is 422, and nothing is queued', async () => {
    const token = await local.sessionToken();
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: '<p>{% if %}</p>', async: true },
    });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('INVALID_HTML_TEMPLATE');
    expect((await local.api('/v1/pdf', { token })).json).toEqual([]);
    const bad = await local.api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: '<p>x</p>', async: 'yes' },
    });
    expect(bad.status).toBe(422);
    expect(bad.json.error.details).toEqual([{ field: 'async', issue: 'must be true or false' }]);
  });

  it('replays an idempotent async request with 202 and the job as it is now, rendered once', async () => {
    const token = await local.sessionToken();
    const endpoint = await local.api('/v1/webhooks', {
      method: 'POST',
      token,
      body: { url: 'https://hooks.example.com/pdf' },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const request = {
      method: 'POST',
      token,
      headers: { 'Idempotency-Key': 'async-once' },
      body: { html: '<p>once</p>', async: true, webhook_id: endpoint.json.id },
    } as const;
    const first = await local.api('/v1/pdf', request);
    expect(first.status, first.text).toBe(202);
    // webhook_id is kept on the job.
    expect(first.json).toMatchObject({ webhook_id: endpoint.json.id, batch_id: null });
    await waitForJob(local.api, token, first.json.id);
    const again = await local.api('/v1/pdf', request);
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json).toMatchObject({ id: first.json.id, status: 'completed' });
    expect((await local.api('/v1/pdf', { token })).json).toHaveLength(1);
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(1);
  });
});
