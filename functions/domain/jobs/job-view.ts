/**
 * A job as the API shows it (JobView): with a link to its PDF signed afresh while the file is
 * kept, and when the file goes. One presenter for every use case that answers or tells of a job
 * (renders, batches, webhook payloads).
 */

import type { Clock, PdfStorage } from '../common/ports.js';
import { fileExpiresAt, type Job, type JobView } from './jobs.js';

export interface JobPresenterDeps {
  /** Absent (a function without the bucket, which only ever tells of failed jobs): no link. */
  readonly storage?: Pick<PdfStorage, 'downloadUrl'>;
  readonly clock: Clock;
  readonly pdfRetentionDays: number;
}

export type JobPresenter = (job: Job) => Promise<JobView>;

export const createJobPresenter =
  ({ storage, clock, pdfRetentionDays }: JobPresenterDeps): JobPresenter =>
  async (job) => {
    const expires = fileExpiresAt(job, pdfRetentionDays);
    const expired = expires !== null && clock.now().getTime() >= expires.getTime();
    return {
      job,
      downloadUrl:
        storage && expires !== null && !expired
          ? await storage.downloadUrl(job.object_key, job.file_name ?? `${job.id}.pdf`)
          : null,
      fileExpiresAt: expires?.toISOString() ?? null,
      fileExpired: expired,
    };
  };
