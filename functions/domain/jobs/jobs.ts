/**
 * PDF jobs: pending → rendering → completed, or failed from either earlier state. Every state
 * change is a conditional write on the state it leaves, so a job never moves backwards. The store
 * is a port; the DynamoDB adapter is functions/adapters/dynamodb/jobs.ts.
 *
 * Every job ends: a pending or rendering job carries a lease (`lease_until`) that its request
 * renews while it works; once it runs out, the sweeper (sweeper.ts) fails the job with
 * PDF_RENDERING_INTERRUPTED. A job also records the quota unit it holds (`unit`), so that after a
 * crash the month's counters can be worked out again from the jobs (usage.ts, reconcile).
 */

import type { Page } from '../common/pagination.js';
import type { JobEInvoice } from '../renders/e-invoice.js';
import type { Diagnostics } from './diagnostics.js';

export type JobStatus = 'pending' | 'rendering' | 'completed' | 'failed' | 'cancelled';

/** A job that ended: it never moves again. */
export const isEnded = (status: JobStatus): boolean => !(status === 'pending' || status === 'rendering');

/**
 * sync: the request renders and answers the ended job. async: the request answers 202 with the
 * pending job, and a queue consumer renders it (async-renders.ts, render-worker.ts).
 */
export type JobMode = 'sync' | 'async';

/** render: one document rendered; merge: parts put together into one (domain/merges/). */
export type JobKind = 'render' | 'merge';

export interface JobError {
  readonly code: string;
  readonly message: string;
}

export interface Job {
  readonly id: string;
  readonly account_id: string;
  readonly status: JobStatus;
  readonly template_id: string | null;
  /** The saved template's version it rendered; null for inline html (and for jobs made before versions). */
  readonly template_version: number | null;
  readonly object_key: string;
  readonly file_size_bytes: number | null;
  readonly page_count: number | null;
  readonly render_duration_ms: number | null;
  readonly error: JobError | null;
  /**
   * What happened inside the render's page (capped: ports.ts); null until the render ends, when it
   * ended before a page opened, and on jobs made before diagnostics.
   */
  readonly diagnostics?: Diagnostics | null;
  readonly created_at: string;
  readonly updated_at: string;
  /** When the job ended (completed, failed or cancelled); null while it is open. */
  readonly completed_at: string | null;
  /** When its (last) render attempt began: the claim, or a sync render's start. Absent: not yet. */
  readonly started_at?: string | null;
  /** A batch's item: the caller's string for it (`items[i].reference`). Absent: none. */
  readonly reference?: string;
  /** The download's file name (`file_name`, templated and sanitised at acceptance). Absent: `{id}.pdf`. */
  readonly file_name?: string;
  /** Epoch ms: while the unit is unsettled, when the sweeper may take the job over. Absent once settled. */
  readonly lease_until?: number;
  /** The month (`yyyy-mm`) whose quota unit the job holds or held. */
  readonly usage_month?: string;
  /** The unit while it is unsettled; absent once the job completed or its unit came back. */
  readonly unit?: UnitState;
  /** Absent on jobs made before async renders: sync. */
  readonly mode?: JobMode;
  /**
   * Render attempts begun: a sync job's one, an async job's claims by the consumer (each claim
   * adds one, and the count fences the claim's writes). Absent on jobs made before it.
   */
  readonly attempts?: number;
  /** The account's webhook endpoint told when the job ends (JobEvents); null or absent: none. */
  readonly webhook_id?: string | null;
  /** The batch the job is an item of; null or absent: none. */
  readonly batch_id?: string | null;
  /** The account's destination its PDF is delivered into once it completes; null or absent: none. */
  readonly destination_id?: string | null;
  /** Its delivery into that destination, once started (kept on the job's item by the deliverer). */
  readonly delivery?: JobDelivery;
  /** Absent: a render (every job before merges). */
  readonly kind?: JobKind;
  /**
   * Its item's index in the batch: where the consumer finds its variables in the batch's one
   * order. Absent on a batch's jobs made before batch orders (each has an order of its own).
   */
  readonly batch_item?: number;
  /** The e-invoice embedded in the PDF, validated at acceptance. Absent: none. */
  readonly e_invoice?: JobEInvoice;
  /**
   * The render prints page numbers (a header or footer, or paged_media's counters): its order is
   * kept beside its PDF, and a merge with continuous numbers lays it out again from it
   * (renders/kept-orders.ts). Absent: it prints none, or the job was made before issue 36's second part.
   */
  readonly prints_page_numbers?: true;
}

