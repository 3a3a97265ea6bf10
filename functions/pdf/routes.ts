/** The PDF job routes (spec: /v1/pdf). */
import { type Page, pageQuerySchema } from '../core/page-query.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../domain/renders/idempotency.js';
import type { VariablesRequest } from '../domain/renders/previews.js';
import type { RenderCommand } from '../domain/renders/render-command.js';
import { KEY_OR_SESSION, resource, route, SESSION_ONLY } from '../route-declaration.js';
import { previewSchema, variablesRequestSchema, variablesSchema } from './preview-schemas.js';
import { createPdfSchema, parseCreatePdf } from './request.js';
import { jobSchema } from './schemas.js';

const pdfJob = { name: 'PdfJob', schema: jobSchema };

export const pdfResource = resource({
  name: 'pdf',
  description: 'The pdf API: render, list and get PDF jobs; previews for the dashboard',
  needs: {
    table: 'readWrite',
    pdfBucket: true,
    assets: 'read',
    renderer: true,
    renderQueue: true,
    webhookQueue: true,
    // A completed job that names a destination queues its delivery's first attempt.
    deliveryQueue: true,
  },
  routes: {
    createPdf: route<RenderCommand>({
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
          name: 'Prefer',
          description:
            'respond-async: answer 202 with the pending job at once and render in the background (the same as "async": true)',
          schema: { type: 'string' },
        },
        {
          name: 'Idempotency-Key',
          description:
            'Within 24 hours, the same key and body from the same account returns the first answer without rendering or counting again',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: IDEMPOTENCY_KEY_PATTERN.source },
        },
      ],
      rateLimited: true,
      summary:
        'Render a PDF; answers when the job is completed or failed, or at once (202) with the pending job when asked to run asynchronously',
      success: { status: 201, description: 'the completed job', body: pdfJob },
      accepted: {
        description:
          'an async render ("async": true or Prefer: respond-async): the pending job; poll its Location (GET /v1/pdf/{job_id}) until it is completed or failed. An idempotent replay of an async render answers 202 again, with the job as it is now',
        headers: {
          Location: { description: 'the job: /v1/pdf/{job_id}' },
          'Preference-Applied': { description: 'respond-async, when the request asked with Prefer' },
          'Retry-After': {
            description:
              "seconds to wait before polling the Location (2 for a new job); a pending or rendering job's GET carries it too, growing with the job's age up to 10",
          },
        },
      },
      errors: [
        'INVALID_PDF_OPTIONS',
        'INVALID_HTML_CONTENT',
        'HTML_CONTENT_TOO_LARGE',
        'INVALID_HTML_TEMPLATE',
        'INVALID_PAGE_LOAD_OPTIONS',
        'IDEMPOTENCY_KEY_REUSED',
        'VALIDATION_ERROR',
        'PDF_TEMPLATE_NOT_FOUND',
        'WEBHOOK_ENDPOINT_NOT_FOUND',
        'INVALID_FILE_NAME',
        'INVALID_E_INVOICE',
        'INVALID_SIGNING_KEY',
        'DESTINATION_NOT_FOUND',
        'PLAN_QUOTA_EXCEEDED',
        'CONCURRENCY_LIMIT_EXCEEDED',
        'QUEUE_DEPTH_EXCEEDED',
        'PDF_RENDERING_TIMEOUT',
        'PDF_RENDERING_FAILED',
        'PDF_STORAGE_FAILED',
        'PDF_TOO_LARGE',
        'PDF_TOO_MANY_PAGES',
        'PDF_TOO_COMPLEX',
        'SERVICE_BUSY',
      ],
    }),
    // Issue 40: the editor's previews, in this Lambda (it has the renderer and the bucket already).
    createPreview: route<RenderCommand>({
      method: 'POST',
      path: '/v1/previews',
      credentials: SESSION_ONLY,
      body: {
        schema: (settings) =>
          createPdfSchema(settings).meta({
            oneOf: [
              { required: ['html'], properties: { html: { type: 'string' } } },
              { required: ['template_id'], properties: { template_id: { type: 'string' } } },
            ],
          }),
        parse: parseCreatePdf,
      },
      summary:
        'Preview a render (the dashboard): the body of POST /v1/pdf, rendered the same way with a PREVIEW mark on every page; no job, no quota unit, not in usage; capped per account per minute and per day (async, webhook_id, destination_id and Idempotency-Key are ignored; protection, signature and e_invoice are left out)',
      success: { status: 200, description: 'the preview', body: { name: 'Preview', schema: previewSchema } },
      errors: [
        'INVALID_PDF_OPTIONS',
        'INVALID_HTML_CONTENT',
        'HTML_CONTENT_TOO_LARGE',
        'INVALID_HTML_TEMPLATE',
        'INVALID_PAGE_LOAD_OPTIONS',
        'VALIDATION_ERROR',
        'PDF_TEMPLATE_NOT_FOUND',
        'USAGE_LIMIT_EXCEEDED',
        'PDF_RENDERING_TIMEOUT',
        'PDF_RENDERING_FAILED',
        'PDF_STORAGE_FAILED',
        'PDF_TOO_LARGE',
        'PDF_TOO_MANY_PAGES',
        'SERVICE_BUSY',
      ],
    }),
    checkPreviewVariables: route<VariablesRequest>({
      method: 'POST',
      path: '/v1/previews/variables',
      credentials: SESSION_ONLY,
      body: { schema: variablesRequestSchema },
      summary:
        "The variables a template's parts read, by the introspection renders check with (the dashboard's editor lists the sample's missing ones from it)",
      success: {
        status: 200,
        description: 'the variables',
        body: { name: 'TemplateVariables', schema: variablesSchema },
      },
      errors: ['INVALID_HTML_TEMPLATE', 'HTML_CONTENT_TOO_LARGE', 'VALIDATION_ERROR', 'USAGE_LIMIT_EXCEEDED'],
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
      success: {
        status: 200,
        description:
          'the job; while it is pending or rendering the answer carries Retry-After: the seconds to wait before the next poll (1 to 10, growing with its age)',
        body: pdfJob,
      },
      errors: ['PDF_JOB_NOT_FOUND'],
    }),
    cancelPdf: route({
      method: 'DELETE',
      path: '/v1/pdf/{job_id}',
      credentials: KEY_OR_SESSION,
      summary:
        'Cancel a pending async job: it ends `cancelled`, its render unit is given back and its webhook endpoint is told job.cancelled; a job already rendering runs to its end (409)',
      success: {
        status: 200,
        description: 'the job, cancelled (a job cancelled already answers as it is)',
        body: pdfJob,
      },
      errors: ['PDF_JOB_NOT_FOUND', 'JOB_NOT_CANCELLABLE'],
    }),
  },
});
