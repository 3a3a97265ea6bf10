/** The PDF job routes (spec: /v1/pdf). */
import { z } from 'zod';
import { diagnosticsSchema } from '../domain/diagnostics.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../domain/idempotency.js';
import { type Page, pageQuerySchema } from '../domain/pagination.js';
import { type CreatePdfBody, createPdfSchema, parseCreatePdf } from '../domain/pdf-request.js';
import { KEY_OR_SESSION, resource, route } from '../route-declaration.js';

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds, e.g. 2026-11-21T10:00:00.000Z');

/** A job as the API shows it (spec fields plus template_id, template_version, page_count, error, diagnostics). */
export const jobSchema = z.object({
  id: z.string().describe('job_ followed by a ULID'),
  status: z.enum(['pending', 'rendering', 'completed', 'failed']),
  download_url: z
    .string()
    .nullable()
    .describe('presigned S3 GET, valid 15 minutes by default, signed afresh on each read'),
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
  created_at: timestamp,
});

const pdfJob = { name: 'PdfJob', schema: jobSchema };

export const pdfResource = resource({
  name: 'pdf',
  description: 'The pdf API: render, list and get PDF jobs',
  needs: { pdfBucket: true, renderer: true },
  routes: {
    createPdf: route<CreatePdfBody>({
      method: 'POST',
      path: '/v1/pdf',
      credentials: KEY_OR_SESSION,
      body: {
        // Exactly one of html and template_id, each given as a string (null counts as not given).
        schema: (settings) =>
          createPdfSchema(settings).meta({
            oneOf: [
              { required: ['html'], properties: { html: { type: 'string' } } },
              { required: ['template_id'], properties: { template_id: { type: 'string' } } },
            ],
          }),
        parse: parseCreatePdf,
      },
      headers: [
        {
          name: 'Idempotency-Key',
          description:
            'Within 24 hours, the same key and body from the same account returns the first answer without rendering or counting again',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: IDEMPOTENCY_KEY_PATTERN.source },
        },
      ],
      rateLimited: true,
      summary: 'Render a PDF; answers when the job is completed or failed',
      success: { status: 201, description: 'the completed job', body: pdfJob },
      errors: [
        'INVALID_PDF_OPTIONS',
        'INVALID_HTML_CONTENT',
        'HTML_CONTENT_TOO_LARGE',
        'INVALID_HTML_TEMPLATE',
        'INVALID_PAGE_LOAD_OPTIONS',
        'IDEMPOTENCY_KEY_REUSED',
        'VALIDATION_ERROR',
        'PDF_TEMPLATE_NOT_FOUND',
        'PLAN_QUOTA_EXCEEDED',
        'PDF_RENDERING_TIMEOUT',
        'PDF_RENDERING_FAILED',
        'PDF_STORAGE_FAILED',
        'PDF_TOO_LARGE',
        'PDF_TOO_MANY_PAGES',
        'SERVICE_BUSY',
      ],
    }),
    listPdfs: route<undefined, Page>({
      method: 'GET',
      path: '/v1/pdf',
      credentials: KEY_OR_SESSION,
      query: pageQuerySchema,
      summary: "List the caller's jobs, newest first",
      success: { status: 200, description: 'jobs', body: { ...pdfJob, array: true } },
      errors: [],
    }),
    getPdf: route({
      method: 'GET',
      path: '/v1/pdf/{job_id}',
      credentials: KEY_OR_SESSION,
      summary: 'One job, with a freshly signed download link',
      success: { status: 200, description: 'the job', body: pdfJob },
      errors: ['PDF_JOB_NOT_FOUND'],
    }),
  },
});
