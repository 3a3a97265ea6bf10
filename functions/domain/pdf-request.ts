/**
 * POST /v1/pdf: the request schema (spec + contract), the error code each field's problems
 * answer with, and the normalised options the renderer is given.
 */
import { parse as parseSelector } from 'css-what';
import { z } from 'zod';
import { MAX_VARIABLES_DEPTH } from '../settings.js';
import { type ErrorCode, ServiceError } from './errors.js';
import type { PaperFormat, RenderRequest, WaitUntil } from './ports.js';
import { parseOrThrow } from './validation.js';

/** Paper sizes in inches, portrait (width, height), as Chromium prints them. */
export const PAPER_INCHES: Readonly<Record<PaperFormat, readonly [number, number]>> = {
  A3: [11.7, 16.54],
  A4: [8.27, 11.7],
  A5: [5.83, 8.27],
  LETTER: [8.5, 11],
  LEGAL: [8.5, 14],
};

const FORMATS = ['A4', 'A3', 'A5', 'LETTER', 'LEGAL'] as const satisfies readonly PaperFormat[];
const WAIT_UNTIL = [
  'load',
  'domcontentloaded',
  'networkidle0',
  'networkidle2',
] as const satisfies readonly WaitUntil[];

export const DEFAULT_MARGIN_INCHES = 0.4;
export const DEFAULT_TIMEOUT_MS = 30_000;

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

const inches = z
  .number({ error: 'must be a number of inches from 0 to 10' })
  .min(0, { error: 'must be a number of inches from 0 to 10' })
  .max(10, { error: 'must be a number of inches from 0 to 10' });