/** Whether a render prints page numbers: a header or footer, or paged media's counters. */
export const printsPageNumbers = (render: {
  readonly header?: string | null | undefined;
  readonly footer?: string | null | undefined;
  readonly options: { readonly pdf: { readonly pagedMedia?: boolean } };
}): boolean => Boolean(render.header) || Boolean(render.footer) || render.options.pdf.pagedMedia === true;
/** A job's delivery into its destination (domain/destinations/deliveries.ts). */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** A job's delivery, as GET /v1/pdf/{id} is to show it (`delivery`). */
export interface JobDelivery {
  readonly status: DeliveryStatus;
  readonly destination_id: string;
  readonly bucket: string;
  /** The rendered key; null until the first attempt rendered it. */
  readonly key: string | null;
  /** S3's ETag of the object written; null until delivered. */
  readonly etag: string | null;
  readonly delivered_at: string | null;
  /** Puts attempted so far. */
  readonly attempts: number;
  /** Why the last attempt failed (a reason and AWS's error name, never a credential); null when none did. */
  readonly error: string | null;
  /** Epoch ms: when the first attempt was due (the retry window opens then). */
  readonly window_started_at: number;
}

/**
 * - reserving: the job exists, its unit may or may not be held yet (the reservation is the next write);
 * - held: the unit is held (the job is pending or rendering);
 * - refunding: the job failed, the unit's return may or may not have happened yet.
 */
export type UnitState = 'reserving' | 'held' | 'refunding';

/** A job as the sweeper first sees it: an index entry, whose item may already be gone or settled. */
export interface OpenJobRef {
  readonly accountId: string;
  readonly jobId: string;
}

/** What a job whose holder died fails with. */
export const INTERRUPTED: JobError = {
  code: 'PDF_RENDERING_INTERRUPTED',
  message:
    'The render was interrupted (the service stopped or timed out) and did not finish; the render unit was given back.',
};

/** A job with the link to its PDF, signed afresh (null once the file is gone): what the API shows. */
export interface JobView {
  readonly job: Job;
  readonly downloadUrl: string | null;
  /** When the PDF is (or was) deleted: completed jobs only. */
  readonly fileExpiresAt: string | null;
  /** The PDF was deleted at the end of its retention period: why a completed job has no link. */
  readonly fileExpired: boolean;
}

const DAY_MS = 86_400_000;

/**
 * When a completed job's PDF goes: `retentionDays` after the job was created. S3's lifecycle rule
 * counts the same days from the upload, which comes after, and rounds up to the next midnight
 * UTC, so the object is never deleted before this time; reading the time rather than the bucket
 * means a job never hands out a link to an object that is gone.
 */
export const fileExpiresAt = (job: Job, retentionDays: number): Date | null =>
  job.status === 'completed' ? new Date(Date.parse(job.created_at) + retentionDays * DAY_MS) : null;

/**
 * A job's record (with its diagnostics and error) outlives its PDF by as long again: for that
 * second period the job answers `file_expired: true` instead of vanishing, so a client that comes
 * back late learns why there is no file. After it the record is gone (DynamoDB TTL on
 * `expires_at`; reads treat it as gone from that time, as TTL deletes late).
 */
export const JOB_RECORD_RETENTION_FACTOR = 2;
export const jobRecordRetentionSeconds = (pdfRetentionDays: number): number =>
  JOB_RECORD_RETENTION_FACTOR * pdfRetentionDays * 86_400;

/** Object key (in the PDF bucket) of a job's PDF. */
export const pdfObjectKey = (accountId: string, jobId: string): string => `pdf/${accountId}/${jobId}.pdf`;

export type NewJob = Pick<Job, 'id' | 'account_id' | 'template_id' | 'template_version' | 'object_key'> &
  Pick<
    Job,
    | 'mode'
    | 'webhook_id'
    | 'batch_id'
    | 'batch_item'
    | 'kind'
    | 'e_invoice'
    | 'reference'
    | 'file_name'
    | 'prints_page_numbers'
    | 'destination_id'
  >;

/**
 * A new job as every store writes it (`JobStore.create`, `BatchWrites.createJobs`): pending; with a
 * lease, its unit `reserving` and in the sweeper's index. Made at `at`.
 */
export const newJobRecord = (
  job: NewJob,
  at: string,
  lease?: { readonly month: string; readonly leaseUntil: number },
): Job => ({
  ...job,
  mode: job.mode ?? 'sync',
  attempts: 0,
  webhook_id: job.webhook_id ?? null,
  batch_id: job.batch_id ?? null,
  status: 'pending',
  ...(lease ? { usage_month: lease.month, unit: 'reserving' as const, lease_until: lease.leaseUntil } : {}),
  file_size_bytes: null,
  page_count: null,
  render_duration_ms: null,
  error: null,
  diagnostics: null,
  created_at: at,
  updated_at: at,
  completed_at: null,
  started_at: null,
});

/**
 * An async job's writes by its holder are fenced by its attempt (in every job store): once another claim (or the
 * sweeper's re-queue and a claim) moved `attempts` on, a stalled holder's writes fail.
 */
export const fenceOf = (job: Pick<Job, 'mode' | 'attempts'>): number | undefined =>
  job.mode === 'async' && job.attempts !== undefined ? job.attempts : undefined;

/**
 * How long a client polling an open job should wait before its next GET (the `Retry-After` of a
 * 202 and of a pending or rendering job's GET); undefined once the job ended. A render of a page
 * or two takes about a second, so a new job is worth a look after 2 s (1 s once it renders); the
 * longer it waits or renders, the longer the interval (a tenth of its age), up to 10 s, so that a
 * deep queue or a thousand-page document is not polled every second for minutes.
 */
