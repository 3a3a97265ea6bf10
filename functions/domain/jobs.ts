/**
 * PDF jobs: pending → rendering → completed, or failed from either earlier state. Every state
 * change is a conditional write on the state it leaves, so a job never moves backwards. The store
 * is a port; the DynamoDB adapter is functions/adapters/dynamodb/jobs.ts.
 */
import type { Page } from './pagination.js';
import type { Diagnostics } from './ports.js';

export type JobStatus = 'pending' | 'rendering' | 'completed' | 'failed';

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
  readonly completed_at: string | null;
}

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

export type NewJob = Pick<Job, 'id' | 'account_id' | 'template_id' | 'template_version' | 'object_key'>;

export interface CompletedRender {
  readonly fileSizeBytes: number;
  readonly pageCount: number;
  readonly renderDurationMs: number;
  readonly diagnostics?: Diagnostics | undefined;
}

export interface JobStore {
  /** A pending job; refused if the id exists. */
  create(job: NewJob): Promise<Job>;
  markRendering(job: Job): Promise<Job>;
  complete(job: Job, result: CompletedRender): Promise<Job>;
  fail(job: Job, error: JobError, diagnostics?: Diagnostics | null): Promise<Job>;
  get(accountId: string, jobId: string): Promise<Job | undefined>;
  /** Newest first. */
  list(accountId: string, page: Page): Promise<Job[]>;
}
