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
});
