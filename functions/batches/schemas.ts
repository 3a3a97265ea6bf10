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
    .object({ pending: count, rendering: count, completed: count, failed: count })
    .describe('its jobs by status; they add up to total'),
  template_id: z.string().nullable(),
  template_version: z.number().int().nullable(),
  webhook_id: z.string().nullable(),
  created_at: timestamp,
  completed_at: timestamp.nullable().describe('when its last job ended; null while processing'),
  links: z.object({
    self: z.string().describe('/v1/batches/{batch_id}'),
    jobs: z.string().describe('/v1/batches/{batch_id}/jobs: its jobs, in item order'),
  }),
});

export type BatchResponse = z.output<typeof batchSchema>;

export const batchResponse = ({ batch, counts }: BatchView): BatchResponse => ({
  id: batch.id,
  status: batch.status,
  total: batch.total,
  counts,
  template_id: batch.template_id,
  template_version: batch.template_version,
  webhook_id: batch.webhook_id,
  created_at: batch.created_at,
  completed_at: batch.completed_at,
  links: { self: `/v1/batches/${batch.id}`, jobs: `/v1/batches/${batch.id}/jobs` },
});
