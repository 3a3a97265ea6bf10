/**
 * POST /v1/batches on the wire: the request schema (a render's template and options once, and
 * `items`, each with its own variables and document information) and the parse into the batch
 * command (domain/batches.ts). Every item's variables are read as JSON sent them, as a render's
 * are (functions/templating/data.ts): key order, `10.0` and big integers kept.
 */
import { z } from 'zod';
import { type Exactly, parseOrThrow, without } from '../core/validation.js';
import type { BatchCommand } from '../domain/batches/batches.js';
import { MAX_BATCH_ITEMS, MAX_E_INVOICE_BATCH_ITEMS } from '../domain/batches/batches.js';
import { type ErrorCode, ServiceError } from '../domain/common/errors.js';
import { renderFileName } from '../domain/renders/file-name.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../domain/renders/idempotency.js';
import type { RequestedOptions } from '../domain/renders/render-options.js';
import { eInvoiceSchema } from '../pdf/e-invoice-schema.js';
import { variablesSchema } from '../pdf/options.js';
import {
  checkHeaderFooterWithHtml,
  checkHtmlOrTemplateId,
  checkVersionWithTemplateId,
  createPdfSchema,
  fileNameTemplateSchema,
  metadataSchema,
  optionalIdOf,
  pdfProblemCode,
} from '../pdf/request.js';
import { MAX_VARIABLES_DEPTH } from '../settings.js';
import { parseTemplateData, type TemplateData, TemplateDataError } from '../templating/index.js';
import type { PyDict } from '../templating/values.js';

const itemsIssue = `must be an array of 1 to ${MAX_BATCH_ITEMS} items`;

/** The most characters of an item's `reference`. */
export const MAX_REFERENCE_CHARACTERS = 200;
const referenceIssue = `must be a string of 1-${MAX_REFERENCE_CHARACTERS} characters without control characters`;

const fileNameIssue =
  'must be a file name of 1-200 characters ending in .pdf, without / or \\, control characters or a leading dot';
/** A name a ZIP entry can carry on every system: no path, not hidden (control characters: below). */
const FILE_NAME = /^(?![.])[^/\\]{0,196}\.pdf$/i;
const hasControlCharacters = (name: string): boolean =>
  [...name].some((c) => (c.codePointAt(0) ?? 0) < 0x20 || c.codePointAt(0) === 0x7f);

