/** What the pdf resource answers with: the job, as the API shows it, and its diagnostics. */
import { z } from 'zod';
import { Reply } from '../core/http.js';
import {
  DIAGNOSTIC_TYPES,
  MAX_DIAGNOSTIC_ENTRIES,
  MAX_DIAGNOSTIC_MESSAGE_CHARACTERS,
  MAX_DIAGNOSTIC_URL_CHARACTERS,
  MAX_DIAGNOSTICS_BYTES,
} from '../domain/jobs/diagnostics.js';
import { type JobView, pollAfterSeconds } from '../domain/jobs/jobs.js';
import { prefersAsync } from './request.js';

export const diagnosticsSchema = z
  .object({
    entries: z
      .array(
        z.object({
          type: z
            .enum(DIAGNOSTIC_TYPES)
            .describe(
              'console: a console.error; page_error: an uncaught exception; resource: a request that was blocked by the egress policy, failed, or was still loading at the deadline; missing_glyph: characters no font could draw; unsafe_link: a link in the PDF whose target is not http:, https:, mailto: or in the document, removed from the PDF (its text stays)',
            ),
          message: z
            .string()
            .describe(
              `the text (at most ${MAX_DIAGNOSTIC_MESSAGE_CHARACTERS} characters); for a resource why it did not load, e.g. "blocked: not a public http(s) address", "failed: net::ERR_CONNECTION_REFUSED", "failed: HTTP 404"`,
            ),
          url: z
            .string()
            .optional()
            .describe(
              `resource: its URL; unsafe_link: the removed link's target (at most ${MAX_DIAGNOSTIC_URL_CHARACTERS} characters)`,
            ),
          count: z.number().int().min(1).describe('how many times the same entry happened'),
        }),
      )
      .describe('in the order they first happened'),
    truncated: z
      .boolean()
      .describe(
        `entries were left out to keep within ${MAX_DIAGNOSTIC_ENTRIES} entries and ${MAX_DIAGNOSTICS_BYTES} bytes as JSON`,
      ),
  })
  .describe("what happened inside the render's page; null before the render ends or when no page opened");

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds, e.g. 2026-11-21T10:00:00.000Z');

/** A job as the API shows it (spec fields plus template_id, template_version, page_count, error, diagnostics). */
export const jobSchema = z.object({
  id: z.string().describe('job_ followed by a ULID'),
  status: z
    .enum(['pending', 'rendering', 'completed', 'failed', 'cancelled'])
    .describe(
      "cancelled: a pending async job cancelled (DELETE /v1/pdf/{job_id}, or its batch's cancel); its unit was given back",
    ),
  download_url: z
    .string()
    .nullable()
    .describe(
      'presigned S3 GET, valid 15 minutes by default, signed afresh on each read; null until the job completes, for a failed job, and once the PDF has expired (file_expired)',
    ),
  file_expires_at: timestamp
    .nullable()
    .describe(
      "completed jobs: when the PDF is deleted (the deployment's PDF retention after created_at); null otherwise",
    ),
  file_expired: z
    .boolean()
    .describe(
      'true once the PDF has been deleted at the end of its retention period: download_url is null for that reason',
    ),
  file_size_bytes: z.number().int().nullable(),
  render_duration_ms: z.number().int().nullable(),
  page_count: z.number().int().nullable(),
  template_id: z.string().nullable(),
  template_version: z
    .number()
    .int()
    .nullable()
    .describe("the saved template's version the job rendered; null for inline html"),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  diagnostics: diagnosticsSchema.nullable(),
  mode: z
    .enum(['sync', 'async'])
    .describe(
      'sync: rendered while the request waited; async: answered 202 at once and rendered in the background',
    ),
  attempts: z
    .number()
    .int()
    .min(0)
    .describe(
      "render attempts begun: 1 for a sync job; an async job's retries after a fault of the renderer count too",
    ),
  webhook_id: z.string().nullable().describe('the webhook endpoint told when the job ends; null: none'),
  batch_id: z.string().nullable().describe('the batch the job is an item of; null: none'),
  destination_id: z
    .string()
    .nullable()
    .describe('the destination its PDF is delivered into once it completes (see `delivery`); null: none'),
  delivery: z
    .object({
      status: z
        .enum(['pending', 'delivered', 'failed'])
        .describe(
          'pending: being copied (a failed put is retried on the webhook schedule); delivered: the object is in the bucket; failed: given up (see error)',
        ),
      bucket: z.string().describe("the destination's bucket"),
      key: z
        .string()
        .nullable()
        .describe('the key the template made (with the prefix); null until the first attempt'),
      etag: z.string().nullable().describe("S3's ETag of the object written; null until delivered"),
      delivered_at: timestamp.nullable(),
      attempts: z.number().int().min(0).describe('puts attempted so far'),
      error: z
        .string()
        .nullable()
        .describe("why the last attempt failed (the reason and AWS's error name); null: none did"),
    })
    .nullable()
    .describe(
      'the copy of the PDF into `destination_id`, started when the job completes; null: no destination, or not started yet',
    ),
  kind: z
    .enum(['render', 'merge'])
    .describe(
      'render: one document rendered (POST /v1/pdf, a batch item); merge: parts put together (POST /v1/merges)',
    ),
  e_invoice: z
    .object({
      standard: z.string(),
      profile: z.string(),
      valid: z.literal(true),
      rules_checked: z.number().int().describe("the schematron's assertions the XML passed"),
    })
    .optional()
    .describe('the e-invoice embedded in the PDF (factur-x.xml), validated before the render; absent: none'),
  created_at: timestamp,
  // Issue 37: follow a job, and a batch's items.
  queued_at: timestamp
    .nullable()
    .describe('async jobs: when the job was queued (its 202); null for a sync render'),
  started_at: timestamp
    .nullable()
    .describe(
      'when its render began (its last attempt, for an async job retried); null until then, and for a job cancelled before',
    ),
  completed_at: timestamp
    .nullable()
    .describe('when the job ended (completed, failed or cancelled); null while it is pending or rendering'),
  reference: z.string().nullable().describe("a batch item's `reference`, as the caller sent it; null: none"),
  item_index: z
    .number()
    .int()
    .min(0)
    .nullable()
    .describe("a batch's job: its item's index in the batch's `items` (0-based); null: not a batch's job"),
  file_name: z
    .string()
    .describe(
      "the name the PDF downloads as (Content-Disposition) and has in a batch's ZIP: `file_name` as rendered, else `{id}.pdf`",
    ),
});

