/** The merge route: parts (the caller's jobs, or renders made for it) put together into one PDF job. */
import type { MergeCommand } from '../domain/merges/merges.js';
import { jobSchema } from '../pdf/schemas.js';
import { KEY_OR_SESSION, resource, route } from '../route-declaration.js';
import { createMergeSchema, parseCreateMerge } from './request.js';

export const mergesResource = resource({
  name: 'merges',
  description: 'The merges API: PDFs put together into one, with page numbers across the whole',
  needs: {
    table: 'readWrite',
    pdfBucket: true,
    assets: 'read',
    renderer: true,
    // Async merges: their order (orders/) and their message; a merge's webhook endpoint is told when it ends.
    renderQueue: true,
    webhookQueue: true,
    // A completed merge that names a destination queues its delivery's first attempt.
    deliveryQueue: true,
  },
  routes: {
    createMerge: route<MergeCommand>({
      method: 'POST',
      path: '/v1/merges',
      credentials: KEY_OR_SESSION,
      body: { schema: (settings) => createMergeSchema(settings), parse: parseCreateMerge },
      headers: [
        {
          name: 'Prefer',
          description:
            'respond-async: answer 202 with the pending merge at once and merge in the background (the same as "async": true)',
          schema: { type: 'string' },
        },
      ],
      rateLimited: true,
      summary:
        'Merge 2-200 parts (your completed jobs, or renders made for the merge) into one PDF; answers when the merge job is completed or failed, or at once (202) with the pending merge when asked to run asynchronously or estimated over the sync budget',
      success: {
        status: 201,
        description: 'the completed merge job (kind "merge"): one download link for the whole document',
        body: { name: 'PdfJob', schema: jobSchema },
      },
      accepted: {
        description:
          'an async merge ("async": true, Prefer: respond-async, or estimated over the sync budget): the pending merge job (mode "async"); poll its Location (GET /v1/pdf/{job_id}) until it is completed or failed',
        headers: {
          Location: { description: 'the merge job: /v1/pdf/{job_id}' },
          'Preference-Applied': { description: 'respond-async, when the request asked with Prefer' },
          'Retry-After': { description: 'seconds to wait before polling the Location' },
        },
      },
      errors: [
        'VALIDATION_ERROR',
        'DESTINATION_NOT_FOUND',
        'INVALID_PDF_OPTIONS',
        'INVALID_HTML_CONTENT',
        'HTML_CONTENT_TOO_LARGE',
        'INVALID_HTML_TEMPLATE',
        'INVALID_PAGE_LOAD_OPTIONS',
        'PDF_JOB_NOT_FOUND',
        'PDF_TEMPLATE_NOT_FOUND',
        'WEBHOOK_ENDPOINT_NOT_FOUND',
        'QUEUE_DEPTH_EXCEEDED',
        'CONCURRENCY_LIMIT_EXCEEDED',
        'INVALID_E_INVOICE',
        'INVALID_SIGNING_KEY',
        'PLAN_QUOTA_EXCEEDED',
        'PDF_RENDERING_TIMEOUT',
        'PDF_RENDERING_FAILED',
        'PDF_STORAGE_FAILED',
        'PDF_TOO_LARGE',
        'PDF_TOO_MANY_PAGES',
        'PDF_TOO_COMPLEX',
        'SERVICE_BUSY',
      ],
    }),
  },
});
