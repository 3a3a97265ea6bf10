/**
 * POST /v1/pdf on the wire: the request schema (spec + contract), the error code each field's
 * problems answer with, and the parse into the render command (domain/render-command.ts).
 */
import { createHash } from 'node:crypto';
import { parse as parseSelector } from 'css-what';
import stringify from 'safe-stable-stringify';
import { z } from 'zod';
import { type Exactly, parseOrThrow, without } from '../core/validation.js';
import { type ErrorCode, ServiceError } from '../domain/common/errors.js';
import type { WaitUntil } from '../domain/common/ports.js';
import {
  MAX_FILE_NAME_CHARACTERS,
  MAX_FILE_NAME_TEMPLATE_CHARACTERS,
  renderFileName,
} from '../domain/renders/file-name.js';
import { checkIdempotencyKey } from '../domain/renders/idempotency.js';
import type { RenderCommand } from '../domain/renders/render-command.js';
import {
  DEFAULT_TIMEOUT_MS,
  type RequestedOptions,
  SYNC_MAX_TIMEOUT_MS,
} from '../domain/renders/render-options.js';
import { INTEGER_SETTINGS, MAX_HEADER_FOOTER_BYTES, MAX_VARIABLES_DEPTH } from '../settings.js';
import {
  hasNumbersJsonParseChanges,
  readTemplateDataText,
  stringifyTemplateData,
  TemplateDataError,
  type TemplateDataText,
} from '../templating/index.js';
import { eInvoiceSchema } from './e-invoice-schema.js';
import { protectionSchema } from './finishing-options.js';
import { pageOptionFields, variablesSchema } from './options.js';

const WAIT_UNTIL = [
  'load',
  'domcontentloaded',
  'networkidle0',
  'networkidle2',
] as const satisfies readonly WaitUntil[];

export const MAX_METADATA_CHARACTERS = 1000;
export const MAX_KEYWORDS = 50;
export const MAX_KEYWORD_CHARACTERS = 200;

const COMBINATORS = new Set(['descendant', 'child', 'parent', 'sibling', 'adjacent', 'column-combinator']);

/** css-what accepts a dangling or leading combinator (`p >`, `> p`); querySelector does not. */
const isValidSelector = (selector: string): boolean => {
  try {
    const groups = parseSelector(selector);
    return (
      groups.length > 0 &&
      groups.every(
        (g) => g.length > 0 && !COMBINATORS.has(g.at(-1)?.type ?? '') && !COMBINATORS.has(g[0]?.type ?? ''),
      )
    );
  } catch {
    return false;
  }
};

/** The widest async budget a deployment may set (settings.ts): the schema's bound; each mode's own is checked in the domain (render-options.ts). */
const MAX_ASYNC_TIMEOUT_MS = INTEGER_SETTINGS.asyncRenderBudgetMs.max;
const TIMEOUT_RANGE = `must be an integer from 1000 to ${SYNC_MAX_TIMEOUT_MS} (sync) or to the async render budget (async)`;

const pageLoadSchema = z.strictObject(
  {
    wait_until: z.enum(WAIT_UNTIL, { error: `must be one of ${WAIT_UNTIL.join(', ')}` }).optional(),
    timeout_ms: z
      .number({ error: TIMEOUT_RANGE })
      .int({ error: TIMEOUT_RANGE })
      .min(1000, { error: TIMEOUT_RANGE })
      .max(MAX_ASYNC_TIMEOUT_MS, { error: TIMEOUT_RANGE })
      .optional()
      .describe(
        `milliseconds the page may take to load and print (default ${DEFAULT_TIMEOUT_MS}): 1000 to ${SYNC_MAX_TIMEOUT_MS} for a sync render (clamped to the sync budget, RENDER_BUDGET_MS); for an async render (async: true, a batch) up to the async budget, ASYNC_RENDER_BUDGET_MS (600000 by default, at most ${MAX_ASYNC_TIMEOUT_MS}); past it the render fails with PDF_RENDERING_TIMEOUT`,
      ),
    wait_for_selector: z
      .string({ error: 'must be a CSS selector or null' })
      .refine((s) => s.trim() !== '', { error: 'must not be blank (use null to not wait)' })
      .max(1000, { error: 'must be at most 1000 characters' })
      .refine(isValidSelector, { error: 'is not a valid CSS selector' })
      .nullable()
      .optional(),
  },
  { error: 'must be an object' },
);