export type PdfJobResponse = z.output<typeof jobSchema>;

/** The job as the API shows it (contract: spec fields plus template_id, template_version, page_count, error). */
export const jobResponse = ({ job, downloadUrl, fileExpiresAt, fileExpired }: JobView): PdfJobResponse => ({
  id: job.id,
  status: job.status,
  download_url: downloadUrl,
  file_expires_at: fileExpiresAt,
  file_expired: fileExpired,
  file_size_bytes: job.file_size_bytes,
  render_duration_ms: job.render_duration_ms,
  page_count: job.page_count,
  template_id: job.template_id,
  template_version: job.template_version ?? null,
  error: job.error,
  diagnostics: (job.diagnostics ?? null) as PdfJobResponse['diagnostics'],
  mode: job.mode ?? 'sync',
  // Jobs made before attempts were counted were sync: one attempt once they left pending.
  attempts: job.attempts ?? (job.status === 'pending' ? 0 : 1),
  webhook_id: job.webhook_id ?? null,
  batch_id: job.batch_id ?? null,
  destination_id: job.destination_id ?? null,
  delivery: job.delivery
    ? {
        status: job.delivery.status,
        bucket: job.delivery.bucket,
        key: job.delivery.key,
        etag: job.delivery.etag,
        delivered_at: job.delivery.delivered_at,
        attempts: job.delivery.attempts,
        error: job.delivery.error,
      }
    : null,
  kind: job.kind ?? 'render',
  ...(job.e_invoice ? { e_invoice: job.e_invoice } : {}),
  created_at: job.created_at,
  queued_at: job.mode === 'async' ? job.created_at : null,
  started_at: job.started_at ?? null,
  completed_at:
    job.completed_at ??
    (job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled'
      ? job.updated_at
      : null),
  reference: job.reference ?? null,
  item_index: job.batch_id ? (job.batch_item ?? null) : null,
  file_name: job.file_name ?? `${job.id}.pdf`,
});

/**
 * 202 for a job that runs in the background (an async render or merge): where to poll it, when,
 * and whether the request's `Prefer: respond-async` was applied; `extra` headers besides.
 */
export const acceptedJobReply = (
  view: JobView,
  prefer: string | undefined,
  extra: Readonly<Record<string, string>> = {},
): Reply => {
  const retry = pollAfterSeconds(view.job);
  return new Reply(
    jobResponse(view),
    {
      Location: `/v1/pdf/${view.job.id}`,
      ...(retry === undefined ? {} : { 'Retry-After': String(retry) }),
      ...(prefersAsync(prefer) ? { 'Preference-Applied': 'respond-async' } : {}),
      ...extra,
    },
    202,
  );
};
