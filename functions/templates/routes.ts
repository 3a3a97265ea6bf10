/** The saved-template routes (spec: /v1/templates; keys read and render, only sessions change). */
import { z } from 'zod';
import { type Page, pageQuerySchema } from '../core/page-query.js';
import type {
  CreateTemplateCommand,
  TemplateVisibilityCommand,
  UpdateTemplateCommand,
} from '../domain/templates/template-commands.js';
import { templatePdfOptionsSchema } from '../pdf/options.js';
import { KEY_OR_SESSION, resource, route, SESSION_ONLY } from '../route-declaration.js';
import { TEMPLATE_WRITES_PER_MINUTE } from '../settings.js';
import {
  createTemplateSchema,
  parseCreateTemplate,
  parseUpdateTemplate,
  templateVisibilitySchema,
  updateTemplateSchema,
} from './request.js';

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds, e.g. 2026-11-21T10:00:00.000Z');

/** A template as the API shows it (spec fields plus the extensions variables and version). */
export const templateSchema = z.object({
  id: z.string().describe('tpl_ followed by a ULID'),
  owner_user_id: z.string(),
  name: z.string(),
  html: z.string().describe('the current version’s html'),
  header_html: z
    .string()
    .nullable()
    .describe('the current version’s header, printed in the top margin of every page; null: none'),
  footer_html: z
    .string()
    .nullable()
    .describe('the current version’s footer, printed in the bottom margin of every page; null: none'),
  sample_variables: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe('the current version’s sample data for its variables; null: none saved'),
  pdf_options: templatePdfOptionsSchema
    .nullable()
    .describe(
      'the current version’s render options: a render of it takes them where it gives none of its own; null: none saved',
    ),
  is_public: z.boolean(),
  public_since_version: z
    .number()
    .int()
    .min(1)
    .nullable()
    .describe(
      'public templates: the first version other accounts may read and render (the version that was current when it was made public, and every later one); earlier versions stay the owner’s alone (404 to others). null: private',
    ),
  renders_offline_for_others: z
    .literal(true)
    .describe(
      'always true: when another account renders this template, its page has no network access at all (every request refused), and the render must name template_version',
    ),
  created_at: timestamp,
  updated_at: timestamp,
  variables: z
    .array(z.string())
    .describe(
      'sorted top-level names the html, header and footer read without defining them (Jinja2 meta.find_undeclared_variables)',
    ),
  version: z
    .number()
    .int()
    .min(1)
    .describe(
      '1 on create, +1 on every change of html, header_html, footer_html, sample_variables or pdf_options; earlier versions render with template_version (with their own sample and options)',
    ),
});

const pdfTemplate = { name: 'PdfTemplate', schema: templateSchema };

/** The public listing's query: a page, and `starters=true` for the starter templates only (issue 40). */
const publicQuerySchema = pageQuerySchema.extend({
  starters: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .optional()
    .transform((v) => v === 'true')
    .describe("true: only the starter templates, the service's own public templates to begin from"),
});
export type PublicPage = Page & { readonly starters: boolean };
const pageNote =
  'newest created first; a page stops early when the next template would take the answer past 5 MiB, so page on until an empty one';

const NOT_FOUND = ['PDF_TEMPLATE_NOT_FOUND'] as const;
const HTML_CODES = ['INVALID_HTML_CONTENT', 'HTML_CONTENT_TOO_LARGE', 'INVALID_HTML_TEMPLATE'] as const;

export const templatesResource = resource({
  name: 'templates',
  description: 'The templates API: saved Jinja2 templates, private or public, versioned',
  needs: { table: 'readWrite' },
  routes: {
    createTemplate: route<CreateTemplateCommand>({
      method: 'POST',
      path: '/v1/templates',
      credentials: SESSION_ONLY,
      body: { schema: createTemplateSchema, parse: parseCreateTemplate },
      rateLimited: true,
      summary: `Save a template (version 1); its html is checked for syntax, never run. At most ${TEMPLATE_WRITES_PER_MINUTE} template writes (create and edit) per account per minute`,
      success: { status: 201, description: 'the template', body: pdfTemplate },
      errors: [
        'INVALID_TEMPLATE_NAME',
        ...HTML_CODES,
        'INVALID_PDF_OPTIONS',
        'INVALID_SIGNING_KEY',
        'VALIDATION_ERROR',
      ],
    }),
    listTemplates: route<undefined, Page>({
      method: 'GET',
      path: '/v1/templates',
      credentials: SESSION_ONLY,
      query: pageQuerySchema,
      summary: `The caller's templates, ${pageNote}`,
      success: { status: 200, description: 'templates', body: { ...pdfTemplate, array: true } },
      errors: [],
    }),
    listPublicTemplates: route<undefined, PublicPage>({
      method: 'GET',
      path: '/v1/templates/public',
      credentials: KEY_OR_SESSION,
      query: publicQuerySchema,
      summary: `Every account's public templates, ${pageNote}; starters=true: only the starter templates (invoice, receipt, quote, ...) of the service's own account`,
      success: { status: 200, description: 'templates', body: { ...pdfTemplate, array: true } },
      errors: [],
    }),
    getTemplate: route({
      method: 'GET',
      path: '/v1/templates/{template_id}',
      credentials: KEY_OR_SESSION,
      summary: "One template: the caller's own, or a public one",
      success: { status: 200, description: 'the template', body: pdfTemplate },
      errors: [...NOT_FOUND],
    }),
    updateTemplate: route<UpdateTemplateCommand>({
      method: 'PATCH',
      path: '/v1/templates/{template_id}',
      credentials: SESSION_ONLY,
      body: { schema: updateTemplateSchema, parse: parseUpdateTemplate },
      rateLimited: true,
      summary: `Rename, or change the html, header, footer, sample data or pdf options (a new version); owner only. Counts against the ${TEMPLATE_WRITES_PER_MINUTE} template writes per minute`,
      success: {
        status: 200,
        description: 'the template as this edit made it (version: the version its html became)',
        body: pdfTemplate,
      },
      errors: [
        'INVALID_TEMPLATE_NAME',
        ...HTML_CODES,
        'INVALID_PDF_OPTIONS',
        'INVALID_SIGNING_KEY',
        'VALIDATION_ERROR',
        ...NOT_FOUND,
      ],
    }),
    setTemplateVisibility: route<TemplateVisibilityCommand>({
      method: 'PATCH',
      path: '/v1/templates/{template_id}/visibility',
      credentials: SESSION_ONLY,
      body: { schema: () => templateVisibilitySchema },
      summary:
        'Make a template public or private; owner only; applies from the next request on. Made public, its current version and later ones are public (public_since_version); earlier versions stay private',
      success: { status: 200, description: 'the template', body: pdfTemplate },
      errors: ['VALIDATION_ERROR', ...NOT_FOUND],
    }),
    deleteTemplate: route({
      method: 'DELETE',
      path: '/v1/templates/{template_id}',
      credentials: SESSION_ONLY,
      summary: 'Delete a template and all its versions; owner only; jobs rendered from it stay',
      success: { status: 204, description: 'deleted' },
      errors: [...NOT_FOUND],
    }),
  },
});
