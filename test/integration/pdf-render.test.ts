/**
 * POST/GET /v1/pdf over HTTP against the real local stack (dynalite, s3rver, Chromium): the
 * happy paths, options as they show in the PDF, jobs, lists, downloads, idempotent renders.
 */
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { jobSchema } from '../../functions/pdf/schemas.js';
import { dynamoDbClient, type Json, useLocalStack } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';

const local = useLocalStack();

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Paper sizes in points, within 2 pt (Chromium rounds A-series sizes to whole pixels). */
const expectPageSize = (
  page: { widthPt: number; heightPt: number } | undefined,
  width: number,
  height: number,
) => {
  expect(Math.abs((page?.widthPt ?? 0) - width), `width ${page?.widthPt}`).toBeLessThan(2);
  expect(Math.abs((page?.heightPt ?? 0) - height), `height ${page?.heightPt}`).toBeLessThan(2);
};

const download = async (url: string) => {
  const res = await fetch(url);
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
};

const render = async (token: string, body: unknown, headers: Record<string, string> = {}) =>
  local.api('/v1/pdf', { method: 'POST', token, body, headers });

describe('POST /v1/pdf', () => {
  it('renders inline HTML with variables into a completed job whose link serves an A4 PDF', async () => {
    const token = await local.sessionToken();
    const res = await render(token, {
      html: '<h1>Invoice {{ number }}</h1><p>Bill to: {{ customer.name }}</p>',
      variables: { number: 'INV-2026-0042', customer: { name: 'Ada & Co <Ltd>' } },
    });

    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const job = res.json;
    expect(job).toMatchObject({
      status: 'completed',
      template_id: null,
      page_count: 1,
      error: null,
    });
    expect(job.id).toMatch(/^job_[0-9A-HJKMNP-TV-Z]{26}$/);
    // The OpenAPI document describes exactly these fields.
    expect(() => jobSchema.strict().parse(job)).not.toThrow();
    expect(job.created_at).toMatch(ISO_MS);
    expect(job.file_size_bytes).toBeGreaterThan(500);
    expect(job.render_duration_ms).toBeGreaterThanOrEqual(0);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.headers.get('ratelimit-limit')).toBe('10');
    expect(Number(res.headers.get('ratelimit-remaining'))).toBeLessThan(10);

    const { res: file, bytes } = await download(job.download_url);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(file.headers.get('content-disposition')).toContain(`filename="${job.id}.pdf"`);
    expect(bytes.length).toBe(job.file_size_bytes);
    // Untagged by default (PDF_TAGGED), as Chromium and Gotenberg print.
    expect(Buffer.from(bytes).includes('/StructTreeRoot')).toBe(false);
    expect(new URL(job.download_url).searchParams.get('X-Amz-Expires')).toBe('900');

    const pdf = await readPdf(bytes);
    expect(pdf.pageCount).toBe(1);
    expectPageSize(pdf.pages[0], 595, 842);
    expect(pdf.text).toContain('Invoice INV-2026-0042');
    // Autoescaping: the markup in the variable is shown as text, not interpreted.
    expect(pdf.text).toContain('Bill to: Ada & Co <Ltd>');
  });

  it.each([
    ['LETTER', true, 792, 612],
    ['LEGAL', false, 612, 1008],
    ['A3', false, 842, 1191],
    ['A5', true, 595, 420],
  ])('prints %s (landscape %s) at %d x %d pt', async (format, landscape, width, height) => {
    const token = await local.sessionToken();
    const res = await render(token, {
      html: '<p>{{ format }}</p>',
      variables: { format },
      format,
      landscape,
    });
    expect(res.status).toBe(201);
    const pdf = await readPdf((await download(res.json.download_url)).bytes);
    expectPageSize(pdf.pages[0], width, height);
    expect(pdf.text).toContain(format);
  });

  it('counts pages and waits for an element a script adds', async () => {
    const token = await local.sessionToken();
    const html = `
      <style>section + section { page-break-before: always; }</style>
      {% for n in range(1, 4) %}<section>Section {{ n }}</section>{% endfor %}
      <script>setTimeout(() => { const p = document.createElement('p'); p.id = 'late'; p.textContent = 'Loaded late'; document.body.append(p); }, 300);</script>`;
    const res = await render(token, {
      html,
      margins: { top: 1, right: 1, bottom: 1, left: 1 },
      page_load: { wait_until: 'networkidle0', wait_for_selector: '#late', timeout_ms: 10_000 },
    });
    expect(res.status).toBe(201);
    expect(res.json.page_count).toBe(3);
    const pdf = await readPdf((await download(res.json.download_url)).bytes);
    expect(pdf.pageCount).toBe(3);
    expect(pdf.text).toContain('Section 3');
    expect(pdf.text).toContain('Loaded late');
  });

  it('renders a saved template by id: the caller’s own and another account’s public one, not a private one', async () => {
    const token = await local.sessionToken();
    const someoneElse = await local.sessionToken();
    const save = async (owner: string, label: string, isPublic: boolean): Promise<string> => {
      const res = await local.api('/v1/templates', {
        method: 'POST',
        token: owner,
        body: { name: label, html: `<p>${label} for {{ who }}</p>`, is_public: isPublic },
      });
      expect(res.status).toBe(201);
      return res.json.id;
    };
    const own = await save(token, 'own', false);
    const shared = await save(someoneElse, 'public', true);
    const hiddenId = await save(someoneElse, 'private', false);

    for (const [id, label] of [
      [own, 'own'],
      [shared, 'public'],
    ] as const) {
      // Another account's template renders only at a version the caller names (contract, issue 21).
      const version = label === 'public' ? { template_version: 1 } : {};
      const res = await render(token, { template_id: id, variables: { who: 'Grace' }, ...version });
      expect(res.status).toBe(201);
      expect(res.json).toMatchObject({ template_id: id, template_version: 1 });
      const pdf = await readPdf((await download(res.json.download_url)).bytes);
      expect(pdf.text).toContain(`${label} for Grace`);
    }
    const hidden = await render(token, { template_id: hiddenId, variables: { who: 'Grace' } });
    expect(hidden.status).toBe(404);
    expect(hidden.json.error.code).toBe('PDF_TEMPLATE_NOT_FOUND');
    const missingVariable = await render(token, { template_id: own });
    expect(missingVariable.status).toBe(422);
    expect(missingVariable.json.error.code).toBe('INVALID_HTML_TEMPLATE');
    expect(missingVariable.json.error.message).toContain("'who'");
  });
});