/** HTML given inline: a non-blank string without NUL of at most `maxBytes` of UTF-8. */
export const inlineHtml = (maxBytes: number) =>
  z.string({ error: 'must be a non-blank string' }).check((ctx) => {
    const html = ctx.value;
    if (html.trim() === '') {
      ctx.issues.push({ code: 'custom', input: html, message: 'must be a non-blank string' });
    } else if (html.includes('\u0000')) {
      ctx.issues.push({ code: 'custom', input: html, message: 'must not contain NUL characters' });
    } else if (Buffer.byteLength(html, 'utf8') > maxBytes) {
      ctx.issues.push({
        code: 'custom',
        input: html,
        message: `must be at most ${maxBytes} bytes (UTF-8)`,
        params: { code: 'HTML_CONTENT_TOO_LARGE' },
      });
    }
  });

export const headerFooterHtml = (where: 'top' | 'bottom') =>
  inlineHtml(MAX_HEADER_FOOTER_BYTES)
    .nullable()
    .optional()
    .describe(
      `a Jinja2 template (the same variables as html) printed in the ${where} margin of every page; elements of class pageNumber, totalPages, date and title are filled in; inline styles only, no network resources; at most ${MAX_HEADER_FOOTER_BYTES} bytes of UTF-8; not with template_id (a saved template brings its own)`,
    );

/**
 * Document information text: a PDF text string holds any Unicode, but control characters and
 * unpaired surrogates have no meaning in a title and no valid UTF-16 form.
 */
const metadataText = (maxCharacters: number) => {
  const issue = `must be a string of 1 to ${maxCharacters} characters after trimming`;
  return z
    .string({ error: issue })
    .trim()
    .min(1, { error: issue })
    .refine((text) => [...text].length <= maxCharacters, { error: issue })
    .refine((text) => !/[\p{Cc}\p{Cs}]/u.test(text), {
      error: 'must not contain control characters or unpaired surrogates',
    });
};

export const metadataSchema = z
  .strictObject(
    {
      title: metadataText(MAX_METADATA_CHARACTERS)
        .optional()
        .describe("the PDF's title; default: the document's <title>, when it has one"),
      author: metadataText(MAX_METADATA_CHARACTERS).optional(),
      subject: metadataText(MAX_METADATA_CHARACTERS).optional(),
      keywords: z
        .array(metadataText(MAX_KEYWORD_CHARACTERS), {
          error: `must be an array of at most ${MAX_KEYWORDS} strings`,
        })
        .max(MAX_KEYWORDS, { error: `must be an array of at most ${MAX_KEYWORDS} strings` })
        .optional(),
    },
    { error: 'must be an object {title?, author?, subject?, keywords?}' },
  )
  .describe("the PDF's document information (plain text, not templated); the creation date is always set");

/**
 * A request's reference to one of the account's resources by id (`webhook_id`, `destination_id`
 * on renders, batches and merges): absent or null for none; the caller describes what it does.
 */
export const optionalIdOf = (what: 'webhook endpoint' | 'destination') =>
  z
    .string({ error: `must be a ${what} id` })
    .min(1, { error: `must be a ${what} id` })
    .max(200, { error: `must be a ${what} id` })
    .nullable()
    .optional();

