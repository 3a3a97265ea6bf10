/**
 * Merges (POST /v1/merges): 2-200 parts, each one of the caller's completed jobs or a render made
 * for the merge, put together into one PDF, answered as a job of `kind: "merge"` with one link.
 *
 * A merge is one render unit (its own job's, through the job lifecycle like every job) plus one
 * per part rendered for it (each an ordinary job of its own, accepted and executed as a sync
 * render is: pdf-jobs.ts). Parts are checked before anything is held: another account's job, or
 * one that does not exist, answers 404 with nothing charged; one not completed, or whose file is
 * gone, 422.
 *
 * `page_numbers: "continuous"`: the page numbers a part prints (its header's and footer's
 * `pageNumber`/`totalPages`, and with paged_media `counter(page)`, `counter(pages)` and
 * `target-counter()`) count across the whole document. A part rendered for the merge that prints
 * them is laid out again with its place in the whole once every part's pages are known (the
 * renderer's page numbering: functions/renderer/navigation/page-numbering.ts), uploaded beside the
 * merge's own PDF. So is a part given as a job that prints page numbers, from the order the job
 * kept (domain/renders/kept-orders.ts): no unit is charged for it, and the job's own PDF stays as
 * it was. A job made before kept orders, or a protected one (its passwords are never kept), is
 * refused with continuous numbers by name, before anything is held. A job part that prints no
 * page numbers is merged as it was printed.
 *
 * Async merges (`"async": true`, `Prefer: respond-async`, or a merge estimated over the sync
 * budget: `estimatedMergeMs`): the same checks, then the merge's job is held in the render queue
 * (one unit, the plan's queue depth as an async render's) with its order stored
 * (merge-order.ts), and answered `202`. The render queue's consumer claims it as it claims a
 * render (render-worker.ts) and `run`s it: the same steps as a sync merge, its lease renewed, a
 * fault of ours retried while attempts remain (a part rendered before is merged, not rendered
 * again), a part's or the assembly's failure failing it with its unit given back.
 */

import type { Plan } from '../../settings.js';
import { readTemplateDataText } from '../../templating/index.js';
import type { UsageStore } from '../accounts/usage.js';
import { planAllowance } from '../accounts/usage.js';
import { monthOf } from '../common/clock.js';
import { isOverload, ServiceError } from '../common/errors.js';
import { newJobId } from '../common/ids.js';
import type {
  Clock,
  MessageQueue,
  PageNumbering,
  PdfMetadata,
  RenderResult,
  WebhookEndpoints,
} from '../common/ports.js';
import type { Principal } from '../common/principal.js';
import { checkDestination, type DestinationLookup } from '../destinations/destinations.js';
import type { JobLifecycle } from '../jobs/job-lifecycle.js';
import type { JobPresenter } from '../jobs/job-view.js';
import {
  fileExpiresAt,
  type Job,
  type JobStore,
  type JobView,
  pdfObjectKey,
  printsPageNumbers,
} from '../jobs/jobs.js';
import {
  type RenderMessage,
  type RenderOrders,
  renderMessage,
  storedOrder,
} from '../renders/async-renders.js';
import { isWithheld } from '../renders/kept-orders.js';
import type { PdfJobs } from '../renders/pdf-jobs.js';
import type { RenderCall } from '../renders/render-call.js';
import type { RenderCommand } from '../renders/render-command.js';
import type { AcceptedRender, RenderOrder } from '../renders/render-order.js';
import type { StoredMergeOrder, StoredRenderPart } from './merge-order.js';

export const MIN_MERGE_PARTS = 2;
export const MAX_MERGE_PARTS = 200;

export type PageNumbers = 'continuous' | 'per_part';

export type MergePartCommand =
  | { readonly kind: 'job'; readonly jobId: string; readonly title: string | null }
  | { readonly kind: 'render'; readonly render: RenderCommand; readonly title: string | null };

