/**
 * Issue 37 over HTTP against a local stack of the file's own (its render queue, consumers,
 * dynalite, s3rver, Chromium): async renders that queue past the plan's concurrency up to its
 * queue depth, cancels of a job and of a batch (every unit consumed or given back, each job
 * ended), a job's times and Retry-After, batch items' reference, item_index, status filter and
 * item events, and `file_name` on the download and in the ZIP. Checked with poppler and unzip.
 *
 * Its own stack: four async consumers (the shared stack's two serve every file) and the free plan
 * as deployed (concurrency 2, queue depth 20) but for its rate limit, raised so that 21 renders
 * can be sent within a minute.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../functions/settings.js';
import { waitForBatch, waitForJob } from '../helpers/async-jobs.js';
import { type Json, useLocalStack } from '../helpers/local-stack.js';

const FREE = DEFAULT_PLANS.free as NonNullable<(typeof DEFAULT_PLANS)['free']>;

const local = useLocalStack({
  env: {
    ASYNC_CONCURRENCY: '4',
    PLANS: JSON.stringify({
      free: { ...FREE, rendersPerMinute: 1000 },
      roomy: { monthlyRenders: 1_000_000, rendersPerMinute: 1_000_000 },
    }),
  },
  // Public whenever asked (creations and deliveries): the deliveries are recorded, and refused there.
  webhookHosts: { 'hooks.example.com': [['93.184.216.34']] },
});

const dir = mkdtempSync(join(tmpdir(), 'job-queue-'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A page that takes `ms` to be ready (a script adds #done): renders that stay in the queue a while. */
const slowPage = (ms: number) => ({
  html: `<p>{{ n }}</p><script>setTimeout(() => document.body.append(Object.assign(document.createElement('i'), { id: 'done' })), ${ms})</script>`,
  page_load: { wait_for_selector: '#done', timeout_ms: 30_000 },
});

const endpointFor = async (token: string, events?: string[]): Promise<string> => {
  const res = await local.api('/v1/webhooks', {
    method: 'POST',
    token,
    body: { url: 'https://hooks.example.com/pdf', ...(events ? { events } : {}) },
  });
  expect(res.status, res.text).toBe(201);
  return res.json.id;
};

/** The events recorded for an endpoint (whether or not its receiver answered), oldest first. */
const eventsOf = async (token: string, webhookId: string): Promise<{ type: string; data: Json }[]> => {
  const out: { type: string; data: Json }[] = [];
  for (let offset = 0; ; offset += 100) {
    const res = await local.api(`/v1/webhooks/${webhookId}/deliveries?limit=100&offset=${offset}`, { token });
    expect(res.status, res.text).toBe(200);
    for (const d of res.json as Json[]) {
      out.push({ type: d.event_type, data: d.payload.data });
    }
    if ((res.json as Json[]).length < 100) return out;
  }
};

const usedRenders = async (token: string): Promise<number> =>
  (await local.api('/v1/usage', { token })).json.renders_used;

/** Every job of a batch, through the listing's pages (Has-More says when to stop). */
const batchJobs = async (token: string, id: string, status?: string): Promise<Json[]> => {
  const out: Json[] = [];
  for (let offset = 0; ; offset += 100) {
    const query = `limit=100&offset=${offset}${status ? `&status=${status}` : ''}`;
    const res = await local.api(`/v1/batches/${id}/jobs?${query}`, { token });
    expect(res.status, res.text).toBe(200);
    out.push(...(res.json as Json[]));
    const more = res.headers.get('has-more');
    expect(more === 'true' || more === 'false', `Has-More: ${more}`).toBe(true);
    if (more === 'false') return out;
  }
};

