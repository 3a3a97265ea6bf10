/**
 * The OpenAPI document, built from the same zod schemas that validate requests, and from the
 * route table, so that it cannot drift from what the service accepts. `npm run --silent openapi`
 * prints it.
 */
import { z } from 'zod';
import { routes } from '../routes.js';
import { errorStatus } from './errors.js';
import { createPdfSchema } from './pdf-request.js';

const MiB = 1024 * 1024;

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds, e.g. 2026-11-21T10:00:00.000Z');

export const jobSchema = z.object({
  id: z.string().describe('job_ followed by a ULID'),
  status: z.enum(['pending', 'rendering', 'completed', 'failed']),
  download_url: z
    .string()
    .nullable()
    .describe('presigned S3 GET, valid 15 minutes, signed afresh on each read'),
  file_size_bytes: z.number().int().nullable(),
  render_duration_ms: z.number().int().nullable(),
  page_count: z.number().int().nullable(),
  template_id: z.string().nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  created_at: timestamp,
});

export const errorSchema = z.object({
  error: z.object({
    code: z.enum(Object.keys(errorStatus) as [keyof typeof errorStatus, ...(keyof typeof errorStatus)[]]),
    message: z.string(),
    details: z
      .array(
        z.object({
          field: z.string(),
          issue: z.string(),
          line: z.number().int().optional().describe('INVALID_HTML_TEMPLATE: the template line, 1-based'),
          name: z.string().optional().describe('INVALID_HTML_TEMPLATE: the undefined variable'),
        }),
      )
      .optional(),
    request_id: z.string().describe('equals the X-Request-Id header'),
    job_id: z.string().optional().describe('the failed job, when one exists'),
  }),
});

const jsonSchema = (schema: z.ZodType) => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return rest;
};

const json = (ref: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } });

const errorResponses = (codes: (keyof typeof errorStatus)[]) => {
  const byStatus = new Map<number, string[]>();
  for (const code of codes)
    byStatus.set(errorStatus[code], [...(byStatus.get(errorStatus[code]) ?? []), code]);
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      String(status),
      { description: list.join(', '), content: json('Error') },
    ]),
  );
};

const AUTH_ERRORS = [
  'UNAUTHENTICATED',
  'INVALID_API_KEY',
  'INVALID_SESSION_TOKEN',
  'INTERNAL_ERROR',
] as const;

const operations: Record<string, object> = {
  'POST /v1/pdf': {
    summary: 'Render a PDF; answers when the job is completed or failed',
    parameters: [
      {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
      },
    ],
    requestBody: { required: true, content: json('CreatePdfRequest') },
    responses: {
      '201': { description: 'the completed job', content: json('PdfJob') },
      ...errorResponses([
        ...AUTH_ERRORS,
        'INVALID_JSON',
        'REQUEST_TOO_LARGE',
        'USAGE_LIMIT_EXCEEDED',
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
      ]),
    },
  },
  'GET /v1/pdf': {
    summary: "List the caller's jobs, newest first",
    parameters: [
      { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
      { name: 'offset', in: 'query', schema: { type: 'integer', minimum: 0, default: 0 } },
    ],
    responses: {
      '200': {
        description: 'jobs',
        content: {
          'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/PdfJob' } } },
        },
      },
      ...errorResponses([...AUTH_ERRORS, 'VALIDATION_ERROR']),
    },
  },
  'GET /v1/pdf/{job_id}': {
    summary: 'One job, with a freshly signed download link',
    parameters: [{ name: 'job_id', in: 'path', required: true, schema: { type: 'string' } }],
    responses: {
      '200': { description: 'the job', content: json('PdfJob') },
      ...errorResponses([...AUTH_ERRORS, 'PDF_JOB_NOT_FOUND']),
    },
  },
};

export const openApiDocument = () => {
  const paths: Record<string, Record<string, object>> = {};
  for (const route of routes) {
    const key = `${route.method} ${route.path}`;
    const operation = operations[key];
    if (!operation) throw new Error(`openapi: no operation described for ${key}`);
    paths[route.path] = {
      ...paths[route.path],
      [route.method.toLowerCase()]: {
        ...operation,
        security: route.credentials.map((kind) => ({ [kind === 'apiKey' ? 'apiKey' : 'session']: [] })),
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'PDF rendering service', version: '1' },
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'an API key, pdf_live_…' },
        session: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'a Cognito ID token' },
      },
      schemas: {
        CreatePdfRequest: jsonSchema(
          createPdfSchema({ maxInlineHtmlBytes: 5 * MiB, maxVariablesBytes: 1 * MiB }),
        ),
        PdfJob: jsonSchema(jobSchema),
        Error: jsonSchema(errorSchema),
      },
    },
  };
};
