/**
 * The template request bodies (contract: Templates): their schemas, which also describe them in
 * the OpenAPI document, and the code each field's problems answer with: INVALID_TEMPLATE_NAME for
 * the name, INVALID_HTML_CONTENT or HTML_CONTENT_TOO_LARGE for the html, VALIDATION_ERROR for the
 * rest (INVALID_PDF_OPTIONS for pdf_options, as POST /v1/pdf answers for the same fields). Zod only: the route declarations import it, and the CDK app reads those.
 */
import { z } from 'zod';
import { type Exactly, type Problem, parseOrThrow } from '../core/validation.js';
import type { ErrorCode } from '../domain/common/errors.js';
import { jsonMemberText } from '../domain/common/json-member.js';
import { JsonText } from '../domain/common/json-text.js';
import type {
  CreateTemplateCommand,
  TemplateVisibilityCommand,
  UpdateTemplateCommand,
} from '../domain/templates/template-commands.js';
import { PAGE_OPTION_NAMES, templatePdfOptionsSchema, variablesSchema } from '../pdf/options.js';
import { MAX_HEADER_FOOTER_BYTES } from '../settings.js';

export const MAX_TEMPLATE_NAME_CHARACTERS = 200;

/** A string DynamoDB and JSON both carry unchanged: no unpaired UTF-16 surrogate. */
const LONE_SURROGATE = /\p{Cs}/u;

const nameIssue = `must be a string of 1 to ${MAX_TEMPLATE_NAME_CHARACTERS} characters after trimming`;

const nameSchema = z
  .string({ error: nameIssue })
  .trim()
  .min(1, { error: nameIssue })
  // Characters are code points: an emoji is one character, as a reader counts it.
  .refine((name) => [...name].length <= MAX_TEMPLATE_NAME_CHARACTERS, { error: nameIssue })
  .refine((name) => !LONE_SURROGATE.test(name), { error: 'must be valid Unicode (an unpaired surrogate)' })
  .describe(`1-${MAX_TEMPLATE_NAME_CHARACTERS} characters after trimming (stored trimmed)`);

const htmlSchema = (maxBytes: number) =>
  z
    .string({ error: 'must be a non-blank string' })
    .check((ctx) => {
      const html = ctx.value;
      const issue = (message: string, code?: ErrorCode) =>
        ctx.issues.push({ code: 'custom', input: html, message, ...(code ? { params: { code } } : {}) });
      if (html.trim() === '') issue('must be a non-blank string');
      else if (html.includes('\u0000')) issue('must not contain NUL characters');
      else if (LONE_SURROGATE.test(html)) issue('must be valid Unicode (an unpaired surrogate)');
      else if (Buffer.byteLength(html, 'utf8') > maxBytes) {
        issue(`must be at most ${maxBytes} bytes (UTF-8)`, 'HTML_CONTENT_TOO_LARGE');
      }
    })
    .describe(`a Jinja2 template, at most ${maxBytes} bytes of UTF-8; checked for syntax, never run`);

interface TemplateLimits {
  readonly maxTemplateHtmlBytes: number;
  readonly maxVariablesBytes: number;
}

const sampleSchema = (limits: TemplateLimits, edit: string) =>
  variablesSchema(limits.maxVariablesBytes)
    .nullable()
    .optional()
    .describe(
      `sample data for the template's variables (the limits of POST /v1/pdf's variables): what previews render with, offered in snippets; versioned with the html; ${edit}`,
    );

const pdfOptionsSchema = (edit: string) =>
  templatePdfOptionsSchema
    .nullable()
    .optional()
    .describe(
      `POST /v1/pdf's ${PAGE_OPTION_NAMES.slice(0, -1).join(', ')} and ${PAGE_OPTION_NAMES.at(-1)}, saved with the template: a render of it takes them where it gives none of its own (margins side by side); versioned with the html; ${edit}`,
    );

const headerFooterSchema = (where: 'top' | 'bottom', edit: string) =>
  htmlSchema(MAX_HEADER_FOOTER_BYTES)
    .nullable()
    .optional()
    .describe(
      `a Jinja2 template printed in the ${where} margin of every page (classes pageNumber, totalPages, date, title filled in; inline styles only), at most ${MAX_HEADER_FOOTER_BYTES} bytes of UTF-8; ${edit}`,
    );