describe('async renders that queue (issue 37)', () => {
  it('on the free plan, 20 async renders queue past its concurrency of 2 and all complete; a 21st answers 429 QUEUE_DEPTH_EXCEEDED with Retry-After', async () => {
    const token = await local.sessionToken();
    const submit = (n: number) =>
      local.api('/v1/pdf', {
        method: 'POST',
        token,
        body: { ...slowPage(4000), variables: { n }, async: true },
      });
    const accepted = await Promise.all(Array.from({ length: 20 }, (_, n) => submit(n)));
    for (const res of accepted) expect(res.status, res.text).toBe(202);
    // Each render takes 4 s: none of the 20 has ended yet.
    const refused = await submit(20);
    expect(refused.status, refused.text).toBe(429);
    expect(refused.json.error.code).toBe('QUEUE_DEPTH_EXCEEDED');
    expect(refused.json.error.message).toContain('20 async renders');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const ended = await Promise.all(
      accepted.map((res) => waitForJob(local.api, token, res.json.id, 180_000)),
    );
    expect(ended.map((job) => job.status)).toEqual(Array(20).fill('completed'));
    expect(await usedRenders(token)).toBe(20);
    // The queue is empty again: the next one is accepted.
    expect((await submit(21)).status).toBe(202);
  });

  it("carries queued_at, started_at and completed_at; a 202 and an open job's GET carry Retry-After, an ended job's none", async () => {
    const token = await local.sessionToken();
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      token,
      body: { ...slowPage(1500), variables: { n: 1 }, async: true },
    });
    expect(res.status, res.text).toBe(202);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(res.json).toMatchObject({ status: 'pending', started_at: null, completed_at: null });
    expect(res.json.queued_at).toBe(res.json.created_at);
    const open = await local.api(`/v1/pdf/${res.json.id}`, { token });
    expect(['pending', 'rendering']).toContain(open.json.status);
    expect(Number(open.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const job = await waitForJob(local.api, token, res.json.id);
    expect(job.status).toBe('completed');
    expect(Date.parse(job.queued_at)).toBeLessThanOrEqual(Date.parse(job.started_at));
    // The page took 1.5 s to be ready, between the render's start and its end.
    expect(Date.parse(job.completed_at) - Date.parse(job.started_at)).toBeGreaterThanOrEqual(1500);
    const ended = await local.api(`/v1/pdf/${res.json.id}`, { token });
    expect(ended.headers.get('retry-after')).toBeNull();
    // A sync render was never queued.
    const sync = await local.api('/v1/pdf', { method: 'POST', token, body: { html: '<p>now</p>' } });
    expect(sync.status, sync.text).toBe(201);
    expect(sync.json).toMatchObject({ queued_at: null, status: 'completed' });
    expect(sync.json.started_at).not.toBeNull();
    expect(sync.json.completed_at).not.toBeNull();
  });
});

