/**
 * The merge use case (domain/merges/merges.ts) as the composition root builds it
 * (functions/services.ts), on the memory parts (test/helpers/memory-services.ts: the memory
 * stores, renderer and bucket, and the memory assembler, the S3 one's work on the memory bucket,
 * each passing its port's contract in test/contract) with the real job lifecycle. What it charges
 * and gives back when a part or the assembly fails; the PDFs are read with pdfjs here and with
 * poppler over HTTP (test/integration/merges.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../../functions/domain/common/principal.js';
import { type MergeCommand, pageNumberings } from '../../../functions/domain/merges/merges.js';
import type { RenderCommand } from '../../../functions/domain/renders/render-command.js';
import {
  asyncRenders as asyncRendersOf,
  batches as batchesOf,
  merges as mergesOf,
  pdfJobs as pdfJobsOf,
  renderWorker as renderWorkerOf,
  runWorker as runWorkerOf,
} from '../../../functions/services.js';
import { checkSettings } from '../../../functions/settings.js';
import { parseTemplateData, readTemplateDataText } from '../../../functions/templating/index.js';
import { type MemoryServices, memoryServices } from '../../helpers/memory-services.js';
import { readPdf } from '../../helpers/pdf.js';
import { rejection } from '../../helpers/rejection.js';

let m: MemoryServices | undefined;
afterEach(async () => {
  await m?.close();
  m = undefined;
});

const setup = (monthlyRenders = 10, maxPdfPages = 50) => {
  const defaults = checkSettings({});
  m = memoryServices({
    at: new Date().toISOString(),
    settings: {
      maxRenderedHtmlBytes: 100_000,
      maxPdfBytes: 1_000_000,
      maxPdfPages,
      plans: {
        ...defaults.plans,
        free: { ...defaults.plans.free, monthlyRenders, rendersPerMinute: 100, concurrentRenders: 5 },
      },
    },
  });
  return {
    jobs: m.jobs,
    usage: m.usage,
    storage: m.storage,
    faults: m.faults,
    pdfJobs: m.services.get(pdfJobsOf),
    merges: m.services.get(mergesOf),
  };
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

/** A render whose footer prints its page number. */
const footedRender = (html: string): RenderCommand => ({
  ...renderOf(html),
  source: { kind: 'inline', html, headerHtml: null, footerHtml: '<span class="pageNumber"></span>' },
});