export const createBatchSchema = (limits: {
  readonly maxInlineHtmlBytes: number;
  readonly maxVariablesBytes: number;
}) =>
  createPdfSchema(limits)
    .omit({ variables: true, async: true, metadata: true })
    .extend({
      metadata: metadataSchema
        .optional()
        .describe("every item's PDF document information, unless the item gives its own"),
      items: z
        .array(
          z.strictObject(
            {
              variables: variablesSchema(limits.maxVariablesBytes)
                .nullable()
                .optional()
                .describe("this item's template variables, as a render's `variables`"),
              metadata: metadataSchema
                .optional()
                .describe("this item's PDF document information (replaces the batch's `metadata`)"),
              e_invoice: eInvoiceSchema
                .optional()
                .describe(
                  `this item's e-invoice, as a render's \`e_invoice\` (replaces the batch's): validated before the batch is accepted, a failing one answering 422 INVALID_E_INVOICE naming the item and each rule; at most ${MAX_E_INVOICE_BATCH_ITEMS} items of a batch have an e-invoice`,
                ),
              file_name: z
                .string({ error: fileNameIssue })
                .regex(FILE_NAME, { error: fileNameIssue })
                .refine((name) => !hasControlCharacters(name), { error: fileNameIssue })
                .optional()
                .describe(
                  "this item's PDF's name in the batch's ZIP (output.zip); default: `{n}-{job_id}.pdf`. A name used twice gets ` (2)`, ` (3)`… before .pdf",
                ),
              reference: z
                .string({ error: referenceIssue })
                .min(1, { error: referenceIssue })
                .max(MAX_REFERENCE_CHARACTERS, { error: referenceIssue })
                .refine((r) => !hasControlCharacters(r), { error: referenceIssue })
                .optional()
                .describe(
                  "the caller's string for this item (an invoice number, a customer id), echoed on its job, its webhook events and the ZIP's manifest.json",
                ),
              idempotency_key: z
                .string({ error: 'must be 1-255 printable ASCII characters' })
                .regex(IDEMPOTENCY_KEY_PATTERN, { error: 'must be 1-255 printable ASCII characters' })
                .optional()
                .describe(
                  "this item's idempotency key (the Idempotency-Key header's format; unique within the batch): within 24 hours, an item with a key the account used for the same item (template, options, variables, metadata) is that earlier job again, rendered and counted once; with another item, 422 IDEMPOTENCY_KEY_REUSED",
                ),
            },
            {
              error:
                'must be an object {variables?, metadata?, e_invoice?, file_name?, reference?, idempotency_key?}',
            },
          ),
          { error: itemsIssue },
        )
        .min(1, { error: itemsIssue })
        .max(MAX_BATCH_ITEMS, { error: itemsIssue })
        .describe(`1 to ${MAX_BATCH_ITEMS} items: one job each, in this order`),
      output: z
        .strictObject(
          {
            merged_pdf: z
              .boolean({ error: 'must be true or false' })
              .optional()
              .describe("one PDF of every completed item's, in item order, a bookmark each"),
            zip: z
              .boolean({ error: 'must be true or false' })
              .optional()
              .describe(
                "a ZIP of every completed item's PDF (named by file_name) and a manifest.json listing every item",
              ),
          },
          { error: 'must be an object {merged_pdf?, zip?}' },
        )
        .optional()
        .describe(
          'built once when the batch completes: GET /v1/batches/{batch_id} then has merged_pdf_url and zip_url, and batch.completed is sent once they are ready',
        ),
      webhook_id: optionalIdOf('webhook endpoint').describe(
        "one of the account's webhook endpoints, told batch.completed when every job ended, and each item's job.completed, job.failed or job.cancelled when it subscribed to them; unknown: 404 WEBHOOK_ENDPOINT_NOT_FOUND",
      ),
      file_name: fileNameTemplateSchema.describe(
        "each item's PDF's name (its download's, and in the ZIP), made of the item's variables as a render's `file_name` is; an item's own `file_name` wins. Default: `{job_id}.pdf` to download, `{n}-{job_id}.pdf` in the ZIP",
      ),
    });

/** A batch body's fields that are not its options: what it renders, its items, and whom it tells. */
const NOT_OPTIONS = [
  'html',
  'header_html',
  'footer_html',
  'template_id',
  'template_version',
  'items',
  'webhook_id',
  'destination_id',
  'output',
  'file_name',
] as const;

/** A parsed batch body's options (every item's): the rest of it. */
export type BatchOptionsOf<Body> = Omit<Body, (typeof NOT_OPTIONS)[number]>;

// The batch schema's options are a render's, field for field (as in functions/pdf/request.ts).
const _options: Exactly<
  BatchOptionsOf<z.output<ReturnType<typeof createBatchSchema>>>,
  RequestedOptions
> = true;

/** Item `index`'s name from the batch's `file_name` and its variables; 422 naming the item. */
const batchFileName = (template: string, variables: unknown, index: number): string => {
  try {
    return renderFileName(template, variables ?? {});
  } catch (e) {
    if (!(e instanceof ServiceError)) throw e;
    const issue = `for items[${index}]: ${e.details?.[0]?.issue ?? e.message}`;
    throw new ServiceError('INVALID_FILE_NAME', `file_name ${issue}`, {
      details: [{ field: 'file_name', issue }],
    });
  }
};

/** `items.3.variables` as a caller reads it: `items[3].variables`. */
const itemPath = (field: string): string => field.replace(/^items\.(\d+)/, 'items[$1]');

/**
 * A render's codes for a render's fields (and an item's variables); the items array itself and an
 * item's idempotency key (as the Idempotency-Key header) are VALIDATION_ERROR.
 */
const batchProblemCode = (problem: { field: string }): ErrorCode =>
  problem.field === 'items' ||
  problem.field === 'output' ||
  problem.field.startsWith('output.') ||
  /^items\.\d+\.(idempotency_key|file_name|reference)$/.test(problem.field)
    ? 'VALIDATION_ERROR'
    : pdfProblemCode({ field: problem.field.replace(/^items\.\d+\./, '') });