export const createTemplateSchema = (limits: TemplateLimits) =>
  z.strictObject({
    name: nameSchema,
    html: htmlSchema(limits.maxTemplateHtmlBytes),
    header_html: headerFooterSchema('top', 'null or absent: none'),
    footer_html: headerFooterSchema('bottom', 'null or absent: none'),
    sample_variables: sampleSchema(limits, 'null or absent: none'),
    pdf_options: pdfOptionsSchema('null or absent: none'),
    is_public: z.boolean({ error: 'must be true or false' }).default(false),
  });

/** What a PATCH changes: a given field (null included) replaces it; an absent one is kept. */
export const updateTemplateSchema = (limits: TemplateLimits) =>
  z
    .strictObject({
      name: nameSchema.optional(),
      html: htmlSchema(limits.maxTemplateHtmlBytes)
        .optional()
        .describe('new html makes a new version; the old ones stay renderable'),
      header_html: headerFooterSchema('top', 'null removes it; a change makes a new version'),
      footer_html: headerFooterSchema('bottom', 'null removes it; a change makes a new version'),
      sample_variables: sampleSchema(limits, 'null removes it; a change makes a new version'),
      pdf_options: pdfOptionsSchema(
        'null removes them; given, they replace the saved ones whole; a change makes a new version',
      ),
    })
    .refine(
      (body) =>
        body.name !== undefined ||
        body.html !== undefined ||
        body.header_html !== undefined ||
        body.footer_html !== undefined ||
        body.sample_variables !== undefined ||
        body.pdf_options !== undefined,
      {
        error:
          'must give at least one of name, html, header_html, footer_html, sample_variables and pdf_options',
      },
    );

export const templateVisibilitySchema = z.strictObject({
  is_public: z.boolean({ error: 'must be true or false' }),
});

export type CreateTemplateBody = z.output<ReturnType<typeof createTemplateSchema>>;
export type UpdateTemplateBody = z.output<ReturnType<typeof updateTemplateSchema>>;
export type TemplateVisibilityBody = z.output<typeof templateVisibilitySchema>;

/** A body with its sample data as the text sent, as the use cases take it. */
type WithSampleText<B extends { sample_variables?: unknown }> = Omit<B, 'sample_variables'> & {
  sample_variables?: JsonText | null | undefined;
};

// The parsed bodies are the use cases' commands, field for field (pdf_options: a render's page
// options, TemplatePdfOptions): the compiler holds the two in step.
const _create: Exactly<WithSampleText<CreateTemplateBody>, CreateTemplateCommand> = true;
const _update: Exactly<WithSampleText<UpdateTemplateBody>, UpdateTemplateCommand> = true;
const _visibility: Exactly<TemplateVisibilityBody, TemplateVisibilityCommand> = true;

/** The code a problem with `field` answers with (contract: Templates). */
const templateProblemCode = (problem: Problem): ErrorCode => {
  if (problem.field === 'name') return 'INVALID_TEMPLATE_NAME';
  if (problem.field === 'html' || problem.field === 'header_html' || problem.field === 'footer_html')
    return 'INVALID_HTML_CONTENT';
  // The same fields and code as POST /v1/pdf's; a render option sent beside pdf_options instead of
  // in it (`printBackground`, `format`) is the mistake it is on POST /v1/pdf, with its code.
  if (
    problem.field === 'pdf_options' ||
    problem.field.startsWith('pdf_options.') ||
    problem.suggestion?.startsWith('pdf_options.')
  )
    return 'INVALID_PDF_OPTIONS';
  return 'VALIDATION_ERROR';
};

/**
 * A create or edit body, checked, into its command: `sample_variables` (checked by the schema as
 * an object under the limits of a render's variables) taken from the body's text as sent, since
 * the object JSON.parse made of it has lost its integer-like keys' place and its numbers' spelling.
 */
const parseTemplateBody = <B extends { sample_variables?: unknown }>(
  body: Record<string, unknown>,
  schema: z.ZodType<B>,
  text: string,
): WithSampleText<B> => {
  const { sample_variables, ...parsed } = parseOrThrow(schema, body, templateProblemCode);
  if (sample_variables === undefined) return parsed;
  const sample = sample_variables === null ? undefined : jsonMemberText(text, 'sample_variables');
  return { ...parsed, sample_variables: sample === undefined ? null : new JsonText(sample) };
};

export const parseCreateTemplate = (
  body: Record<string, unknown>,
  schema: ReturnType<typeof createTemplateSchema>,
  _headers: unknown,
  text: string,
): CreateTemplateCommand => parseTemplateBody(body, schema, text);

export const parseUpdateTemplate = (
  body: Record<string, unknown>,
  schema: ReturnType<typeof updateTemplateSchema>,
  _headers: unknown,
  text: string,
): UpdateTemplateCommand => parseTemplateBody(body, schema, text);