describe('GET /v1/pdf/{job_id} and GET /v1/pdf', () => {
  it('returns the job with a freshly signed link, and 404 to any other account', async () => {
    const token = await local.sessionToken();
    const created = (await render(token, { html: '<p>mine</p>' })).json;

    const res = await local.api(`/v1/pdf/${created.id}`, { token });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      id: created.id,
      status: 'completed',
      file_size_bytes: created.file_size_bytes,
    });
    const { res: file, bytes } = await download(res.json.download_url);
    expect(file.status).toBe(200);
    expect((await readPdf(bytes)).text).toContain('mine');

    const stranger = await local.sessionToken();
    for (const id of [created.id, 'job_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'nonsense']) {
      const other = await local.api(`/v1/pdf/${id}`, { token: stranger });
      expect(other.status).toBe(404);
      expect(other.json.error.code).toBe('PDF_JOB_NOT_FOUND');
      expect(other.json.error.request_id).toBe(other.headers.get('x-request-id'));
    }
  });

  it('lists the caller’s jobs newest first with limit and offset, and only theirs', async () => {
    const token = await local.sessionToken();
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push((await render(token, { html: `<p>job ${n}</p>` })).json.id);
    await render(await local.sessionToken(), { html: '<p>someone else</p>' });

    const all = await local.api('/v1/pdf', { token });
    expect(all.status).toBe(200);
    expect(all.json.map((j: { id: string }) => j.id)).toEqual([...ids].reverse());
    expect(all.json[0].download_url).toMatch(/^http/);

    const page = await local.api('/v1/pdf?limit=1&offset=1', { token });
    expect(page.json.map((j: { id: string }) => j.id)).toEqual([ids[1]]);
    expect((await local.api('/v1/pdf?offset=3', { token })).json).toEqual([]);

    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'offset=-1']) {
      const bad = await local.api(`/v1/pdf?${query}`, { token });
      expect(bad.status).toBe(422);
      expect(bad.json.error.code).toBe('VALIDATION_ERROR');
      expect(bad.json.error.details.length).toBeGreaterThan(0);
    }
  });
});