export interface MergeCommand {
  readonly parts: readonly MergePartCommand[];
  readonly pageNumbers: PageNumbers;
  /** One top entry per part, the part's own bookmarks beneath. */
  readonly outline: boolean;
  readonly metadata: PdfMetadata | undefined;
  /** `"async": true` or `Prefer: respond-async`: answered 202 whatever its size. */
  readonly async: boolean;
  /** The account's webhook endpoint told when the merge ends; null: none. */
  readonly webhookId: string | null;
  /** The account's destination the merged PDF is delivered into (`destination_id`); absent or null: none. */
  readonly destinationId?: string | null;
}

/**
 * How long a merge is expected to take, to decide sync or async before anything runs: each part
 * rendered for it counts `MERGE_RENDER_ESTIMATE_MS` (twice with continuous numbers: it may be
 * laid out again), each page of a job part `MERGE_PAGE_ESTIMATE_MS` (read, copied and written
 * by the assembler). Over the sync render budget (RENDER_BUDGET_MS, 25 s by default) the merge
 * runs async: with the defaults, 12 render parts (6 with continuous numbers) or 2,500 pages of
 * job parts. The estimates are deliberately high (an invoice renders in well under a second):
 * a merge answered 202 costs the caller a poll, one that overruns the API's 29 s costs a retry.
 */
export const MERGE_RENDER_ESTIMATE_MS = 2_000;
export const MERGE_PAGE_ESTIMATE_MS = 10;

export const estimatedMergeMs = (
  parts: readonly { readonly kind: 'job' | 'render'; readonly pages?: number; readonly relaid?: boolean }[],
  pageNumbers: PageNumbers,
): number =>
  parts.reduce(
    (ms, part) =>
      ms +
      (part.kind === 'render'
        ? MERGE_RENDER_ESTIMATE_MS * (pageNumbers === 'continuous' ? 2 : 1)
        : // A job part laid out again from its kept order: one layout, then merged.
          (part.relaid ? MERGE_RENDER_ESTIMATE_MS : 0) + (part.pages ?? 0) * MERGE_PAGE_ESTIMATE_MS),
    0,
  );

/** One part as the assembler reads it. */
export interface AssemblyPart {
  readonly objectKey: string;
  /** Its top outline entry; null: the part's own document title, else "Part N". */
  readonly title: string | null;
}

export interface AssemblyRequest {
  readonly parts: readonly AssemblyPart[];
  /** Where the merged PDF goes. */
  readonly objectKey: string;
  readonly outline: boolean;
  readonly metadata: PdfMetadata | undefined;
  readonly maxPdfBytes: number;
  readonly maxPages: number;
}

/**
 * Puts parts' PDFs together into one, stored at `objectKey` (the S3 adapter reads and writes the
 * bucket: functions/adapters/s3/pdf-assembly.ts). A failure is a result, as a render's is.
 */
export interface PdfAssembler {
  assemble(request: AssemblyRequest): Promise<RenderResult>;
}

export interface MergeDeps {
  /** A merge's destination_id, checked to be the caller's. Absent: one is refused (404). */
  readonly destinations?: DestinationLookup;
  readonly jobs: Pick<JobStore, 'get'>;
  readonly usage: Pick<UsageStore, 'checkReservable'>;
  readonly lifecycle: JobLifecycle;
  /** A part rendered for the merge: checked, accepted and executed as a sync render is. */
  readonly pdfJobs: Pick<PdfJobs, 'prepare' | 'check' | 'accept' | 'execute'>;
  /** A part laid out again with its place in the whole (no job of its own: the part's job is). */
  readonly render: RenderCall;
  readonly assembler: PdfAssembler;
  readonly present: JobPresenter;
  readonly clock: Clock;
  readonly plans: Readonly<Record<string, Plan>>;
  readonly defaultPlan: string;
  readonly limits: {
    readonly pdfRetentionDays: number;
    readonly maxPdfBytes: number;
    readonly maxPdfPages: number;
    /** The sync render budget: a merge estimated over it runs async. */
    readonly renderBudgetMs: number;
  };
  /** An async merge's order, and the render queue its message goes to (the consumer runs it). */
  readonly orders: RenderOrders;
  readonly queue: MessageQueue<RenderMessage>;
  /** Absent: a merge's webhook_id is not checked against the account's endpoints. */
  readonly webhooks?: WebhookEndpoints;
  readonly onFault: (message: string, error: unknown) => void;
}

