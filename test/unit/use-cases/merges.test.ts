/**
 * The merge use case (domain/merges/merges.ts) on fakes: the memory job, usage, template and
 * idempotency stores, the memory renderer and storage (each passing its port's contract,
 * test/contract), the real PDF merge (pdf-lib) as the assembler over the memory bucket, and the
 * real job lifecycle. What it charges and gives back when a part fails; the PDFs are read with
 * pdfjs here and with poppler over HTTP (test/integration/merges.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { createMemoryIdempotencyStore } from '../../../functions/adapters/memory/idempotency.js';
import { createMemoryJobStore } from '../../../functions/adapters/memory/jobs.js';
import { createMemoryPdfStorage } from '../../../functions/adapters/memory/pdf-storage.js';
import { createMemoryRenderer } from '../../../functions/adapters/memory/renderer.js';
import { createMemoryTemplateStore } from '../../../functions/adapters/memory/templates.js';
import { createMemoryUsageStore } from '../../../functions/adapters/memory/usage.js';
import { mergePdfs } from '../../../functions/adapters/pdf/merge-pdfs.js';
import { ServiceError } from '../../../functions/domain/common/errors.js';
import type { Principal } from '../../../functions/domain/common/principal.js';
import { createJobLifecycle } from '../../../functions/domain/jobs/job-lifecycle.js';
import { createJobPresenter } from '../../../functions/domain/jobs/job-view.js';
import {
  createMerges,
  type MergeCommand,
  type PdfAssembler,
  pageNumberings,
} from '../../../functions/domain/merges/merges.js';
import { createPdfJobs } from '../../../functions/domain/renders/pdf-jobs.js';
import { createRenderCall } from '../../../functions/domain/renders/render-call.js';
import type { RenderCommand } from '../../../functions/domain/renders/render-command.js';
import { createTemplateResolver } from '../../../functions/domain/templates/render-template.js';
import { checkSettings } from '../../../functions/settings.js';
import { readTemplateDataText } from '../../../functions/templating/index.js';
import { templateParser } from '../../../functions/templating/parse-pool.js';
import { testClock } from '../../helpers/dynalite.js';
import { readPdf } from '../../helpers/pdf.js';

const setup = (monthlyRenders = 10) => {
  const clock = testClock(new Date().toISOString());
  const jobs = createMemoryJobStore(clock, { recordRetentionSeconds: 60 * 86_400 });
  const usage = createMemoryUsageStore(clock);
  const storage = createMemoryPdfStorage({ downloadUrlTtlSeconds: 900, uploadUrlTtlSeconds: 60, clock });
  const templates = createMemoryTemplateStore(clock);
  const onFault = () => {};
  const limits = {
    ...checkSettings({}),
    maxRenderedHtmlBytes: 100_000,
    maxPdfBytes: 1_000_000,
    maxPdfPages: 50,
  };
  const plans = { free: { monthlyRenders, rendersPerMinute: 100, concurrentRenders: 5 } };
  const lifecycle = createJobLifecycle({ jobs, usage, clock, limits, onFault });
  const render = createRenderCall({ storage, renderer: createMemoryRenderer(), limits, onFault });
  const present = createJobPresenter({ storage, clock, pdfRetentionDays: limits.pdfRetentionDays });
  const pdfJobs = createPdfJobs({
    jobs,
    usage,
    templates,
    idempotency: createMemoryIdempotencyStore({ clock, leaseMs: 60_000 }),
    lifecycle,
    render,
    present,
    resolver: createTemplateResolver({ templates, parser: templateParser, limits }),
    clock,
    plans,
    defaultPlan: 'free',
    limits,
    onFault,
  });
  // The S3 assembler's work over the memory bucket: read each part, merge, store.
  const assembler: PdfAssembler = {
    async assemble({ parts, objectKey, outline, metadata }) {
      const merged = await mergePdfs(
        parts.map((p) => ({ pdf: storage.object(p.objectKey)?.body as Uint8Array, title: p.title })),
        { outline, ...(metadata ? { metadata } : {}), now: clock.now() },
      );
      const target = await storage.uploadTarget(objectKey);
      await fetch(target.url, { method: 'PUT', headers: target.headers, body: merged.pdf });
      return {
        ok: true,
        fileSizeBytes: merged.pdf.byteLength,
        pageCount: merged.pageCount,
        renderDurationMs: 1,
      };
    },
  };
  const merges = createMerges({
    jobs,
    usage,
    lifecycle,
    pdfJobs,
    render,
    assembler,
    present,
    clock,
    plans,
    defaultPlan: 'free',
    limits,
  });
  return { jobs, usage, storage, pdfJobs, merges };
};

let accounts = 0;
const caller = (): Principal => ({
  accountId: `acct-merge-${++accounts}`,
  email: undefined,
  credential: 'session',
  plan: 'free',
});

const renderOf = (html: string): RenderCommand => ({
  source: { kind: 'inline', html, headerHtml: null, footerHtml: null },
  variables: readTemplateDataText('{}'),
  options: {},
  idempotency: null,
  mode: 'sync',
  webhookId: null,
});

const merge = (
  parts: MergeCommand['parts'],
  pageNumbers: MergeCommand['pageNumbers'] = 'per_part',
): MergeCommand => ({
  parts,
  pageNumbers,
  outline: true,
  metadata: undefined,
});

const failure = async (p: Promise<unknown>): Promise<ServiceError> => {
  try {
    await p;
  } catch (e) {
    if (e instanceof ServiceError) return e;
    throw e;
  }
  throw new Error('expected a ServiceError');
};

const month = () => new Date().toISOString().slice(0, 7);

describe('merges', () => {
  it('charges one unit for the merge and one per part rendered for it; the parts are jobs of their own', async () => {
    const { merges, pdfJobs, usage, storage } = setup();
    const ada = caller();
    const first = await pdfJobs.create(ada, renderOf('<p>First part</p>'));
    const view = await merges.create(
      ada,
      merge([
        { kind: 'job', jobId: first.job.job.id, title: 'One' },
        { kind: 'render', render: renderOf('<p>Second part</p>'), title: null },
      ]),
    );
    expect(view.job).toMatchObject({ kind: 'merge', status: 'completed', page_count: 2 });
    const pdf = await readPdf(storage.object(view.job.object_key)?.body as Uint8Array);
    expect(pdf.pages.map((p) => p.text.trim())).toEqual(['First part', 'Second part']);
    // The first render, the merge, the part rendered for it.
    expect(await usage.readMonth(ada.accountId, month())).toMatchObject({ rendersUsed: 3 });
    expect(
      (await pdfJobs.list(ada, { limit: 10, offset: 0 })).map((v) => v.job.kind ?? 'render').sort(),
    ).toEqual(['merge', 'render', 'render']);
  });

  it("fails the merge when a part's render fails, names the part, and gives the merge's unit back", async () => {
    const { merges, pdfJobs, usage, jobs } = setup();
    const ada = caller();
    const first = await pdfJobs.create(ada, renderOf('<p>Fine</p>'));
    const e = await failure(
      merges.create(
        ada,
        merge([
          { kind: 'job', jobId: first.job.job.id, title: null },
          { kind: 'render', render: renderOf('<p>{{ 1 / 0 }}</p>'), title: null },
        ]),
      ),
    );
    expect(e.code).toBe('INVALID_HTML_TEMPLATE');
    expect(e.message).toMatch(/^parts\[1\]: /);
    expect(e.details?.[0]?.field).toMatch(/^parts\[1\]/);
    const failed = await jobs.get(ada.accountId, e.jobId as string);
    expect(failed).toMatchObject({
      kind: 'merge',
      status: 'failed',
      error: { code: 'INVALID_HTML_TEMPLATE' },
    });
    // Only the first render is charged: the failed part's unit and the merge's came back.
    expect(await usage.readMonth(ada.accountId, month())).toMatchObject({ rendersUsed: 1 });
  });

  it("refuses another account's job, a pending one, and a plan with no unit left, holding nothing", async () => {
    const { merges, pdfJobs, usage } = setup(2);
    const ada = caller();
    const bob = caller();
    const mine = await pdfJobs.create(ada, renderOf('<p>Mine</p>'));
    const theirs = await pdfJobs.create(bob, renderOf('<p>Theirs</p>'));
    const notFound = await failure(
      merges.create(
        ada,
        merge([
          { kind: 'job', jobId: mine.job.job.id, title: null },
          { kind: 'job', jobId: theirs.job.job.id, title: null },
        ]),
      ),
    );
    expect(notFound).toMatchObject({ code: 'PDF_JOB_NOT_FOUND', jobId: undefined });
    expect(notFound.details).toEqual([{ field: 'parts[1].job_id', issue: 'no such job of this account' }]);
    await pdfJobs.create(ada, renderOf('<p>Second</p>'));
    // Both units of the month are used: the merge's own is refused.
    const quota = await failure(
      merges.create(
        ada,
        merge([
          { kind: 'job', jobId: mine.job.job.id, title: null },
          { kind: 'job', jobId: mine.job.job.id, title: null },
        ]),
      ),
    );
    expect(quota.code).toBe('PLAN_QUOTA_EXCEEDED');
    expect(await usage.readMonth(ada.accountId, month())).toMatchObject({ rendersUsed: 2 });
  });

  it('numbers pages across the parts: each starts after those before it, all of the same total', () => {
    expect(pageNumberings([1, 2, 3])).toEqual([
      { first: 1, pages: 1, total: 6 },
      { first: 2, pages: 2, total: 6 },
      { first: 4, pages: 3, total: 6 },
    ]);
  });
});