export const createPdfSchema = (limits: {
  readonly maxInlineHtmlBytes: number;
  readonly maxVariablesBytes: number;
}) =>
  z.strictObject(
    {
      html: inlineHtml(limits.maxInlineHtmlBytes).nullable().optional(),
      header_html: headerFooterHtml('top'),
      footer_html: headerFooterHtml('bottom'),
      template_id: z
        .string({ error: 'must be a template id' })
        .min(1, { error: 'must be a template id' })
        .max(200, { error: 'must be a template id' })
        .nullable()
        .optional(),
      template_version: z
        .number({ error: 'must be an integer of 1 or more' })
        .int({ error: 'must be an integer of 1 or more' })
        .min(1, { error: 'must be an integer of 1 or more' })
        .max(Number.MAX_SAFE_INTEGER, { error: 'must be an integer of 1 or more' })
        .nullable()
        .optional()
        .describe(
          "a saved template's version (with template_id only); default: the latest, for the caller's own templates only. Another account's (public) template needs it (else 422 VALIDATION_ERROR naming template_version), must be one of its public versions (else 404), and renders offline: its page reaches no network at all",
        ),
      variables: variablesSchema(limits.maxVariablesBytes).nullable().optional(),
      ...pageOptionFields,
      page_load: pageLoadSchema.optional(),
      metadata: metadataSchema.optional(),
      protection: protectionSchema.optional(),
      e_invoice: eInvoiceSchema.optional(),
      async: z
        .boolean({ error: 'must be true or false' })
        .optional()
        .describe(
          'true: answer 202 at once with the pending job (and a Location to poll) and render in the background; the same as the header Prefer: respond-async. @default false',
        ),
      webhook_id: optionalIdOf('webhook endpoint').describe(
        "one of the account's webhook endpoints, told when the job ends (job.completed, job.failed); unknown: 404 WEBHOOK_ENDPOINT_NOT_FOUND",
      ),
      destination_id: optionalIdOf('destination').describe(
        "one of the account's destinations (/v1/destinations): the PDF is copied into that bucket once the job completes (the job's `delivery`); unknown or another account's: 404 DESTINATION_NOT_FOUND, nothing charged",
      ),
      file_name: fileNameTemplateSchema.describe(
        `the name the PDF downloads as (its link's Content-Disposition), made of the variables: \`{{ name }}\` or \`{{ customer.name }}\` placeholders only (no Jinja2 tags or filters), then made safe (characters no file system takes become _, \`.pdf\` added), at most ${MAX_FILE_NAME_CHARACTERS} characters; a bad one: 422 INVALID_FILE_NAME. Default: \`{job_id}.pdf\``,
      ),
    },
    { error: 'must be a JSON object' },
  );

export type CreatePdfBody = z.output<ReturnType<typeof createPdfSchema>>;

/** A render body's fields that are not its options: what it renders, with what, and how it is answered. */
const NOT_OPTIONS = [
  'html',
  'header_html',
  'footer_html',
  'template_id',
  'template_version',
  'variables',
  'async',
  'webhook_id',
  'destination_id',
  'file_name',
] as const;

/** A parsed render body's options: the rest of it. */
export type RenderOptionsOf<Body> = Omit<Body, (typeof NOT_OPTIONS)[number]>;

// The schema's options are the domain's RequestedOptions, field for field: a field only the schema
// has (it would be dropped on its way to the renderer) or only the domain has fails to compile
// here (test/types/render-options.ts proves it).
const _options: Exactly<RenderOptionsOf<CreatePdfBody>, RequestedOptions> = true;

/** `file_name` as sent: a template of `{{ variable }}` placeholders (domain/renders/file-name.ts). */
export const fileNameTemplateSchema = z
  .string({ error: 'must be a string' })
  .min(1, { error: 'must not be empty' })
  .max(MAX_FILE_NAME_TEMPLATE_CHARACTERS, {
    error: `must be at most ${MAX_FILE_NAME_TEMPLATE_CHARACTERS} characters`,
  })
  .nullable()
  .optional();

/** The code a problem with `field` answers with (contract.md: PDF endpoint choices). */
export const pdfProblemCode = (problem: { field: string }): ErrorCode => {
  if (problem.field === 'file_name' || problem.field.endsWith('.file_name')) return 'INVALID_FILE_NAME';
  if (problem.field === 'html' || problem.field === 'header_html' || problem.field === 'footer_html')
    return 'INVALID_HTML_CONTENT';
  if (problem.field === 'page_load' || problem.field.startsWith('page_load.'))
    return 'INVALID_PAGE_LOAD_OPTIONS';
  if (problem.field === 'e_invoice' || problem.field.startsWith('e_invoice.')) return 'INVALID_E_INVOICE';
  return 'INVALID_PDF_OPTIONS';
};

const given = (v: unknown) => v !== undefined && v !== null;

/**
 * "Exactly one of html and template_id" is checked before the schema: it decides what kind of
 * request this is (contract: both or neither → INVALID_PDF_OPTIONS).
 */
export const checkHtmlOrTemplateId = (body: Record<string, unknown>): void => {
  if (given(body.html) !== given(body.template_id)) return;
  const both = given(body.html);
  const message = both
    ? 'give exactly one of html and template_id, not both'
    : 'give exactly one of html and template_id';
  throw new ServiceError('INVALID_PDF_OPTIONS', message, {
    details: [
      { field: both ? 'template_id' : 'html', issue: both ? 'must not be given with html' : 'is required' },
    ],
  });
};

/** A version names one of a saved template's versions: without a template it means nothing. */
export const checkVersionWithTemplateId = (body: Record<string, unknown>): void => {
  if (!given(body.template_version) || given(body.template_id)) return;
  throw new ServiceError('INVALID_PDF_OPTIONS', 'template_version is given only with template_id', {
    details: [{ field: 'template_version', issue: 'is given only with template_id' }],
  });
};