const pageLoadSchema = z.strictObject(
  {
    wait_until: z.enum(WAIT_UNTIL, { error: `must be one of ${WAIT_UNTIL.join(', ')}` }).optional(),
    timeout_ms: z
      .number({ error: 'must be an integer from 1000 to 120000' })
      .int({ error: 'must be an integer from 1000 to 120000' })
      .min(1000, { error: 'must be an integer from 1000 to 120000' })
      .max(120_000, { error: 'must be an integer from 1000 to 120000' })
      .optional(),
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

/** Whether `value` nests objects and arrays at most `max` levels deep; iterative, so any depth is safe to ask. */
export const withinDepth = (value: unknown, max: number): boolean => {
  const stack: [unknown, number][] = [[value, 1]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [v, depth] = next;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return false;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return true;
};

export const createPdfSchema = (limits: {
  readonly maxInlineHtmlBytes: number;
  readonly maxVariablesBytes: number;
}) =>
  z.strictObject(
    {
      html: z
        .string({ error: 'must be a non-blank string' })
        .check((ctx) => {
          const html = ctx.value;
          if (html.trim() === '') {
            ctx.issues.push({ code: 'custom', input: html, message: 'must be a non-blank string' });
          } else if (html.includes('\u0000')) {
            ctx.issues.push({ code: 'custom', input: html, message: 'must not contain NUL characters' });
          } else if (Buffer.byteLength(html, 'utf8') > limits.maxInlineHtmlBytes) {
            ctx.issues.push({
              code: 'custom',
              input: html,
              message: `must be at most ${limits.maxInlineHtmlBytes} bytes (UTF-8)`,
              params: { code: 'HTML_CONTENT_TOO_LARGE' },
            });
          }
        })
        .nullable()
        .optional(),
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
        .describe("a saved template's earlier version (with template_id only); default: the latest"),
      variables: z
        .record(z.string(), z.unknown(), { error: 'must be an object' })
        .refine((v) => withinDepth(v, MAX_VARIABLES_DEPTH), {
          error: `must not nest objects and arrays more than ${MAX_VARIABLES_DEPTH} levels deep`,
          abort: true,
        })
        .refine((v) => Buffer.byteLength(JSON.stringify(v), 'utf8') <= limits.maxVariablesBytes, {
          error: `must be at most ${limits.maxVariablesBytes} bytes as JSON`,
        })
        .nullable()
        .optional(),
      format: z.enum(FORMATS, { error: `must be one of ${FORMATS.join(', ')}` }).optional(),
      landscape: z.boolean({ error: 'must be true or false' }).optional(),
      print_background: z.boolean({ error: 'must be true or false' }).optional(),
      margins: z
        .strictObject(
          {
            top: inches.optional(),
            right: inches.optional(),
            bottom: inches.optional(),
            left: inches.optional(),
          },
          { error: 'must be an object {top, right, bottom, left} in inches' },
        )
        .optional(),
      page_load: pageLoadSchema.optional(),
    },
    { error: 'must be a JSON object' },
  );

export type CreatePdfBody = z.output<ReturnType<typeof createPdfSchema>>;

/** The code a problem with `field` answers with (contract.md: PDF endpoint choices). */
export const pdfProblemCode = (problem: { field: string }): ErrorCode => {
  if (problem.field === 'html') return 'INVALID_HTML_CONTENT';
  if (problem.field === 'page_load' || problem.field.startsWith('page_load.'))
    return 'INVALID_PAGE_LOAD_OPTIONS';
  return 'INVALID_PDF_OPTIONS';
};

const given = (v: unknown) => v !== undefined && v !== null;

/**
 * "Exactly one of html and template_id" is checked before the schema: it decides what kind of
 * request this is (contract: both or neither → INVALID_PDF_OPTIONS).
 */
const checkHtmlOrTemplateId = (body: Record<string, unknown>): void => {
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
const checkVersionWithTemplateId = (body: Record<string, unknown>): void => {
  if (!given(body.template_version) || given(body.template_id)) return;
  throw new ServiceError('INVALID_PDF_OPTIONS', 'template_version is given only with template_id', {
    details: [{ field: 'template_version', issue: 'is given only with template_id' }],
  });
};

/** Checks a POST /v1/pdf body: what kind of request it is first, then every field. */
export const parseCreatePdf = (
  body: Record<string, unknown>,
  schema: ReturnType<typeof createPdfSchema>,
): CreatePdfBody => {
  checkHtmlOrTemplateId(body);
  checkVersionWithTemplateId(body);
  return parseOrThrow(schema, body, pdfProblemCode);
};

export type RenderOptions = Pick<RenderRequest, 'pdf' | 'pageLoad'>;

/** Defaults applied, margins checked against the paper, timeout clamped to the render budget. */
export const renderOptionsFrom = (body: CreatePdfBody, renderBudgetMs: number): RenderOptions => {
  const format = body.format ?? 'A4';
  const landscape = body.landscape ?? false;
  const margins = {
    top: body.margins?.top ?? DEFAULT_MARGIN_INCHES,
    right: body.margins?.right ?? DEFAULT_MARGIN_INCHES,
    bottom: body.margins?.bottom ?? DEFAULT_MARGIN_INCHES,
    left: body.margins?.left ?? DEFAULT_MARGIN_INCHES,
  };
  const [portraitWidth, portraitHeight] = PAPER_INCHES[format];
  const [width, height] = landscape ? [portraitHeight, portraitWidth] : [portraitWidth, portraitHeight];
  if (margins.left + margins.right >= width || margins.top + margins.bottom >= height) {
    const message = `margins leave no printable area on ${format}${landscape ? ' landscape' : ''} paper (${width} x ${height} in)`;
    throw new ServiceError('INVALID_PDF_OPTIONS', message, {
      details: [{ field: 'margins', issue: message }],
    });
  }
  return {
    pdf: { format, landscape, printBackground: body.print_background ?? true, margins },
    pageLoad: {
      waitUntil: body.page_load?.wait_until ?? 'load',
      timeoutMs: Math.min(body.page_load?.timeout_ms ?? DEFAULT_TIMEOUT_MS, renderBudgetMs),
      waitForSelector: body.page_load?.wait_for_selector ?? null,
    },
  };
};
