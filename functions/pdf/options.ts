/**
 * The wire fields a render's page takes, declared once: POST /v1/pdf has them at its top level,
 * a saved template keeps the same fields as its `pdf_options` (the render's own override them),
 * and both take `variables`-like objects (a render's `variables`, a template's `sample_variables`)
 * under the same limits. Zod only: the route declarations import it, and the CDK app reads those.
 */
import { z } from 'zod';
import type { PaperFormat } from '../domain/common/ports.js';
import type { PdfALevel } from '../domain/renders/render-options.js';
import { MAX_VARIABLES_DEPTH } from '../settings.js';
import { savedEInvoiceSchema } from './e-invoice-schema.js';
import { markSchema, signatureSchema } from './finishing-options.js';

export const FORMATS = ['A4', 'A3', 'A5', 'LETTER', 'LEGAL'] as const satisfies readonly PaperFormat[];
export const PDF_A_LEVELS = ['2b', '3b'] as const satisfies readonly PdfALevel[];

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

/** A JSON object of template variables: at most MAX_VARIABLES_DEPTH levels deep and `maxBytes` as JSON. */
export const variablesSchema = (maxBytes: number) =>
  z
    .record(z.string(), z.unknown(), { error: 'must be an object' })
    .refine((v) => withinDepth(v, MAX_VARIABLES_DEPTH), {
      error: `must not nest objects and arrays more than ${MAX_VARIABLES_DEPTH} levels deep`,
      abort: true,
    })
    .refine((v) => Buffer.byteLength(JSON.stringify(v), 'utf8') <= maxBytes, {
      error: `must be at most ${maxBytes} bytes as JSON`,
    });

const inches = z
  .number({ error: 'must be a number of inches from 0 to 10' })
  .min(0, { error: 'must be a number of inches from 0 to 10' })
  .max(10, { error: 'must be a number of inches from 0 to 10' });

const flag = () => z.boolean({ error: 'must be true or false' }).optional();

/** The page and navigation fields, each optional (absent: the default, or the saved template's). */
export const pageOptionFields = {
  format: z.enum(FORMATS, { error: `must be one of ${FORMATS.join(', ')}` }).optional(),
  landscape: flag(),
  print_background: flag(),
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
  paged_media: flag().describe(
    "Fill counter(page), counter(pages) and target-counter(attr(X), page) in the document's own ::before/::after content (in <style> elements) with the pages printed; prints the page again once (twice when the numbers move a target). Default: false.",
  ),
  outline: flag().describe('PDF bookmarks from the printed h1–h6, nested by level. Default: false.'),
  tagged: flag().describe(
    "A tagged (accessible) PDF: a structure tree, /Lang from <html lang>, the title shown in the viewer; much larger for big tables. Default: the deployment's setting (PDF_TAGGED, off unless set).",
  ),
  watermark: markSchema('watermark').optional(),
  stamp: markSchema('stamp').optional(),
  signature: signatureSchema.optional(),
  pdf_a: z
    .enum(PDF_A_LEVELS, { error: `must be one of ${PDF_A_LEVELS.join(', ')}` })
    .optional()
    .describe(
      'An archivable PDF/A-2b or PDF/A-3b: an sRGB output intent, XMP metadata identifying the part and mirroring the document information, every font embedded, printable link annotations, a trailer ID, no JavaScript or launch actions. Not with protection (PDF/A forbids encryption). Default: the PDF as printed.',
    ),
};

/** The page and navigation fields' names, in order (for messages and descriptions that list them). */
export const PAGE_OPTION_NAMES = Object.keys(pageOptionFields);

/** A saved template's page options: POST /v1/pdf's own fields, the defaults of its renders. */
export const templatePdfOptionsSchema = z
  .strictObject(
    { ...pageOptionFields, e_invoice: savedEInvoiceSchema.optional() },
    {
      error: `must be an object {${PAGE_OPTION_NAMES.map((name) => `${name}?`).join(', ')}}`,
    },
  )
  .describe(
    "POST /v1/pdf's page and navigation fields, saved with the template: a render of it uses them where it gives none of its own (margins side by side)",
  );