const merge = (
  parts: MergeCommand['parts'],
  pageNumbers: MergeCommand['pageNumbers'] = 'per_part',
): MergeCommand => ({
  parts,
  pageNumbers,
  outline: true,
  metadata: undefined,
  async: false,
  webhookId: null,
});

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
    const e = await rejection(
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
    const notFound = await rejection(
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
    const quota = await rejection(
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

  it('fails a merge whose assembled document is over the page limit, and gives its unit back', async () => {
    // Each part has one page; three make more than the limit of two.
    const { merges, pdfJobs, usage, jobs, storage } = setup(10, 2);
    const ada = caller();
    const one = await pdfJobs.create(ada, renderOf('<p>One page</p>'));
    const e = await rejection(
      merges.create(
        ada,
        merge([
          { kind: 'job', jobId: one.job.job.id, title: null },
          { kind: 'job', jobId: one.job.job.id, title: null },
          { kind: 'job', jobId: one.job.job.id, title: null },
        ]),
      ),
    );
    expect(e.code).toBe('PDF_TOO_MANY_PAGES');
    expect(await jobs.get(ada.accountId, e.jobId as string)).toMatchObject({
      kind: 'merge',
      status: 'failed',
      error: { code: 'PDF_TOO_MANY_PAGES' },
    });
    // Only the part's own render is charged, and no merged PDF is stored.
    expect(await usage.readMonth(ada.accountId, month())).toMatchObject({ rendersUsed: 1 });
    expect(storage.keys()).toEqual([one.job.job.object_key]);
  });

  it('a job that prints page numbers keeps its order; continuous numbers lay it out again beside the merge, charging only the merge', async () => {
    const { merges, pdfJobs, usage, jobs, storage } = setup();
    const orders = (m as MemoryServices).renderOrders;
    const ada = caller();
    const footed = await pdfJobs.create(ada, footedRender('<p>With a footer</p>'));
    const plain = await pdfJobs.create(ada, renderOf('<p>Plain</p>'));
    expect(await jobs.get(ada.accountId, footed.job.job.id)).toMatchObject({ prints_page_numbers: true });
    // Only the job that prints page numbers keeps its order: its template, footer and variables as rendered.
    expect(await orders.kept(ada.accountId, footed.job.job.id)).toMatchObject({
      v: 1,
      field: 'html',
      template: {
        source: '<p>With a footer</p>',
        footer: '<span class="pageNumber"></span>',
        variables: '{}',
      },
    });
    expect(await orders.kept(ada.accountId, plain.job.job.id)).toBeUndefined();
    const ownPdf = storage.object(footed.job.job.object_key);
    const parts: MergeCommand['parts'] = [
      { kind: 'job', jobId: plain.job.job.id, title: null },
      { kind: 'job', jobId: footed.job.job.id, title: null },
    ];
    const merged = await merges.create(ada, merge(parts, 'continuous'));
    expect(merged.job).toMatchObject({ status: 'completed', page_count: 2 });
    // The footed part was laid out again beside the merge; the job's own PDF is untouched.
    expect(storage.keys()).toContain(`pdf/${ada.accountId}/${merged.job.id}.part-2.pdf`);
    expect(storage.object(footed.job.job.object_key)).toEqual(ownPdf);
    // Two renders and the merge: the second layout costs nothing.
    expect(await usage.readMonth(ada.accountId, month())).toMatchObject({ rendersUsed: 3 });
    // Per part, nothing is laid out again.
    const perPart = await merges.create(ada, merge(parts, 'per_part'));
    expect(storage.keys()).not.toContain(`pdf/${ada.accountId}/${perPart.job.id}.part-2.pdf`);
  });

  it('continuous refuses, by name and holding nothing, a job with no kept order (made before) and a protected one (no password kept)', async () => {
    const { merges, pdfJobs, usage } = setup();
    const orders = (m as MemoryServices).renderOrders;
    const ada = caller();
    const older = await pdfJobs.create(ada, footedRender('<p>Older</p>'));
    // As a job made before orders were kept.
    await orders.discardKept(ada.accountId, older.job.job.id);
    const locked = await pdfJobs.create(ada, {
      ...footedRender('<p>Locked</p>'),
      options: { protection: { owner_password: 'Correct-Horse-Battery-9' } },
    });
    const kept = await orders.kept(ada.accountId, locked.job.job.id);
    expect(kept).toEqual({ v: 1, withheld: 'protection' });
    expect(JSON.stringify(kept)).not.toContain('Correct-Horse');
    const before = await usage.readMonth(ada.accountId, month());
    for (const [jobId, issue] of [
      [older.job.job.id, /no kept order.*"per_part"/],
      [locked.job.job.id, /protected.*"per_part"/],
    ] as const) {
      const e = await rejection(
        merges.create(
          ada,
          merge(
            [
              { kind: 'render', render: renderOf('<p>Cover</p>'), title: null },
              { kind: 'job', jobId, title: null },
            ],
            'continuous',
          ),
        ),
      );
      expect(e.code).toBe('VALIDATION_ERROR');
      expect(e.details?.[0]).toMatchObject({ field: 'parts[1].job_id', issue: expect.stringMatching(issue) });
    }
    expect(await usage.readMonth(ada.accountId, month())).toEqual(before);
    // Per part, both merge as printed.
    const both = await merges.create(
      ada,
      merge([
        { kind: 'job', jobId: older.job.job.id, title: null },
        { kind: 'job', jobId: older.job.job.id, title: null },
      ]),
    );
    expect(both.job.status).toBe('completed');
  });

  it('an async render keeps its order when the consumer completes it (its pending order gone); a failed render keeps none', async () => {
    const { pdfJobs } = setup();
    const s = m as MemoryServices;
    const ada = caller();
    const pending = await s.services
      .get(asyncRendersOf)
      .create(ada, { ...footedRender('<p>Later</p>'), mode: 'async' });
    const id = pending.job.job.id;
    expect(await s.renderOrders.kept(ada.accountId, id)).toBeUndefined();
    for (const message of s.renderQueue.drain()) await s.services.get(renderWorkerOf).handle(message);
    expect(await s.jobs.get(ada.accountId, id)).toMatchObject({ status: 'completed' });
    expect(await s.renderOrders.get(ada.accountId, id)).toBeUndefined();
    expect(await s.renderOrders.kept(ada.accountId, id)).toMatchObject({
      template: { source: '<p>Later</p>' },
    });

    const failed = await rejection(pdfJobs.create(ada, footedRender('<p>{{ 1 / 0 }}</p>')));
    expect(failed.jobId).toBeDefined();
    expect(await s.renderOrders.kept(ada.accountId, failed.jobId as string)).toBeUndefined();
    expect(s.renderOrders.keptSize()).toBe(1);
  });

  it("a batch's items that print page numbers keep their orders (rendered in a run); a continuous merge of them charges one unit", async () => {
    const { merges, usage } = setup();
    const s = m as MemoryServices;
    const ada = caller();
    const { batch } = await s.services.get(batchesOf).create(ada, {
      source: {
        kind: 'inline',
        html: '<p>Item {{ n }}</p>',
        headerHtml: null,
        footerHtml: '<span class="pageNumber"></span>',
      },
      options: {},
      items: [1, 2, 3].map((n) => ({ variables: parseTemplateData(`{"n": ${n}}`) })),
      webhookId: null,
    });
    await s.services.get(runWorkerOf).handleRun(s.renderQueue.drain());
    const items = await s.batchStore.jobs(ada.accountId, batch.id, { limit: 10, offset: 0 });
    expect(items.map((j) => j.status)).toEqual(['completed', 'completed', 'completed']);
    for (const [i, job] of items.entries())
      expect(await s.renderOrders.kept(ada.accountId, job.id)).toMatchObject({
        template: { source: '<p>Item {{ n }}</p>', variables: `{"n":${i + 1}}` },
      });
    const merged = await merges.create(
      ada,
      merge(
        items.map((j) => ({ kind: 'job', jobId: j.id, title: null })),
        'continuous',
      ),
    );
    expect(merged.job.status).toBe('completed');
    expect(await usage.readMonth(ada.accountId, month())).toMatchObject({ rendersUsed: 4 });
  });

  it('an async merge lays a job part out again from its kept order when the consumer runs it', async () => {
    const { merges, pdfJobs, usage, storage } = setup();
    const s = m as MemoryServices;
    const ada = caller();
    const footed = await pdfJobs.create(ada, footedRender('<p>Footed</p>'));
    const pending = await merges.create(ada, {
      ...merge(
        [
          { kind: 'render', render: renderOf('<p>Cover</p>'), title: null },
          { kind: 'job', jobId: footed.job.job.id, title: null },
        ],
        'continuous',
      ),
      async: true,
    });
    expect(pending.job).toMatchObject({ status: 'pending', mode: 'async' });
    for (const message of s.renderQueue.drain()) await s.services.get(renderWorkerOf).handle(message);
    expect(await s.jobs.get(ada.accountId, pending.job.id)).toMatchObject({
      status: 'completed',
      page_count: 2,
    });
    expect(storage.keys()).toContain(`pdf/${ada.accountId}/${pending.job.id}.part-2.pdf`);
    // The footed render, the cover rendered for the merge, and the merge.
    expect(await usage.readMonth(ada.accountId, month())).toMatchObject({ rendersUsed: 3 });
  });

  it('numbers pages across the parts: each starts after those before it, all of the same total', () => {
    expect(pageNumberings([1, 2, 3])).toEqual([
      { first: 1, pages: 1, total: 6 },
      { first: 2, pages: 2, total: 6 },
      { first: 4, pages: 3, total: 6 },
    ]);
  });
});