describe('Idempotency-Key', () => {
  it('answers a repeat with the first job, renders concurrent duplicates once, and refuses a changed body', async () => {
    const token = await local.sessionToken();
    const body = { html: '<p>once {{ n }}</p>', variables: { n: 1 } };
    const key = { 'Idempotency-Key': 'order-7781' };

    const [a, b] = await Promise.all([render(token, body, key), render(token, body, key)]);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.json.id).toBe(a.json.id);

    // Same body with other key order and spacing is the same request.
    const again = await render(token, { variables: { n: 1 }, html: '<p>once {{ n }}</p>' }, key);
    expect(again.status).toBe(201);
    expect(again.json.id).toBe(a.json.id);
    expect((await download(again.json.download_url)).res.status).toBe(200);

    const jobs = await local.api('/v1/pdf', { token });
    expect(jobs.json).toHaveLength(1);

    const changed = await render(token, { html: '<p>twice</p>' }, key);
    expect(changed.status).toBe(422);
    expect(changed.json.error.code).toBe('IDEMPOTENCY_KEY_REUSED');

    const invalid = await render(token, body, { 'Idempotency-Key': 'x'.repeat(256) });
    expect(invalid.status).toBe(422);
    expect(invalid.json.error.code).toBe('VALIDATION_ERROR');

    // Keys are per account: another account's same key is a new request.
    const other = await render(await local.sessionToken(), body, key);
    expect(other.status).toBe(201);
    expect(other.json.id).not.toBe(a.json.id);
  });

  it('replays a failure as the same error with the same job', async () => {
    const token = await local.sessionToken();
    const body = { html: '<p>never</p>', page_load: { wait_for_selector: '#never', timeout_ms: 1000 } };
    const key = { 'Idempotency-Key': 'fails-once' };
    const first = await render(token, body, key);
    expect(first.status).toBe(504);
    const second = await render(token, body, key);
    expect(second.status).toBe(504);
    expect(second.json.error.code).toBe('PDF_RENDERING_TIMEOUT');
    expect(second.json.error.job_id).toBe(first.json.error.job_id);
  });
});

describe('job lifecycle', () => {
  it('shows a render in progress as rendering in the list, then completed', async () => {
    const token = await local.sessionToken();
    const html = `<p>slow</p><script>setTimeout(() => { document.body.insertAdjacentHTML('beforeend', '<p id="done">done</p>'); }, 1500);</script>`;
    const pending = render(token, { html, page_load: { wait_for_selector: '#done', timeout_ms: 10_000 } });
    const seen = new Set<string>();
    await vi.waitFor(
      async () => {
        const jobs = (await local.api('/v1/pdf', { token })).json;
        for (const job of jobs) seen.add(job.status);
        expect(seen.has('rendering')).toBe(true);
      },
      { timeout: 8000, interval: 100 },
    );
    const inFlight = (await local.api('/v1/pdf', { token })).json[0];
    expect(inFlight).toMatchObject({
      status: 'rendering',
      download_url: null,
      file_size_bytes: null,
      page_count: null,
    });

    const done = await pending;
    expect(done.status).toBe(201);
    expect(done.json.id).toBe(inFlight.id);
    expect((await local.api(`/v1/pdf/${inFlight.id}`, { token })).json.status).toBe('completed');
  });

  it('shows no download link once the retention period has removed the file, and says so', async () => {
    const token = await local.sessionToken('retention-check');
    const job = (await render(token, { html: '<p>old</p>' })).json;
    const retentionMs = 30 * 86_400_000; // the stack's PDF_RETENTION_DAYS (the default)
    expect(job).toMatchObject({
      file_expired: false,
      file_expires_at: new Date(Date.parse(job.created_at) + retentionMs).toISOString(),
    });
    expect(job.download_url).toMatch(/^http/);
    const db = DynamoDBDocumentClient.from(dynamoDbClient(local.stack));
    const key = { PK: 'ACCOUNT#retention-check', SK: `JOB#${job.id}` };
    // The job as it is a day after its PDF's retention: S3's lifecycle may not have run yet.
    const longAgo = new Date(Date.now() - retentionMs - 86_400_000).toISOString();
    await db.send(
      new UpdateCommand({
        TableName: local.stack.tableName,
        Key: key,
        UpdateExpression: 'SET completed_at = :at, created_at = :at',
        ExpressionAttributeValues: { ':at': longAgo },
      }),
    );
    const expired = {
      id: job.id,
      status: 'completed',
      download_url: null,
      file_expired: true,
      file_expires_at: new Date(Date.parse(longAgo) + retentionMs).toISOString(),
    };
    const old = await local.api(`/v1/pdf/${job.id}`, { token });
    expect(old.json).toMatchObject(expired);
    const listed = (await local.api('/v1/pdf', { token })).json;
    expect(listed.find((j: Json) => j.id === job.id)).toMatchObject(expired);

    // Past the record's own retention it is gone, before DynamoDB's TTL gets to it.
    const record = await db.send(new GetCommand({ TableName: local.stack.tableName, Key: key }));
    expect(record.Item?.expires_at).toBe(Math.floor(Date.parse(job.created_at) / 1000) + 2 * 30 * 86_400);
    await db.send(
      new UpdateCommand({
        TableName: local.stack.tableName,
        Key: key,
        UpdateExpression: 'SET expires_at = :at',
        ExpressionAttributeValues: { ':at': Math.floor(Date.now() / 1000) - 1 },
      }),
    );
    expect((await local.api(`/v1/pdf/${job.id}`, { token })).status).toBe(404);
    expect((await local.api('/v1/pdf', { token })).json.map((j: Json) => j.id)).not.toContain(job.id);
  });
});
