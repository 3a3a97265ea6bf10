/** The merge route: parts (the caller's jobs, or renders made for it) put together into one PDF job. */
import type { MergeCommand } from '../domain/merges/merges.js';
import { jobSchema } from '../pdf/schemas.js';
import { KEY_OR_SESSION, resource, route } from '../route-declaration.js';
import { createMergeSchema, parseCreateMerge } from './request.js';

export const mergesResource = resource({
  name: 'merges',
  description: 'The merges API: PDFs put together into one, with page numbers across the whole',
  // A completed merge that names a destination queues its delivery's first attempt.
  needs: { table: 'readWrite', pdfBucket: true, assets: 'read', renderer: true, deliveryQueue: true },
  routes: {
    createMerge: route<MergeCommand>({
      method: 'POST',
      path: '/v1/merges',
      credentials: KEY_OR_SESSION,
      body: { schema: (settings) => createMergeSchema(settings), parse: parseCreateMerge },
      rateLimited: true,
      summary:
        'Merge 2-200 parts (your completed jobs, or renders made for the merge) into one PDF; answers when the merge job is completed or failed',
      success: {
        status: 201,
        description: 'the completed merge job (kind "merge"): one download link for the whole document',
        body: { name: 'PdfJob', schema: jobSchema },
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