const JOB_ID = /^job_[0-9A-HJKMNP-TV-Z]{26}$/;

/** Where a part laid out again for a merge goes: beside the merge's own PDF, with its retention. */
export const mergePartObjectKey = (accountId: string, mergeId: string, part: number): string =>
  `pdf/${accountId}/${mergeId}.part-${part}.pdf`;

/** Each part's first page and the total, from the parts' page counts in order. */
export const pageNumberings = (pages: readonly number[]): PageNumbering[] => {
  const total = pages.reduce((a, b) => a + b, 0);
  let first = 1;
  return pages.map((count) => {
    const numbering = { first, pages: count, total };
    first += count;
    return numbering;
  });
};

interface ReadyPart {
  readonly job: Job;
  readonly title: string | null;
  /** What it rendered, for its second layout: a part rendered for the merge, or a job part's kept order. */
  readonly accepted?: AcceptedRender;
}

/**
 * Failures of an async merge's attempt that another attempt may not repeat (our faults, the
 * renderer's or the bucket's capacity, the plan's concurrency): the consumer retries the merge
 * (render-worker.ts `faulted`) rather than fail it for good.
 */
const RETRIED: ReadonlySet<string> = new Set([
  'INTERNAL_ERROR',
  'PDF_RENDERING_INTERRUPTED',
  'SERVICE_BUSY',
  'PDF_STORAGE_FAILED',
  'CONCURRENCY_LIMIT_EXCEEDED',
]);
const retriedLater = (e: unknown): boolean =>
  !(e instanceof ServiceError) || RETRIED.has(e.code) || isOverload(e);

