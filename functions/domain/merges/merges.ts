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
 * merge's own PDF. A part given as a job is merged as it was printed: the service keeps no job's
 * template and variables to lay it out again (left: docs/contract.md, Amendment 36).
 */

import type { Plan } from '../../settings.js';
import type { UsageStore } from '../accounts/usage.js';
import { planAllowance } from '../accounts/usage.js';
import { monthOf } from '../common/clock.js';
import { ServiceError } from '../common/errors.js';
import { newJobId } from '../common/ids.js';
import type { Clock, PageNumbering, PdfMetadata, RenderResult } from '../common/ports.js';
import type { Principal } from '../common/principal.js';
import { checkDestination, type DestinationLookup } from '../destinations/destinations.js';
import type { JobLifecycle } from '../jobs/job-lifecycle.js';
import type { JobPresenter } from '../jobs/job-view.js';
import { fileExpiresAt, type Job, type JobStore, type JobView, pdfObjectKey } from '../jobs/jobs.js';
import type { PdfJobs } from '../renders/pdf-jobs.js';
import type { RenderCall } from '../renders/render-call.js';
import type { RenderCommand } from '../renders/render-command.js';
import type { AcceptedRender } from '../renders/render-order.js';

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
  /** The account's destination the merged PDF is delivered into (`destination_id`); absent or null: none. */
  readonly destinationId?: string | null;
}

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
  /** A part rendered for the merge: accepted and executed as a sync render is. */
  readonly pdfJobs: Pick<PdfJobs, 'prepare' | 'accept' | 'execute'>;
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
  };
}

const JOB_ID = /^job_[0-9A-HJKMNP-TV-Z]{26}$/;

/** Where a part laid out again for a merge goes: beside the merge's own PDF, with its retention. */
export const mergePartObjectKey = (accountId: string, mergeId: string, part: number): string =>
  `pdf/${accountId}/${mergeId}.part-${part}.pdf`;

/** Whether an accepted render prints page numbers a merge must make continuous. */
const printsPageNumbers = (accepted: AcceptedRender): boolean =>
  Boolean(accepted.template.header) ||
  Boolean(accepted.template.footer) ||
  accepted.options.pdf.pagedMedia === true;

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
  /** A part rendered for the merge: what it rendered, for its second layout. */
  readonly accepted?: AcceptedRender;
}

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

  /** A job part: the caller's own, completed, its file still kept. Nothing is held yet. */
  const jobPart = async (principal: Principal, index: number, jobId: string): Promise<Job> => {
    const field = `parts[${index}].job_id`;
    const job = JOB_ID.test(jobId) ? await jobs.get(principal.accountId, jobId) : undefined;
    if (!job) {
      throw new ServiceError('PDF_JOB_NOT_FOUND', `PDF job ${jobId} was not found`, {
        details: [{ field, issue: 'no such job of this account' }],
      });
    }
    const expires = fileExpiresAt(job, limits.pdfRetentionDays);
    const issue =
      job.status !== 'completed'
        ? `the job is ${job.status}: only a completed job can be merged`
        : expires && expires.getTime() <= clock.now().getTime()
          ? "the job's PDF is gone (past its retention period)"
          : undefined;
    if (issue)
      throw new ServiceError('VALIDATION_ERROR', `${field}: ${issue}`, { details: [{ field, issue }] });
    return job;
  };

  return {
    async create(principal: Principal, command: MergeCommand): Promise<JobView> {
      // Every part checked before anything is held: a refusal charges nothing.
      await checkDestination(deps.destinations, principal.accountId, command.destinationId);
      const found = await Promise.all(
        command.parts.map((part, i) => (part.kind === 'job' ? jobPart(principal, i, part.jobId) : undefined)),
      );
      const orders = command.parts.map((part, i) => {
        if (part.kind !== 'render') return undefined;
        try {
          return pdfJobs.prepare(part.render);
        } catch (e) {
          throw e instanceof ServiceError ? partError(i, '', e) : e;
        }
      });

      const plan = planAllowance(deps.plans, principal.plan, deps.defaultPlan);
      const month = monthOf(clock.now());
      await deps.usage.checkReservable(principal.accountId, plan, month);
      const id = newJobId();
      const opened = await lifecycle.open(
        {
          id,
          account_id: principal.accountId,
          kind: 'merge',
          template_id: null,
          template_version: null,
          object_key: pdfObjectKey(principal.accountId, id),
          mode: 'sync',
          webhook_id: null,
          batch_id: null,
          ...(command.destinationId ? { destination_id: command.destinationId } : {}),
        },
        plan,
        month,
      );
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
          if (part.kind === 'job' || !order) {
            ready.push({ job: found[i] as Job, title: part.title });
            continue;
          }
          let accepted: AcceptedRender;
          let view: JobView;
          try {
            accepted = await pdfJobs.accept(principal, order);
            view = await pdfJobs.execute(accepted);
          } catch (e) {
            if (e instanceof ServiceError) return await failWith(partError(i, '', e));
            throw e;
          }
          ready.push({ job: view.job, title: part.title, accepted });
        }

        const rendering = await lifecycle.markRendering(opened);
        const keys = await laidOut(opened, ready, command.pageNumbers);
        if (keys instanceof ServiceError) return await failWith(keys);

        const result = await deps.assembler.assemble({
          parts: ready.map((part, i) => ({ objectKey: keys[i] as string, title: part.title })),
          objectKey: opened.object_key,
          outline: command.outline,
          metadata: command.metadata,
          maxPdfBytes: limits.maxPdfBytes,
          maxPages: limits.maxPdfPages,
        });
        if (!result.ok) return await failWith(new ServiceError(result.code, result.message));
        return await deps.present(await lifecycle.complete({ job: opened, month }, rendering, result));
      } catch (e) {
        if (e instanceof ServiceError && e.jobId === opened.id) throw e;
        return await deps.present(await lifecycle.settle({ job: opened, month }, renewal, e));
      } finally {
        renewal.stop();
      }
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
      if (!accepted || !printsPageNumbers(accepted)) continue;
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
