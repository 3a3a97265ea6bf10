/**
 * The PDF job use cases (domain/pdf-jobs.ts: countRequest, create, get, list) as the composition
 * root builds them (functions/services.ts) on fakes (test/helpers/memory-services.ts): the memory
 * job, usage, template and idempotency stores, the memory renderer and storage (each passing its
 * port's contract, test/contract), the real template parser, and a test clock. Renders are sync
 * here; the async ones and the worker are in async-renders.test.ts and render-worker.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryRenderer } from '../../../functions/adapters/memory/renderer.js';
import type { Renderer } from '../../../functions/domain/common/ports.js';
import type { Principal } from '../../../functions/domain/common/principal.js';
import type { RenderCommand } from '../../../functions/domain/renders/render-command.js';
import { pdfJobs as pdfJobsOf } from '../../../functions/services.js';
import { readTemplateDataText } from '../../../functions/templating/index.js';
import { type MemoryServices, memoryServices } from '../../helpers/memory-services.js';
import { readPdf } from '../../helpers/pdf.js';
import { rejection } from '../../helpers/rejection.js';

let built: MemoryServices[] = [];
afterEach(async () => {
  await Promise.all(built.map((m) => m.close()));
  built = [];
});

const setup = (
  plan = { monthlyRenders: 2, rendersPerMinute: 3, concurrentRenders: 2 },
  renderer?: Renderer,
) => {
  const m = memoryServices({
    at: new Date().toISOString(),
    settings: {
      plans: { free: plan },
      maxRenderedHtmlBytes: 100_000,
      maxPdfBytes: 1_000_000,
      maxPdfPages: 10,
    },
    ...(renderer ? { renderer } : {}),
  });
  built.push(m);
  const { clock, jobs, usage, storage, templates, faults } = m;
  return { clock, jobs, usage, storage, templates, pdfJobs: m.services.get(pdfJobsOf), faults };
};

let accounts = 0;
const caller = (): Principal => ({
  accountId: `acct-${++accounts}`,
  email: undefined,
  credential: 'session',
  plan: 'free',
});

const command = (
  html: string,
  variables = '{}',
  idempotency: RenderCommand['idempotency'] = null,
): RenderCommand => ({
  source: { kind: 'inline', html, headerHtml: null, footerHtml: null },
  variables: readTemplateDataText(variables),
  options: {},
  idempotency,
  mode: 'sync',
  webhookId: null,
});

const month = () => new Date().toISOString().slice(0, 7);

describe('a sync render', () => {
  it('completes a job whose PDF is stored and linked, and counts its unit and output', async () => {
    const { pdfJobs, usage, storage } = setup();
    const ada = caller();
    const { job, replayed } = await pdfJobs.create(ada, command('<p>Invoice {{ n }}</p>', '{"n": 7}'));
    expect(replayed).toBe(false);
    expect(job.job).toMatchObject({
      account_id: ada.accountId,
      status: 'completed',
      page_count: 1,
      error: null,
    });
    expect(job.job).not.toHaveProperty('unit');
    const download = await fetch(job.downloadUrl as string);
    expect(download.headers.get('content-disposition')).toContain(`${job.job.id}.pdf`);
    const bytes = new Uint8Array(await download.arrayBuffer());
    expect(bytes.byteLength).toBe(job.job.file_size_bytes);
    expect((await readPdf(bytes)).text).toContain('Invoice 7');
    expect(storage.keys()).toEqual([job.job.object_key]);
    expect(await usage.readMonth(ada.accountId, month())).toMatchObject({
      rendersUsed: 1,
      pdfBytes: bytes.byteLength,
    });
    expect((await pdfJobs.get(ada, job.job.id)).job.status).toBe('completed');
    expect((await pdfJobs.list(ada, { limit: 10, offset: 0 })).map((v) => v.job.id)).toEqual([job.job.id]);
    expect((await rejection(pdfJobs.get(caller(), job.job.id))).code).toBe('PDF_JOB_NOT_FOUND');
  });

  it('fails the job of a template that fails as it runs, names it, and gives the unit back', async () => {
    const { pdfJobs, usage, storage } = setup();
    const ada = caller();
    const e = await rejection(pdfJobs.create(ada, command('<p>{{ 1 / 0 }}</p>')));
    expect(e.code).toBe('INVALID_HTML_TEMPLATE');
    expect(e.jobId).toMatch(/^job_/);
    expect((await pdfJobs.get(ada, e.jobId as string)).job).toMatchObject({
      status: 'failed',
      error: { code: 'INVALID_HTML_TEMPLATE' },
    });
    expect(await usage.readMonth(ada.accountId, month())).toMatchObject({ rendersUsed: 0 });
    expect(storage.keys()).toEqual([]);
  });

  it('refuses a template that does not parse before any job is written', async () => {
    const { pdfJobs } = setup();
    const ada = caller();
    const e = await rejection(pdfJobs.create(ada, command('<p>{% if %}</p>')));
    expect(e.code).toBe('INVALID_HTML_TEMPLATE');
    expect(e.jobId).toBeUndefined();
    expect(await pdfJobs.list(ada, { limit: 10, offset: 0 })).toEqual([]);
  });

  it('refuses a render past the monthly quota, leaving no job for it', async () => {
    const { pdfJobs } = setup({ monthlyRenders: 1, rendersPerMinute: 10, concurrentRenders: 2 });
    const ada = caller();
    await pdfJobs.create(ada, command('<p>one</p>'));
    expect((await rejection(pdfJobs.create(ada, command('<p>two</p>')))).code).toBe('PLAN_QUOTA_EXCEEDED');
    expect(await pdfJobs.list(ada, { limit: 10, offset: 0 })).toHaveLength(1);
  });

  it('counts requests against the plan’s rate per minute', async () => {
    const { pdfJobs } = setup({ monthlyRenders: 10, rendersPerMinute: 2, concurrentRenders: 2 });
    const ada = caller();
    const c = command('<p>x</p>');
    expect(await pdfJobs.countRequest(ada, c)).toMatchObject({ limit: 2, remaining: 1 });
    await pdfJobs.countRequest(ada, c);
    expect((await rejection(pdfJobs.countRequest(ada, c))).code).toBe('USAGE_LIMIT_EXCEEDED');
  });

  it('renders an Idempotency-Key once and replays it; the key with another body is refused', async () => {
    const { pdfJobs, usage, storage } = setup();
    const ada = caller();
    const keyed = command('<p>once</p>', '{}', { key: 'k-1', bodyHash: 'h1' });
    const first = await pdfJobs.create(ada, keyed);
    await pdfJobs.countRequest(ada, keyed);
    const again = await pdfJobs.create(ada, keyed);
    expect(again).toMatchObject({
      replayed: true,
      job: { job: { id: first.job.job.id, status: 'completed' } },
    });
    expect(storage.keys()).toHaveLength(1);
    expect(await usage.readMonth(ada.accountId, month())).toMatchObject({ rendersUsed: 1 });
    const other = command('<p>other</p>', '{}', { key: 'k-1', bodyHash: 'h2' });
    expect((await rejection(pdfJobs.create(ada, other))).code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('fails the job and gives the unit back when the renderer itself fails (a fault injected)', async () => {
    const broken: Renderer = {
      render: async () => {
        throw new Error('the renderer is down');
      },
    };
    const { pdfJobs, usage, faults } = setup(undefined, broken);
    const ada = caller();
    const e = await rejection(pdfJobs.create(ada, command('<p>x</p>')));
    expect(e.jobId).toMatch(/^job_/);
    expect((await pdfJobs.get(ada, e.jobId as string)).job.status).toBe('failed');
    expect(await usage.readMonth(ada.accountId, month())).toMatchObject({ rendersUsed: 0 });
    expect(faults.length).toBeGreaterThan(0);
  });

  it("renders a saved template at its current or a named version; another account's public one offline", async () => {
    const requests: Parameters<Renderer['render']>[0][] = [];
    const memory = createMemoryRenderer();
    const watching: Renderer = {
      render: (request) => {
        requests.push(request);
        return memory.render(request);
      },
    };
    const { pdfJobs, templates } = setup(undefined, watching);
    const ada = caller();
    const bob = caller();
    const id = 'tpl_01JBQ5Y8S1W8M3ZT6YDV1KQ0XE';
    await templates.create(
      { id, owner_user_id: ada.accountId, name: 'T', is_public: false },
      { html: '<p>one {{ n }}</p>', variables: ['n'] },
    );
    await templates.revise(id, ada.accountId, { html: '<p>two {{ n }}</p>', variables: ['n'] });
    const saved = (version: number | null): RenderCommand => ({
      ...command('', '{"n": 5}'),
      source: { kind: 'saved', templateId: id, version },
    });
    const current = await pdfJobs.create(ada, saved(null));
    expect(current.job.job).toMatchObject({ status: 'completed', template_id: id, template_version: 2 });
    expect((await pdfJobs.create(ada, saved(1))).job.job.template_version).toBe(1);
    expect(requests.map((r) => [r.template.source, r.offline ?? false])).toEqual([
      ['<p>two {{ n }}</p>', false],
      ['<p>one {{ n }}</p>', false],
    ]);
    expect((await rejection(pdfJobs.create(bob, saved(null)))).code).toBe('PDF_TEMPLATE_NOT_FOUND');
    await templates.setVisibility(id, ada.accountId, true);
    // Another account names the version it checked.
    expect((await rejection(pdfJobs.create(bob, saved(null)))).code).toBe('VALIDATION_ERROR');
    await pdfJobs.create(bob, saved(2));
    expect(requests.at(-1)?.offline).toBe(true);
    // A variable the template cannot do without, missing: refused before a job is written.
    const missing = await rejection(
      pdfJobs.create(ada, { ...saved(null), variables: readTemplateDataText('{}') }),
    );
    expect(missing.jobId).toBeUndefined();
  });
});