/**
 * A saved template is the whole document: its header and footer come with it (and can be edited
 * there), so header_html and footer_html go with inline html only, as template_version goes with
 * template_id only.
 */
export const checkHeaderFooterWithHtml = (body: Record<string, unknown>): void => {
  if (!given(body.template_id)) return;
  for (const field of ['header_html', 'footer_html'] as const) {
    if (!given(body[field])) continue;
    const issue = "is given only with html (a saved template's header and footer are part of it)";
    throw new ServiceError('INVALID_PDF_OPTIONS', `${field} ${issue}`, { details: [{ field, issue }] });
  }
};

/**
 * The same body, whatever its key order or spacing, hashes the same. The body is hashed as
 * JSON.parse reads it; when `variables` hold numbers it reads differently from the template
 * (`10.0`, `1e3`, integers beyond 2^53), those variables are hashed again as sent, so that a body
 * that renders differently does not replay another's PDF (and every other body hashes as before).
 */
export const bodyHash = (body: unknown, variables?: TemplateDataText): string => {
  const hash = createHash('sha256').update(stringify(body) ?? '');
  // Only variables JSON.parse would have changed were read whole (`changed`).
  if (variables?.changed && hasNumbersJsonParseChanges(variables.changed)) {
    hash.update(`\n${stringifyTemplateData(variables.changed, { sortKeys: true })}`);
  }
  return hash.digest('hex');
};

/**
 * `variables` as JSON sent them (key order, `10.0`, big integers), from the body's text once the
 * schema has passed them (depth and size included): as text for the renderer, which alone reads
 * them into a template's values.
 */
const templateVariables = (text: string, body: Record<string, unknown>): TemplateDataText | undefined => {
  try {
    return readTemplateDataText(text, { member: 'variables', maxDepth: MAX_VARIABLES_DEPTH, parsed: body });
  } catch (e) {
    if (!(e instanceof TemplateDataError)) throw e;
    throw new ServiceError('INVALID_PDF_OPTIONS', `variables ${e.message}`, {
      details: [{ field: 'variables', issue: e.message }],
    });
  }
};

/** RFC 7240: `Prefer: respond-async` (among other preferences, any case, with or without parameters). */
export const prefersAsync = (prefer: string | undefined): boolean =>
  prefer?.split(',').some((p) => p.split(';')[0]?.trim().toLowerCase() === 'respond-async') ?? false;

/**
 * A POST /v1/pdf request, parsed once into the render command: what kind of request it is
 * first, then every field, then the Idempotency-Key header (422 in that order).
 */
export const parseCreatePdf = (
  body: Record<string, unknown>,
  schema: ReturnType<typeof createPdfSchema>,
  headers: Readonly<Record<string, string | undefined>>,
  /** The body's text. @default the body written as JSON (nothing more to keep) */
  text?: string,
): RenderCommand => {
  checkHtmlOrTemplateId(body);
  checkVersionWithTemplateId(body);
  checkHeaderFooterWithHtml(body);
  const parsed = parseOrThrow(schema, body, pdfProblemCode);
  const key = checkIdempotencyKey(headers['idempotency-key']);
  const {
    html,
    header_html,
    footer_html,
    template_id,
    template_version,
    async: asyncBody,
    webhook_id,
    destination_id,
    file_name,
  } = parsed;
  const variables = templateVariables(text ?? JSON.stringify(body), body) ?? readTemplateDataText('{}');
  return {
    // checkHtmlOrTemplateId let exactly one of them through.
    source:
      html !== undefined && html !== null
        ? { kind: 'inline', html, headerHtml: header_html ?? null, footerHtml: footer_html ?? null }
        : { kind: 'saved', templateId: template_id as string, version: template_version ?? null },
    variables,
    options: without(parsed, NOT_OPTIONS),
    // The parsed body, as ever: whitespace the schema trims does not make another request.
    idempotency: key === undefined ? null : { key, bodyHash: bodyHash(parsed, variables) },
    mode: asyncBody === true || prefersAsync(headers.prefer) ? 'async' : 'sync',
    webhookId: webhook_id ?? null,
    destinationId: destination_id ?? null,
    fileName:
      file_name === undefined || file_name === null ? null : renderFileName(file_name, body.variables ?? {}),
  };
};