describe('cancel (issue 37)', () => {
  it('DELETE cancels a pending job once: its unit back, job.cancelled sent once; one that began rendering finishes (409)', async () => {
    const token = await local.sessionToken();
    const webhookId = await endpointFor(token);
    // Eight 2-second renders on four consumers: the last ones wait in the queue.
    const accepted = await Promise.all(
      Array.from({ length: 8 }, (_, n) =>
        local.api('/v1/pdf', {
          method: 'POST',
          token,
          body: { ...slowPage(2000), variables: { n }, async: true, webhook_id: webhookId },
        }),
      ),
    );
    for (const res of accepted) expect(res.status, res.text).toBe(202);
    const ids = accepted.map((res) => res.json.id as string);
    const answers = await Promise.all(
      ids.map((id) => local.api(`/v1/pdf/${id}`, { method: 'DELETE', token })),
    );
    for (const a of answers) {
      expect([200, 409], a.text).toContain(a.status);
      if (a.status === 200) expect(a.json).toMatchObject({ status: 'cancelled', download_url: null });
      else expect(a.json.error.code).toBe('JOB_NOT_CANCELLABLE');
    }
    const cancelled = ids.filter((_, i) => answers[i]?.status === 200);
    expect(cancelled.length).toBeGreaterThan(0);
    // A cancel sent again answers the cancelled job; one that began rendering is refused again.
    const again = await local.api(`/v1/pdf/${cancelled[0]}`, { method: 'DELETE', token });
    expect(again.status).toBe(200);
    expect(again.json.status).toBe('cancelled');

    const ended = await Promise.all(ids.map((id) => waitForJob(local.api, token, id, 120_000)));
    const completed = ended.filter((j) => j.status === 'completed');
    expect(
      ended
        .filter((j) => j.status === 'cancelled')
        .map((j) => j.id)
        .sort(),
    ).toEqual([...cancelled].sort());
    expect(completed.length + cancelled.length).toBe(8);
    for (const job of ended.filter((j) => j.status === 'cancelled')) {
      expect(job).toMatchObject({ started_at: null, attempts: 0, page_count: null, error: null });
      expect(job.completed_at).not.toBeNull();
    }
    // Every unit consumed or given back: used = completed.
    expect(await usedRenders(token)).toBe(completed.length);
    await sleep(500);
    const events = await eventsOf(token, webhookId);
    const told = (type: string) =>
      events
        .filter((e) => e.type === type)
        .map((e) => e.data.id)
        .sort();
    expect(told('job.cancelled')).toEqual([...cancelled].sort());
    expect(told('job.completed')).toEqual(completed.map((j) => j.id).sort());

    // A sync render and an unknown id.
    const sync = await local.api('/v1/pdf', { method: 'POST', token, body: { html: '<p>sync</p>' } });
    const refused = await local.api(`/v1/pdf/${sync.json.id}`, { method: 'DELETE', token });
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe('JOB_NOT_CANCELLABLE');
    const unknown = await local.api('/v1/pdf/job_01ARZ3NDEKTSV4RRFFQ69G5FAV', { method: 'DELETE', token });
    expect(unknown.status).toBe(404);
  });

  it('cancelling a batch of 200 mid-way leaves every item completed or cancelled, and units used = completed', async () => {
    const token = await local.accountOn('roomy');
    const items = Array.from({ length: 200 }, (_, n) => ({ variables: { n } }));
    const created = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: { html: '<p>Item {{ n }}</p>', items },
    });
    expect(created.status, created.text).toBe(202);
    const id = created.json.id as string;
    // Mid-way: some items rendered, most still queued.
    for (let tries = 0; ; tries++) {
      const b = await local.api(`/v1/batches/${id}`, { token });
      if (b.json.counts.completed >= 5) break;
      if (tries > 600) throw new Error(`batch ${id} never started: ${b.text}`);
      await sleep(100);
    }
    const cancel = await local.api(`/v1/batches/${id}/cancel`, { method: 'POST', token });
    expect(cancel.status, cancel.text).toBe(200);
    expect(cancel.json.counts.cancelled).toBeGreaterThan(0);
    const done = await waitForBatch(local.api, token, id);
    const { completed, cancelled, failed, pending, rendering } = done.counts;
    expect({ failed, pending, rendering }).toEqual({ failed: 0, pending: 0, rendering: 0 });
    expect(completed + cancelled).toBe(200);
    expect(cancelled).toBeGreaterThan(0);
    const jobs = await batchJobs(token, id);
    expect(jobs).toHaveLength(200);
    expect(jobs.filter((j) => j.status === 'completed')).toHaveLength(completed);
    expect(jobs.filter((j) => j.status === 'cancelled')).toHaveLength(cancelled);
    expect(jobs.map((j) => j.item_index)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(await usedRenders(token)).toBe(completed);
    // The filter: only the cancelled ones, page by page.
    const onlyCancelled = await batchJobs(token, id, 'cancelled');
    expect(onlyCancelled).toHaveLength(cancelled);
    expect(new Set(onlyCancelled.map((j) => j.status))).toEqual(new Set(['cancelled']));
    const firstPage = await local.api(`/v1/batches/${id}/jobs?status=completed&limit=2`, { token });
    expect(firstPage.json.map((j: Json) => j.status)).toEqual(['completed', 'completed']);
    expect(firstPage.headers.get('has-more')).toBe(completed > 2 ? 'true' : 'false');
    const bad = await local.api(`/v1/batches/${id}/jobs?status=done`, { token });
    expect(bad.status).toBe(422);
    expect(bad.json.error.details[0].field).toBe('status');
  });
});

