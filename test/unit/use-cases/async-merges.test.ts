/**
 * Async merges (issue 36; domain/merges/merges.ts `create` and `run`) as the composition root
 * builds them (functions/services.ts), on the memory parts (test/helpers/memory-services.ts),
 * run by the render queue's consumer (render-worker.ts) as the render worker runs it. Whatever
 * happens (a part that fails, a fault of ours once, on every attempt), the merge ends completed
 * or failed, and every unit is consumed by a completed job (the merge's, or a part's own) or
 * given back: `m.ledger` counts the month's units against the jobs.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { newWebhookId } from '../../../functions/domain/common/ids.js';
import type { Principal } from '../../../functions/domain/common/principal.js';
import {
  estimatedMergeMs,
  MERGE_PAGE_ESTIMATE_MS,
  MERGE_RENDER_ESTIMATE_MS,
  type MergeCommand,
} from '../../../functions/domain/merges/merges.js';
import type { RenderCommand } from '../../../functions/domain/renders/render-command.js';
import {
  asyncRenders,
  merges as mergesOf,
  pdfJobs as pdfJobsOf,
  runWorker,
} from '../../../functions/services.js';
import { checkSettings, type Settings } from '../../../functions/settings.js';
import { readTemplateDataText } from '../../../functions/templating/index.js';
import {
  caller,
  consumeRenderQueue,
  type MemoryServices,
  memoryServices,
} from '../../helpers/memory-services.js';
import { readPdf } from '../../helpers/pdf.js';
import { rejection } from '../../helpers/rejection.js';

let m: MemoryServices | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await m?.close();
  m = undefined;
});

const setup = (settings: Partial<Settings> = {}) => {
  const defaults = checkSettings({});
  m = memoryServices({
    at: new Date().toISOString(),
    settings: {
      plans: {
        ...defaults.plans,
        free: { ...defaults.plans.free, monthlyRenders: 20, rendersPerMinute: 100, concurrentRenders: 5 },
      },
      ...settings,
    },
  });
  return m;
};

const renderOf = (html: string): RenderCommand => ({
  source: { kind: 'inline', html, headerHtml: null, footerHtml: null },
  variables: readTemplateDataText('{}'),
  options: {},
  idempotency: null,
  mode: 'sync',
  webhookId: null,
});

const merge = (parts: MergeCommand['parts'], over: Partial<MergeCommand> = {}): MergeCommand => ({
  parts,
  pageNumbers: 'per_part',
  outline: true,
  metadata: undefined,
  async: true,
  webhookId: null,
  ...over,
});

const endpoint = async (s: MemoryServices, accountId: string): Promise<string> => {
  const id = newWebhookId();
  await s.endpoints.create(
    {
      id,
      account_id: accountId,
      url: 'https://example.com/hook',
      description: null,
      events: ['job.completed', 'job.failed'],
      created_at: '2026-11-28T10:00:00.000Z',
      sealed_secret: 'sealed',
    },
    10,
  );
  return id;
};

describe('async merges', () => {
  it('answers a pending merge held in the queue; the consumer merges it: one unit for the merge and one per part rendered, its order gone, its endpoint told', async () => {
    const s = setup();
    const ada: Principal = caller();
    const webhookId = await endpoint(s, ada.accountId);
    const pdfJobs = s.services.get(pdfJobsOf);
    const first = await pdfJobs.create(ada, renderOf('<p>First part</p>'));
    const view = await s.services.get(mergesOf).create(
      ada,
      merge(
        [
          { kind: 'job', jobId: first.job.job.id, title: 'One' },
          { kind: 'render', render: renderOf('<p>Second part</p>'), title: null },
        ],
        { webhookId },
      ),
    );
    expect(view.job).toMatchObject({
      kind: 'merge',
      mode: 'async',
      status: 'pending',
      webhook_id: webhookId,
    });
    expect(view.downloadUrl).toBeNull();
    // Held in the queue, its order kept, its message sent; nothing of its parts rendered yet.
    expect(s.renderOrders.size()).toBe(1);
    expect(s.renderQueue.messages()).toHaveLength(1);
    // The first render's unit, and the merge's own, held while it waits.
    expect(await s.ledger(ada.accountId)).toMatchObject({ open: 1, completed: 1, rendersUsed: 2 });

    expect((await consumeRenderQueue(s)).map((o) => o.kind)).toEqual(['done']);
    const merged = await s.jobs.get(ada.accountId, view.job.id, true);
    expect(merged).toMatchObject({ kind: 'merge', status: 'completed', page_count: 2, attempts: 1 });
    const pdf = await readPdf(s.storage.object(merged?.object_key as string)?.body as Uint8Array);
    expect(pdf.pages.map((p) => p.text.trim())).toEqual(['First part', 'Second part']);
    // The first render, the merge and the part rendered for it: three completed jobs, three units.
    expect(await s.ledger(ada.accountId)).toMatchObject({
      open: 0,
      completed: 3,
      failed: 0,
      unsettled: 0,
      rendersUsed: 3,
      inFlight: 0,
      billedAgrees: true,
    });
    expect(s.renderOrders.size()).toBe(0);
    expect((await s.events()).filter((e) => e.data.id === view.job.id).map((e) => e.type)).toEqual([
      'job.completed',
    ]);
  });

  it('runs async unasked when estimated over the sync budget, sync under it', async () => {
    expect(estimatedMergeMs([{ kind: 'render' }, { kind: 'job', pages: 30 }], 'per_part')).toBe(
      MERGE_RENDER_ESTIMATE_MS + 30 * MERGE_PAGE_ESTIMATE_MS,
    );
    // Continuous numbers may lay a part out twice.
    expect(estimatedMergeMs([{ kind: 'render' }], 'continuous')).toBe(2 * MERGE_RENDER_ESTIMATE_MS);

    const s = setup({ renderBudgetMs: MERGE_RENDER_ESTIMATE_MS + 1000 });
    const ada = caller();
    const merges = s.services.get(mergesOf);
    const one = await s.services.get(pdfJobsOf).create(ada, renderOf('<p>One</p>'));
    const job = { kind: 'job' as const, jobId: one.job.job.id, title: null };
    const part = { kind: 'render' as const, render: renderOf('<p>Part</p>'), title: null };
    const small = await merges.create(ada, merge([job, part], { async: false }));
    expect(small.job).toMatchObject({ mode: 'sync', status: 'completed' });
    const large = await merges.create(ada, merge([part, part], { async: false }));
    expect(large.job).toMatchObject({ mode: 'async', status: 'pending' });
    await consumeRenderQueue(s);
    expect(await s.jobs.get(ada.accountId, large.job.id)).toMatchObject({
      status: 'completed',
      page_count: 2,
    });
  });

  it('after a fault of ours, another attempt merges the parts rendered before without rendering or charging them again', async () => {
    const s = setup();
    const ada = caller();
    const render = vi.spyOn(s.renderer, 'render');
    vi.spyOn(s.assembler, 'assemble').mockRejectedValueOnce(new Error('S3 timed out'));
    const view = await s.services.get(mergesOf).create(
      ada,
      merge([
        { kind: 'render', render: renderOf('<p>Alpha</p>'), title: null },
        { kind: 'render', render: renderOf('<p>Beta</p>'), title: null },
      ]),
    );
    const outcomes = await consumeRenderQueue(s);
    expect(outcomes.map((o) => o.kind)).toEqual(['retry', 'done']);
    expect(render).toHaveBeenCalledTimes(2);
    expect(await s.jobs.get(ada.accountId, view.job.id, true)).toMatchObject({
      status: 'completed',
      attempts: 2,
      page_count: 2,
    });
    expect(await s.ledger(ada.accountId)).toMatchObject({
      open: 0,
      completed: 3,
      failed: 0,
      unsettled: 0,
      rendersUsed: 3,
      inFlight: 0,
      billedAgrees: true,
    });
    expect(s.renderOrders.size()).toBe(0);
  });

  it('fails for good after its last attempt with its unit given back; the parts it rendered are completed jobs of their own', async () => {
    const s = setup({ asyncMaxAttempts: 2 });
    const ada = caller();
    vi.spyOn(s.assembler, 'assemble').mockRejectedValue(new Error('S3 is unreachable'));
    const view = await s.services.get(mergesOf).create(
      ada,
      merge([
        { kind: 'render', render: renderOf('<p>Alpha</p>'), title: null },
        { kind: 'render', render: renderOf('<p>Beta</p>'), title: null },
      ]),
    );
    expect((await consumeRenderQueue(s)).map((o) => o.kind)).toEqual(['retry', 'done']);
    expect(await s.jobs.get(ada.accountId, view.job.id, true)).toMatchObject({
      status: 'failed',
      error: { code: 'INTERNAL_ERROR' },
    });
    // The merge's unit came back; each part's is its own completed job's (rendered once).
    expect(await s.ledger(ada.accountId)).toMatchObject({
      open: 0,
      completed: 2,
      failed: 1,
      unsettled: 0,
      rendersUsed: 2,
      inFlight: 0,
      billedAgrees: true,
    });
    expect(s.renderOrders.size()).toBe(0);
  });

  it('fails at once when a part fails to render, naming the part, with every unit given back', async () => {
    const s = setup();
    const ada = caller();
    const view = await s.services.get(mergesOf).create(
      ada,
      merge([
        { kind: 'render', render: renderOf('<p>Fine</p>'), title: null },
        { kind: 'render', render: renderOf('<p>{{ 1 / 0 }}</p>'), title: null },
      ]),
    );
    expect((await consumeRenderQueue(s)).map((o) => o.kind)).toEqual(['done']);
    const failed = await s.jobs.get(ada.accountId, view.job.id, true);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'INVALID_HTML_TEMPLATE' } });
    expect(failed?.error?.message).toMatch(/^parts\[1\]: /);
    // The first part rendered and is a completed job of its own; the second's and the merge's units came back.
    expect(await s.ledger(ada.accountId)).toMatchObject({
      open: 0,
      completed: 1,
      failed: 2,
      unsettled: 0,
      rendersUsed: 1,
    });
  });

  it('refuses before anything is held: a render part whose template does not exist, an unknown webhook endpoint', async () => {
    const s = setup();
    const ada = caller();
    const merges = s.services.get(mergesOf);
    const missing: RenderCommand = {
      ...renderOf(''),
      source: { kind: 'saved', templateId: 'tpl_01JDQ7Z8N6V2K3M4P5R6S7T8V9', version: null },
    };
    const notFound = await rejection(
      merges.create(
        ada,
        merge([
          { kind: 'render', render: renderOf('<p>Fine</p>'), title: null },
          { kind: 'render', render: missing, title: null },
        ]),
      ),
    );
    expect(notFound.code).toBe('PDF_TEMPLATE_NOT_FOUND');
    expect(notFound.message).toMatch(/^parts\[1\]: /);
    const noEndpoint = await rejection(
      merges.create(
        ada,
        merge(
          [
            { kind: 'render', render: renderOf('<p>A</p>'), title: null },
            { kind: 'render', render: renderOf('<p>B</p>'), title: null },
          ],
          { webhookId: newWebhookId() },
        ),
      ),
    );
    expect(noEndpoint.code).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
    expect(await s.ledger(ada.accountId)).toMatchObject({ open: 0, completed: 0, failed: 0, rendersUsed: 0 });
    expect(s.renderQueue.messages()).toHaveLength(0);
  });

  it('is merged on its own when the consumer takes it among other messages (a batch run), after their renders', async () => {
    const s = setup();
    const ada = caller();
    const view = await s.services.get(mergesOf).create(
      ada,
      merge([
        { kind: 'render', render: renderOf('<p>A</p>'), title: null },
        { kind: 'render', render: renderOf('<p>B</p>'), title: null },
      ]),
    );
    const single = await s.services
      .get(asyncRenders)
      .create(ada, { ...renderOf('<p>Alone</p>'), mode: 'async' });
    const outcomes = await s.services.get(runWorker).handleRun(s.renderQueue.drain());
    expect(outcomes).toMatchObject([
      { kind: 'done', why: 'merged' },
      { kind: 'done', why: 'completed' },
    ]);
    expect(await s.jobs.get(ada.accountId, view.job.id)).toMatchObject({
      status: 'completed',
      page_count: 2,
    });
    expect(await s.jobs.get(ada.accountId, single.job.job.id)).toMatchObject({ status: 'completed' });
    expect(await s.ledger(ada.accountId)).toMatchObject({ completed: 4, rendersUsed: 4, unsettled: 0 });
  });

  it('cancels a pending async merge: its unit back, and the consumer leaves it', async () => {
    const s = setup();
    const ada = caller();
    const render = vi.spyOn(s.renderer, 'render');
    const view = await s.services.get(mergesOf).create(
      ada,
      merge([
        { kind: 'render', render: renderOf('<p>A</p>'), title: null },
        { kind: 'render', render: renderOf('<p>B</p>'), title: null },
      ]),
    );
    const cancelled = await s.services.get(pdfJobsOf).cancel(ada, view.job.id);
    expect(cancelled.job).toMatchObject({ status: 'cancelled', kind: 'merge' });
    expect(await consumeRenderQueue(s)).toMatchObject([{ kind: 'done', why: 'already cancelled' }]);
    expect(render).not.toHaveBeenCalled();
    expect(await s.ledger(ada.accountId)).toMatchObject({ open: 0, unsettled: 0, rendersUsed: 0 });
  });
});
