/** What the batches resource answers with: a batch, as the API shows it. */
import { z } from 'zod';
import type { BatchView } from '../domain/batches/batches.js';

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds, e.g. 2026-11-21T10:00:00.000Z');
const count = z.number().int().min(0);

export const batchSchema = z.object({
  id: z.string().describe('bat_ followed by a ULID'),
  status: z
    .enum(['processing', 'completed'])
    .describe('completed once every job of the batch ended (completed or failed)'),
  total: count.describe('its jobs, one per item'),
  counts: z
    .object({ pending: count, rendering: count, completed: count, failed: count, cancelled: count })
    .describe('its jobs by status; they add up to total'),
  template_id: z.string().nullable(),
  template_version: z.number().int().nullable(),
  webhook_id: z.string().nullable(),
  created_at: timestamp,
  completed_at: timestamp.nullable().describe('when its last job ended; null while processing'),
  output: z
    .object({ merged_pdf: z.boolean(), zip: z.boolean() })
    .nullable()
    .describe('what is built once the batch completes; null: nothing'),
  output_status: z
    .enum(['pending', 'ready', 'failed'])
    .nullable()
    .describe('pending until the outputs are built (after the batch completed); null: no output asked for'),
  output_error: z.string().nullable().describe('why the outputs could not be built (output_status failed)'),
  merged_pdf_url: z
    .string()
    .nullable()
    .describe('a fresh presigned link to the merged PDF of the completed items, once ready'),
  zip_url: z
    .string()
    .nullable()
    .describe("a fresh presigned link to the ZIP of the completed items' PDFs and manifest.json, once ready"),
  links: z.object({
    self: z.string().describe('/v1/batches/{batch_id}'),
    jobs: z.string().describe('/v1/batches/{batch_id}/jobs: its jobs, in item order'),
  }),
});

export type BatchResponse = z.output<typeof batchSchema>;

export const batchResponse = ({ batch, counts, outputUrls }: BatchView): BatchResponse => ({
  id: batch.id,
  status: batch.status,
  total: batch.total,
  counts,
  template_id: batch.template_id,
  template_version: batch.template_version,
  webhook_id: batch.webhook_id,
  created_at: batch.created_at,
  completed_at: batch.completed_at,
  output: batch.output ?? null,
  output_status: batch.output ? (batch.outputs?.status ?? 'pending') : null,
  output_error: batch.outputs?.error ?? null,
  merged_pdf_url: outputUrls?.mergedPdf ?? null,
  zip_url: outputUrls?.zip ?? null,
  links: { self: `/v1/batches/${batch.id}`, jobs: `/v1/batches/${batch.id}/jobs` },
});