const renamed = (e: unknown): unknown =>
  e instanceof ServiceError && e.details
    ? new ServiceError(e.code, itemPath(e.message), {
        details: e.details.map((d) => ({ ...d, field: itemPath(d.field) })),
      })
    : e;

/** Each item's variables as JSON sent them, read from the body's text once the schema passed them. */
const itemVariables = (text: string, body: Record<string, unknown>, count: number): TemplateData[] => {
  let whole: PyDict;
  try {
    // The body, its items, an item, then the variables' own depth.
    whole = parseTemplateData(text, { maxDepth: MAX_VARIABLES_DEPTH + 3, parsed: body }) as PyDict;
  } catch (e) {
    if (!(e instanceof TemplateDataError)) throw e;
    throw new ServiceError('INVALID_PDF_OPTIONS', `items ${e.message}`, {
      details: [{ field: 'items', issue: e.message }],
    });
  }
  const items = whole.get('items') as PyDict[];
  const empty = () => parseTemplateData('{}');
  return Array.from({ length: count }, (_, i) => {
    const variables = items[i]?.get('variables');
    return variables === null || variables === undefined ? empty() : (variables as TemplateData);
  });
};

/**
 * A batch's own `e_invoice` is every item's: only `invoice_from_variables` (each item's variables
 * are its invoice) makes sense there; an item's own XML or invoice goes in `items[i].e_invoice`.
 */
const checkBatchEInvoice = (eInvoice: { readonly invoice_from_variables?: true } | undefined): void => {
  if (eInvoice === undefined || eInvoice.invoice_from_variables) return;
  const issue =
    "on a batch takes invoice_from_variables: true (every item's variables are its invoice); give an item's own xml or invoice as items[i].e_invoice";
  throw new ServiceError('INVALID_E_INVOICE', `e_invoice ${issue}`, {
    details: [{ field: 'e_invoice', issue }],
  });
};

/** A POST /v1/batches request, parsed once into the batch command (422 in the order a render's are). */

export const parseCreateBatch = (
  body: Record<string, unknown>,
  schema: ReturnType<typeof createBatchSchema>,
  _headers: Readonly<Record<string, string | undefined>>,
  text?: string,
): BatchCommand => {
  checkHtmlOrTemplateId(body);
  checkVersionWithTemplateId(body);
  checkHeaderFooterWithHtml(body);
  let parsed: z.output<typeof schema>;
  try {
    parsed = parseOrThrow(schema, body, (p) => batchProblemCode(p));
  } catch (e) {
    throw renamed(e);
  }
  const {
    html,
    header_html,
    footer_html,
    template_id,
    template_version,
    items,
    webhook_id,
    destination_id,
    output,
    file_name,
  } = parsed;
  const bodyItems = body.items as readonly { readonly variables?: unknown }[];
  checkBatchEInvoice(parsed.e_invoice);
  const variables = itemVariables(text ?? JSON.stringify(body), body, items.length);
  return {
    source:
      html !== undefined && html !== null
        ? { kind: 'inline', html, headerHtml: header_html ?? null, footerHtml: footer_html ?? null }
        : { kind: 'saved', templateId: template_id as string, version: template_version ?? null },
    options: without(parsed, NOT_OPTIONS),
    items: items.map((item, i) => ({
      variables: variables[i] as TemplateData,
      ...(item.metadata ? { metadata: item.metadata } : {}),
      ...(item.e_invoice ? { eInvoice: item.e_invoice } : {}),
      ...(item.idempotency_key !== undefined ? { idempotencyKey: item.idempotency_key } : {}),
      ...(item.file_name !== undefined
        ? { fileName: item.file_name }
        : file_name !== undefined && file_name !== null
          ? { fileName: batchFileName(file_name, bodyItems[i]?.variables, i) }
          : {}),
      ...(item.reference !== undefined ? { reference: item.reference } : {}),
    })),
    webhookId: webhook_id ?? null,
    destinationId: destination_id ?? null,
    ...(output && (output.merged_pdf || output.zip)
      ? { output: { merged_pdf: output.merged_pdf === true, zip: output.zip === true } }
      : {}),
  };
};