describe('batch items and file names (issue 37)', () => {
  it("carries each item's reference and item_index, filters by status, and tells the batch's endpoint of each item", async () => {
    const token = await local.sessionToken();
    const webhookId = await endpointFor(token, ['job.completed', 'job.failed', 'batch.completed']);
    const res = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: {
        html: '<p>{{ 10 // d }}</p>',
        items: [
          { variables: { d: 1 }, reference: 'INV-0001' },
          { variables: { d: 0 }, reference: 'INV-0002' },
          { variables: { d: 2 } },
        ],
        webhook_id: webhookId,
      },
    });
    expect(res.status, res.text).toBe(202);
    await waitForBatch(local.api, token, res.json.id);
    const jobs = await batchJobs(token, res.json.id);
    expect(jobs.map((j) => [j.item_index, j.reference, j.status])).toEqual([
      [0, 'INV-0001', 'completed'],
      [1, 'INV-0002', 'failed'],
      [2, null, 'completed'],
    ]);
    // ?status=failed keeps the failed one only.
    const failed = await local.api(`/v1/batches/${res.json.id}/jobs?status=failed`, { token });
    expect(failed.json.map((j: Json) => j.reference)).toEqual(['INV-0002']);
    expect(failed.headers.get('has-more')).toBe('false');
    await sleep(500);
    const events = await eventsOf(token, webhookId);
    const items = events
      .filter((e) => e.type !== 'batch.completed')
      .map((e) => [e.type, e.data.item_index, e.data.reference])
      .sort((a, b) => Number(a[1]) - Number(b[1]));
    expect(items).toEqual([
      ['job.completed', 0, 'INV-0001'],
      ['job.failed', 1, 'INV-0002'],
      ['job.completed', 2, null],
    ]);
    expect(events.filter((e) => e.type === 'batch.completed')).toHaveLength(1);

    const long = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: { html: '<p>x</p>', items: [{ reference: 'r'.repeat(201) }] },
    });
    expect(long.status).toBe(422);
    expect(long.json.error.details[0].field).toBe('items[0].reference');
  });

  it('file_name, made of the variables and made safe, names the download (Content-Disposition) and the ZIP entries, the reference in the manifest', async () => {
    const token = await local.sessionToken();
    const render = await local.api('/v1/pdf', {
      method: 'POST',
      token,
      body: {
        html: '<p>{{ number }}</p>',
        variables: { number: '2026/0042', customer: { name: 'Müller' } },
        file_name: 'Invoice {{ number }} {{ customer.name }}',
      },
    });
    expect(render.status, render.text).toBe(201);
    expect(render.json.file_name).toBe('Invoice 2026_0042 Müller.pdf');
    const pdf = await fetch(render.json.download_url);
    expect(pdf.status).toBe(200);
    const disposition = pdf.headers.get('content-disposition') ?? '';
    expect(disposition).toContain('filename="Invoice 2026_0042 Muller.pdf"');
    expect(disposition).toContain("filename*=UTF-8''Invoice%202026_0042%20M%C3%BCller.pdf");
    const file = join(dir, 'named.pdf');
    writeFileSync(file, new Uint8Array(await pdf.arrayBuffer()));
    expect(execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' })).toContain('2026/0042');

    for (const [file_name, issue] of [
      ['{{ missing }}', "names variable 'missing', which is undefined"],
      ['{% if x %}a{% endif %}', 'takes only {{ variable }} placeholders'],
      ['{{ number | upper }}', 'is not a variable'],
      ['...', 'makes an empty name'],
    ] as const) {
      const bad = await local.api('/v1/pdf', {
        method: 'POST',
        token,
        body: { html: '<p>x</p>', variables: { number: 1 }, file_name },
      });
      expect(bad.status, file_name).toBe(422);
      expect(bad.json.error.code).toBe('INVALID_FILE_NAME');
      expect(bad.json.error.details[0].field).toBe('file_name');
      expect(bad.json.error.details[0].issue).toContain(issue);
    }
    expect(await usedRenders(token)).toBe(1);

    const batch = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: {
        html: '<p>{{ number }}</p>',
        file_name: 'invoice-{{ number }}',
        items: [
          { variables: { number: 'A-1' }, reference: 'first' },
          { variables: { number: 'A-2' }, file_name: 'own-name.pdf' },
        ],
        output: { zip: true },
      },
    });
    expect(batch.status, batch.text).toBe(202);
    await waitForBatch(local.api, token, batch.json.id);
    const jobs = await batchJobs(token, batch.json.id);
    expect(jobs.map((j) => j.file_name)).toEqual(['invoice-A-1.pdf', 'own-name.pdf']);
    let built: Json;
    for (;;) {
      built = (await local.api(`/v1/batches/${batch.json.id}`, { token })).json;
      if (built.output_status !== 'pending') break;
      await sleep(250);
    }
    expect(built.output_status).toBe('ready');
    const zip = join(dir, 'batch.zip');
    writeFileSync(zip, new Uint8Array(await (await fetch(built.zip_url)).arrayBuffer()));
    const names = execFileSync('zipinfo', ['-1', zip], { encoding: 'utf8' }).trim().split('\n');
    expect(names.sort()).toEqual(['invoice-A-1.pdf', 'manifest.json', 'own-name.pdf']);
    const manifest = JSON.parse(execFileSync('unzip', ['-p', zip, 'manifest.json'], { encoding: 'utf8' }));
    expect(manifest.items.map((i: Json) => [i.file_name, i.reference])).toEqual([
      ['invoice-A-1.pdf', 'first'],
      ['own-name.pdf', null],
    ]);
    const badBatch = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: { html: '<p>x</p>', file_name: '{{ n }}', items: [{ variables: { n: 1 } }, { variables: {} }] },
    });
    expect(badBatch.status).toBe(422);
    expect(badBatch.json.error).toMatchObject({ code: 'INVALID_FILE_NAME' });
    expect(badBatch.json.error.details[0]).toMatchObject({ field: 'file_name' });
    expect(badBatch.json.error.details[0].issue).toContain('items[1]');
  });
});
