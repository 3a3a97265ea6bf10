/** The batch routes: many renders of one template, each item a normal async job. */
import { z } from 'zod';
import { type Page, pageQuerySchema } from '../core/page-query.js';
import type { BatchCommand } from '../domain/batches/batches.js';
import { jobSchema } from '../pdf/schemas.js';
import { KEY_OR_SESSION, resource, route } from '../route-declaration.js';
import { createBatchSchema, parseCreateBatch } from './request.js';
import { batchSchema } from './schemas.js';

const batch = { name: 'Batch', schema: batchSchema };

/** A batch's jobs' page, and the status to keep (absent: every job). */
export type BatchJobsQuery = Page & {
  readonly status?: 'pending' | 'rendering' | 'completed' | 'failed' | 'cancelled';
};

const batchJobsQuerySchema = pageQuerySchema.extend({
  status: z
    .enum(['pending', 'rendering', 'completed', 'failed', 'cancelled'], {
      error: 'must be one of pending, rendering, completed, failed, cancelled',
    })
    .optional(),
}) satisfies z.ZodType<BatchJobsQuery, Readonly<Record<string, string | undefined>>>;

export const batchesResource = resource({
  name: 'batches',
  description: 'The batches API: many renders of one template, each item a normal async PDF job',
  // The webhook queue: a batch whose count completes here (a repair on read, a fault at
  // acceptance) tells its endpoint batch.completed from this function; the batch-outputs queue,
  // when it asked for a merged PDF or a ZIP, is told instead.
  needs: {
    table: 'readWrite',
    pdfBucket: true,
    renderQueue: true,
    webhookQueue: true,
    batchOutputQueue: true,
  },
  routes: {
    createBatch: route<BatchCommand>({
      method: 'POST',
      path: '/v1/batches',
      credentials: KEY_OR_SESSION,
      body: {
        schema: (settings) =>
          createBatchSchema(settings).meta({
            oneOf: [
              { required: ['html'], properties: { html: { type: 'string' } } },
              { required: ['template_id'], properties: { template_id: { type: 'string' } } },
            ],
          }),
        parse: parseCreateBatch,
      },
      rateLimited: true,
      summary:
        'Render one template for up to 1,000 items; answers at once (202) with the batch, its quota reserved for every item',
      success: {
        status: 202,
        description:
          'the batch, processing: each item is a pending async job (GET /v1/batches/{batch_id}/jobs)',
        body: batch,
      },
      errors: [
        'INVALID_PDF_OPTIONS',
        'INVALID_HTML_CONTENT',
        'HTML_CONTENT_TOO_LARGE',
        'INVALID_HTML_TEMPLATE',
        'INVALID_PAGE_LOAD_OPTIONS',
        'VALIDATION_ERROR',
        'PDF_TEMPLATE_NOT_FOUND',
        'WEBHOOK_ENDPOINT_NOT_FOUND',
        'INVALID_FILE_NAME',
        'INVALID_E_INVOICE',
        'INVALID_SIGNING_KEY',
        'DESTINATION_NOT_FOUND',
        'PLAN_QUOTA_EXCEEDED',
        'IDEMPOTENCY_KEY_REUSED',
        'SERVICE_BUSY',
      ],
    }),
    listBatches: route<undefined, Page>({
      method: 'GET',
      path: '/v1/batches',
      credentials: KEY_OR_SESSION,
      query: pageQuerySchema,
      summary: "List the caller's batches, newest first",
      success: { status: 200, description: 'batches', body: { ...batch, array: true } },
      errors: [],
    }),
    getBatch: route({
      method: 'GET',
      path: '/v1/batches/{batch_id}',
      credentials: KEY_OR_SESSION,
      summary: 'One batch, with its jobs counted by status',
      success: { status: 200, description: 'the batch', body: batch },
      errors: ['BATCH_NOT_FOUND'],
    }),
    listBatchJobs: route<undefined, BatchJobsQuery>({
      method: 'GET',
      path: '/v1/batches/{batch_id}/jobs',
      credentials: KEY_OR_SESSION,
      query: batchJobsQuerySchema,
      summary:
        "A batch's jobs in item order (the first item's job first), each as GET /v1/pdf/{job_id} shows it; `status` keeps only the jobs in that status",
      success: {
        status: 200,
        description:
          'jobs; the Has-More header says (true or false) whether jobs follow this page (with `status`: jobs in that status)',
        body: { name: 'PdfJob', schema: jobSchema, array: true },
      },
      errors: ['BATCH_NOT_FOUND'],
    }),
    cancelBatch: route({
      method: 'POST',
      path: '/v1/batches/{batch_id}/cancel',
      credentials: KEY_OR_SESSION,
      summary:
        "Cancel every job of the batch still pending: each ends `cancelled`, its render unit given back (job.cancelled to the batch's endpoint when it subscribed); a job already rendering runs to its end",
      success: {
        status: 200,
        description:
          'the batch as it is then (counts.cancelled); it completes once its last rendering job ended. A batch that completed already answers as it is',
        body: batch,
      },
      errors: ['BATCH_NOT_FOUND'],
    }),
  },
});