export const createMerges = (deps: MergeDeps) => {
  const { jobs, lifecycle, pdfJobs, clock, limits } = deps;

  const partError = (index: number, field: string, e: ServiceError): ServiceError =>
    new ServiceError(e.code, `parts[${index}]: ${e.message}`, {
      details: (e.details ?? [{ field: '', issue: e.message }]).map((d) => ({
        ...d,
        field: d.field ? `parts[${index}].${d.field}` : `parts[${index}]${field}`,
      })),
      ...(e.jobId ? { jobId: e.jobId } : {}),
      ...(e.retryAfterSeconds !== undefined ? { retryAfterSeconds: e.retryAfterSeconds } : {}),
    });

  /**
   * A job part: the caller's own, completed, its file still kept; with continuous numbers, one
   * that prints page numbers comes with its kept order (`accepted`), to be laid out again. Nothing
   * is held yet.
   */
  const jobPart = async (
    principal: Principal,
    index: number,
    jobId: string,
    pageNumbers: PageNumbers,
  ): Promise<{ job: Job; accepted?: AcceptedRender }> => {
    const field = `parts[${index}].job_id`;
    const job = JOB_ID.test(jobId) ? await jobs.get(principal.accountId, jobId) : undefined;
    if (!job) {
      throw new ServiceError('PDF_JOB_NOT_FOUND', `PDF job ${jobId} was not found`, {
        details: [{ field, issue: 'no such job of this account' }],
      });
    }
    const refuse = (issue: string) =>
      new ServiceError('VALIDATION_ERROR', `${field}: ${issue}`, { details: [{ field, issue }] });
    const expires = fileExpiresAt(job, limits.pdfRetentionDays);
    if (job.status !== 'completed')
      throw refuse(`the job is ${job.status}: only a completed job can be merged`);
    if (expires && expires.getTime() <= clock.now().getTime())
      throw refuse("the job's PDF is gone (past its retention period)");
    if (pageNumbers !== 'continuous' || job.prints_page_numbers !== true) return { job };
    const kept = await deps.orders.kept(principal.accountId, job.id);
    const per = 'merge with "page_numbers": "per_part", or give the part as a render body';
    if (!kept)
      throw refuse(
        `the job prints page numbers but has no kept order to lay it out again with continuous numbers (made before orders were kept, or its order could not be kept): ${per}`,
      );
    if (isWithheld(kept))
      throw refuse(
        `the job prints page numbers and is protected: its passwords are never kept, so it cannot be laid out again with continuous numbers: ${per}`,
      );
    const { v: _, ...rendered } = kept;
    return { job, accepted: { job, month: job.usage_month ?? monthOf(clock.now()), ...rendered } };
  };

  /** A render part: its options, template and variables checked as a render's; nothing held. */
  const renderPart = async (
    principal: Principal,
    index: number,
    render: RenderCommand,
  ): Promise<RenderOrder> => {
    try {
      const order = pdfJobs.prepare(render);
      await pdfJobs.check(principal, order, render.mode);
      return order;
    } catch (e) {
      throw e instanceof ServiceError ? partError(index, '', e) : e;
    }
  };

  /** A part rendered for the merge: a job and a unit of its own, as a sync render; its error named. */
  const renderFor = async (principal: Principal, index: number, order: RenderOrder) => {
    try {
      const accepted = await pdfJobs.accept(principal, order);
      const view = await pdfJobs.execute(accepted);
      return { job: view.job, accepted };
    } catch (e) {
      throw e instanceof ServiceError ? partError(index, '', e) : e;
    }
  };

  /** The parts laid out (continuous numbers) and assembled: the merge completed, or the error it fails with. */
  const assembleInto = async (
    merge: Job,
    month: string,
    rendering: Job,
    ready: readonly ReadyPart[],
    command: Pick<MergeCommand, 'pageNumbers' | 'outline' | 'metadata'>,
  ): Promise<Job | ServiceError> => {
    const keys = await laidOut(merge, ready, command.pageNumbers);
    if (keys instanceof ServiceError) return keys;
    const result = await deps.assembler.assemble({
      parts: ready.map((part, i) => ({ objectKey: keys[i] as string, title: part.title })),
      objectKey: merge.object_key,
      outline: command.outline,
      metadata: command.metadata,
      maxPdfBytes: limits.maxPdfBytes,
      maxPages: limits.maxPdfPages,
    });
    if (!result.ok) return new ServiceError(result.code, result.message);
    return lifecycle.complete({ job: merge, month }, rendering, result);
  };

  /** An accepted async merge: its order stored, held in the render queue, its message sent (as async-renders.ts submits). */
  const enqueue = async (
    principal: Principal,
    opened: Job,
    month: string,
    command: MergeCommand,
  ): Promise<JobView> => {
    const order: StoredMergeOrder = {
      v: 1,
      kind: 'merge',
      principal: { accountId: principal.accountId, plan: principal.plan, credential: principal.credential },
      parts: command.parts.map((part) =>
        part.kind === 'job'
          ? part
          : ({
              kind: 'render',
              title: part.title,
              source: part.render.source,
              variables: part.render.variables.text,
              options: part.render.options,
            } satisfies StoredRenderPart),
      ),
      pageNumbers: command.pageNumbers,
      outline: command.outline,
      metadata: command.metadata,
    };
    try {
      const [held] = await Promise.all([
        lifecycle.hold(opened),
        deps.orders.put(opened.account_id, opened.id, order),
      ]);
      await deps.queue.send(renderMessage(opened), { groupId: opened.account_id });
      return await deps.present(held);
    } catch (e) {
      deps.onFault('queueing an async merge failed', e);
      const message =
        'The merge could not be queued because of a fault of the service; the render unit was given back.';
      await lifecycle.fail(opened, month, { code: 'INTERNAL_ERROR', message });
      throw new ServiceError('INTERNAL_ERROR', message, { jobId: opened.id, cause: e });
    }
  };

  return {
    /**
     * POST /v1/merges: the completed (or failed) merge when it runs sync, or the pending one
     * (`mode: "async"`, answered 202) when asked or estimated over the sync budget.
     */
    async create(principal: Principal, command: MergeCommand): Promise<JobView> {
      // Every part checked before anything is held: a refusal charges nothing.
      await checkDestination(deps.destinations, principal.accountId, command.destinationId);
      // Read side by side; a refusal names the first part refused, whichever answered first.
      const settled = await Promise.allSettled(
        command.parts.map((part, i) =>
          part.kind === 'job' ? jobPart(principal, i, part.jobId, command.pageNumbers) : undefined,
        ),
      );
      const refused = settled.find((r) => r.status === 'rejected');
      if (refused) throw refused.reason;
      const found = settled.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
      const orders: (RenderOrder | undefined)[] = [];
      for (const [i, part] of command.parts.entries())
        orders.push(part.kind === 'render' ? await renderPart(principal, i, part.render) : undefined);
      const { webhookId } = command;
      if (
        webhookId !== null &&
        deps.webhooks &&
        !(await deps.webhooks.exists(principal.accountId, webhookId))
      ) {
        throw new ServiceError('WEBHOOK_ENDPOINT_NOT_FOUND', `Webhook endpoint ${webhookId} was not found`, {
          details: [{ field: 'webhook_id', issue: 'no such webhook endpoint of this account' }],
        });
      }
      const estimate = estimatedMergeMs(
        command.parts.map((part, i) => ({
          kind: part.kind,
          pages: found[i]?.job.page_count ?? 0,
          relaid: found[i]?.accepted !== undefined,
        })),
        command.pageNumbers,
      );
      const mode = command.async || estimate > limits.renderBudgetMs ? 'async' : 'sync';

      const plan = planAllowance(deps.plans, principal.plan, deps.defaultPlan);
      const month = monthOf(clock.now());
      await deps.usage.checkReservable(principal.accountId, plan, month, undefined, mode !== 'async');
      const id = newJobId();
      const opened = await lifecycle.open(
        {
          id,
          account_id: principal.accountId,
          kind: 'merge',
          template_id: null,
          template_version: null,
          object_key: pdfObjectKey(principal.accountId, id),
          mode,
          webhook_id: webhookId,
          batch_id: null,
          ...(command.destinationId ? { destination_id: command.destinationId } : {}),
        },
        plan,
        month,
      );
      if (mode === 'async') return enqueue(principal, opened, month, command);

      const renewal = lifecycle.renewing(opened);
      const failWith = async (error: ServiceError): Promise<never> => {
        await lifecycle.fail(opened, month, { code: error.code, message: error.message });
        throw new ServiceError(error.code, error.message, {
          ...(error.details ? { details: error.details } : {}),
          jobId: opened.id,
        });
      };
      try {
        // The parts rendered for the merge, one after another (the renderer's capacity is shared).
        const ready: ReadyPart[] = [];
        for (const [i, part] of command.parts.entries()) {
          const order = orders[i];
          const jobFound = found[i];
          if (part.kind === 'job' || !order) {
            if (jobFound) ready.push({ ...jobFound, title: part.title });
            continue;
          }
          try {
            ready.push({ ...(await renderFor(principal, i, order)), title: part.title });
          } catch (e) {
            if (e instanceof ServiceError) return await failWith(e);
            throw e;
          }
        }
        const rendering = await lifecycle.markRendering(opened);
        const outcome = await assembleInto(opened, month, rendering, ready, command);
        if (outcome instanceof ServiceError) return await failWith(outcome);
        return await deps.present(outcome);
      } catch (e) {
        if (e instanceof ServiceError && e.jobId === opened.id) throw e;
        return await deps.present(await lifecycle.settle({ job: opened, month }, renewal, e));
      } finally {
        renewal.stop();
      }
    },

    /**
     * An async merge the render queue's consumer claimed (render-worker.ts): its parts rendered
     * (those an earlier attempt rendered are merged as they are), laid out and assembled. Answers
     * the merge as it ended, completed or failed (its unit given back); throws what another
     * attempt may mend (a fault of ours, a busy renderer), which the consumer retries.
     */
    async run(claimed: Job, month: string, order: StoredMergeOrder): Promise<Job> {
      const principal: Principal = { ...order.principal, email: undefined };
      const fail = async (error: ServiceError): Promise<Job> => {
        const failed = await lifecycle.fail(claimed, month, { code: error.code, message: error.message });
        if (!failed) throw new Error(`failing merge ${claimed.id} (${error.code}) did not go through`);
        return failed;
      };
      let stored = order;
      const ready: ReadyPart[] = [];
      for (const [i, part] of order.parts.entries()) {
        if (part.kind === 'job') {
          try {
            ready.push({
              ...(await jobPart(principal, i, part.jobId, order.pageNumbers)),
              title: part.title,
            });
          } catch (e) {
            if (e instanceof ServiceError) return fail(e);
            throw e;
          }
          continue;
        }
        const earlier = part.done ? await jobs.get(principal.accountId, part.done.jobId) : undefined;
        if (part.done && earlier?.status === 'completed') {
          const { v: _, ...rendered } = part.done.order;
          const accepted = { job: earlier, month: earlier.usage_month ?? month, ...rendered };
          ready.push({ job: earlier, title: part.title, accepted });
          continue;
        }
        let rendered: Awaited<ReturnType<typeof renderFor>>;
        try {
          const render: RenderCommand = {
            source: part.source,
            variables: readTemplateDataText(part.variables),
            options: part.options,
            idempotency: null,
            mode: 'sync',
            webhookId: null,
          };
          rendered = await renderFor(principal, i, pdfJobs.prepare(render));
        } catch (e) {
          if (retriedLater(e)) throw e;
          return fail(e as ServiceError);
        }
        ready.push({ ...rendered, title: part.title });
        // Kept for another attempt: the part is merged from its job, not rendered and charged again.
        const done = { jobId: rendered.job.id, order: storedOrder(rendered.accepted) };
        stored = { ...stored, parts: stored.parts.map((p, j) => (j === i ? { ...part, done } : p)) };
        await deps.orders.put(principal.accountId, claimed.id, stored);
      }
      const outcome = await assembleInto(claimed, month, claimed, ready, order);
      if (!(outcome instanceof ServiceError)) return outcome;
      if (retriedLater(outcome)) throw outcome;
      return fail(outcome);
    },
  };

  /**
   * Each part's object: as it was printed, or (continuous numbers) laid out again at its place in
   * the whole. A second layout that comes out with another page count would make every later
   * number wrong: it fails the merge rather than print them.
   */
  async function laidOut(
    merge: Job,
    parts: readonly ReadyPart[],
    pageNumbers: PageNumbers,
  ): Promise<string[] | ServiceError> {
    const keys = parts.map((p) => p.job.object_key);
    if (pageNumbers !== 'continuous') return keys;
    const numberings = pageNumberings(parts.map((p) => p.job.page_count ?? 0));
    for (const [i, part] of parts.entries()) {
      const numbering = numberings[i] as PageNumbering;
      const { accepted } = part;
      if (!accepted || !printsPageNumbers({ ...accepted.template, options: accepted.options })) continue;
      if (numbering.first === 1 && numbering.total === numbering.pages) continue;
      const objectKey = mergePartObjectKey(merge.account_id, merge.id, i + 1);
      const result = await deps.render({
        ...accepted,
        job: { ...accepted.job, object_key: objectKey },
        options: { ...accepted.options, pdf: { ...accepted.options.pdf, pageNumbering: numbering } },
      });
      if (!result.ok) return new ServiceError(result.code, `parts[${i}]: ${result.message}`);
      if (result.pageCount !== numbering.pages) {
        return new ServiceError(
          'PDF_RENDERING_FAILED',
          `parts[${i}]: laid out with continuous page numbers it has ${result.pageCount} pages instead of ${numbering.pages}; merge it with "page_numbers": "per_part"`,
        );
      }
      keys[i] = objectKey;
    }
    return keys;
  }
};

export type Merges = ReturnType<typeof createMerges>;