export const pollAfterSeconds = (
  job: Pick<Job, 'status' | 'created_at'> & { readonly started_at?: string | null },
  now: Date = new Date(),
): number | undefined => {
  if (job.status !== 'pending' && job.status !== 'rendering') return undefined;
  const since = job.status === 'rendering' && job.started_at ? job.started_at : job.created_at;
  const ageSeconds = Math.max(0, (now.getTime() - Date.parse(since)) / 1000);
  const least = job.status === 'rendering' ? 1 : 2;
  return Math.min(10, Math.max(least, Math.ceil(ageSeconds / 10)));
};

/** A job still waiting for or under a render. */
export const isOpen = (job: Pick<Job, 'status'>): boolean =>
  job.status === 'pending' || job.status === 'rendering';

export interface CompletedRender {
  readonly fileSizeBytes: number;
  readonly pageCount: number;
  readonly renderDurationMs: number;
  readonly diagnostics?: Diagnostics | undefined;
}

export interface JobStore {
  /**
   * A pending job; refused if the id exists. With a lease: its unit `reserving`, in the sweeper's
   * index until `leaseUntil` (a job without one holds no unit).
   */
  create(job: NewJob, lease?: { readonly month: string; readonly leaseUntil: number }): Promise<Job>;
  /** Deletes a job whose unit was never held (the reservation was refused). */
  discard(job: Job): Promise<void>;
  /** pending → rendering, its unit held (and its lease moved to `leaseUntil`, when given). */
  markRendering(job: Job, leaseUntil?: number): Promise<Job>;
  /**
   * An async job waits in the queue: pending, its unit `held`, its lease moved to `leaseUntil`
   * (long enough for the queue to reach it; the sweeper re-queues it once the lease runs out).
   */
  hold(job: Job, leaseUntil: number): Promise<Job>;
  /**
   * The consumer takes an async job: pending, or rendering whose lease ran out before `now` (its
   * holder died), → rendering with `attempts + 1` and the lease moved; only if `attempts` is still
   * what `job` says (the fence: two consumers never both claim one attempt). Undefined: not claimed.
   */
  claim(job: Job, leaseUntil: number, now: number): Promise<Job | undefined>;
  /**
   * An async job goes back to the queue (pending, unit still held, lease moved): after a retryable
   * failure by its holder (fenced by `attempts`), or, with `expiredBefore`, by the sweeper when its
   * lease ran out before then. Undefined: the job was not in that state any more.
   */
  requeue(job: Job, leaseUntil: number, expiredBefore?: number): Promise<Job | undefined>;
  /**
   * A batch run's item its run never started (issue 43): back to the queue as `requeue` does, its
   * claim undone (`attempts - 1`), fenced by `attempts`: a run that did not render an item spends
   * none of its attempts. Its holder writes nothing more for it. Undefined: it was taken over.
   */
  release(job: Job, leaseUntil: number): Promise<Job | undefined>;
  /** Extends the lease of a pending or rendering job; false when the job is no longer either (lost). */
  renew(job: Job, leaseUntil: number): Promise<boolean>;
  /** rendering → completed; the unit is settled (it stays used). */
  complete(job: Job, result: CompletedRender): Promise<Job>;
  /**
   * pending or rendering → failed. With `settleBy`: its unit `refunding` until then (by then the
   * caller has given it back and called `settled`, or the sweeper reconciles the month); without:
   * it holds nothing and leaves the sweeper's index at once.
   */
  fail(job: Job, error: JobError, diagnostics?: Diagnostics | null, settleBy?: number): Promise<Job>;
  /**
   * pending → cancelled (never a rendering job: it finishes), its unit `refunding` until
   * `settleBy` (the caller gives it back and calls `settled`, or the sweeper reconciles the month).
   * Rejects (ConditionalCheckFailedException) when the job is no longer pending: the consumer's
   * claim and this write are conditional on the same status, so exactly one of them wins.
   */
  cancel(job: Pick<Job, 'account_id' | 'id'>, settleBy: number): Promise<Job>;
  /** The failed or cancelled job's unit came back: it leaves the open jobs. */
  settled(job: Pick<Job, 'account_id' | 'id'>): Promise<void>;
  /** Fails a pending or rendering job whose lease ran out before `now`; false if it was not. */
  failExpired(job: Pick<Job, 'account_id' | 'id'>, now: number): Promise<boolean>;
  /** Index entries of jobs whose lease ran out before `now`, oldest first, at most `limit`. */
  openBefore(now: number, limit: number): Promise<OpenJobRef[]>;
  /** Every job of the account that holds or held a unit of `month` (read consistently). */
  ofMonth(accountId: string, month: string): Promise<Job[]>;
  get(accountId: string, jobId: string, consistent?: boolean): Promise<Job | undefined>;
  /** Newest first. */
  list(accountId: string, page: Page): Promise<Job[]>;
}
