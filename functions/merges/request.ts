/**
 * POST /v1/merges on the wire: `parts` (2-200, each `{job_id, title?}` or a render's body with an
 * optional `title`), `page_numbers`, `outline`, `metadata`; parsed once into the merge command
 * (domain/merges/merges.ts). A render part is read as POST /v1/pdf reads a body (the same checks,
 * the same codes), its fields named `parts[i].field`.
 */
import { z } from 'zod';
import { parseOrThrow } from '../core/validation.js';
import { ServiceError } from '../domain/common/errors.js';
import {
  MAX_MERGE_PARTS,
  MERGE_PAGE_ESTIMATE_MS,
  MERGE_RENDER_ESTIMATE_MS,
  type MergeCommand,
  type MergePartCommand,
  MIN_MERGE_PARTS,
} from '../domain/merges/merges.js';
import {
  createPdfSchema,
  metadataSchema,
  optionalIdOf,
  parseCreatePdf,
  prefersAsync,
} from '../pdf/request.js';

const title = z
  .string({ error: 'must be a string of 1-500 characters' })
  .min(1, { error: 'must be a string of 1-500 characters' })
  .max(500, { error: 'must be a string of 1-500 characters' })
  .optional()
  .describe('the part\'s top entry in the outline; default: the part\'s own document title, else "Part N"');

const jobPartSchema = z.strictObject(
  {
    job_id: z.string({ error: 'must be a job id' }).min(1).max(200).describe('one of your completed jobs'),
    title,
  },
  { error: 'must be an object {job_id, title?}' },
);

const partsIssue = `must be an array of ${MIN_MERGE_PARTS} to ${MAX_MERGE_PARTS} parts`;

const renderPartSchema = (limits: Parameters<typeof createPdfSchema>[0]) =>
  createPdfSchema(limits)
    .omit({ async: true, webhook_id: true, protection: true, destination_id: true })
    .extend({ title });

type Limits = Parameters<typeof createPdfSchema>[0];

/** The limits each merge schema was made with: its render parts are read with a render schema of the same. */
const limitsOf = new WeakMap<object, Limits>();

/** The body as the OpenAPI document shows it; `parseCreateMerge` checks each part with its own schema. */
export const createMergeSchema = (limits: Limits) => {
  const schema = mergeSchema(limits);
  limitsOf.set(schema, limits);
  return schema;
};

const mergeSchema = (limits: Limits) =>
  z.strictObject(
    {
      parts: z
        .array(z.union([jobPartSchema, renderPartSchema(limits)]), { error: partsIssue })
        .min(MIN_MERGE_PARTS, { error: partsIssue })
        .max(MAX_MERGE_PARTS, { error: partsIssue })
        .describe(
          `${MIN_MERGE_PARTS} to ${MAX_MERGE_PARTS} parts, in this order: {job_id} (one of your completed jobs, as printed) or a render's body (rendered for the merge, one render unit each)`,
        ),
      page_numbers: z
        .enum(['continuous', 'per_part'], { error: 'must be "continuous" or "per_part"' })
        .optional()
        .describe(
          'continuous: the page numbers parts print (header/footer pageNumber and totalPages, paged_media counters) count across the whole document: parts rendered for the merge, and job parts from the order a job that prints page numbers keeps (a job made before kept orders, or a protected one: 422 naming parts[i].job_id); per_part: each part as printed. @default per_part',
        ),
      outline: z
        .boolean({ error: 'must be true or false' })
        .optional()
        .describe("one top bookmark per part, the part's own bookmarks beneath. @default true"),
      metadata: metadataSchema.optional(),
      async: z
        .boolean({ error: 'must be true or false' })
        .optional()
        .describe(
          `true: answer 202 at once with the pending merge (and a Location to poll) and merge in the background; the same as the header Prefer: respond-async. A merge estimated over the sync budget (RENDER_BUDGET_MS) runs so anyway: ${MERGE_RENDER_ESTIMATE_MS} ms per part rendered for it (twice with continuous page numbers), ${MERGE_PAGE_ESTIMATE_MS} ms per page of a job part (and one render's for a job part laid out again). @default false`,
        ),
      webhook_id: optionalIdOf('webhook endpoint').describe(
        "one of the account's webhook endpoints, told when the merge ends (job.completed, job.failed); unknown: 404 WEBHOOK_ENDPOINT_NOT_FOUND",
      ),
      destination_id: optionalIdOf('destination').describe(
        "one of the account's destinations: the merged PDF is copied into that bucket once the merge completes; unknown or another account's: 404 DESTINATION_NOT_FOUND, nothing charged",
      ),
    },
    { error: 'must be a JSON object' },
  );

/** The body with each part only an object: a part is read by its own schema (a job's or a render's). */
const outerSchema = (schema: ReturnType<typeof createMergeSchema>) =>
  schema.extend({
    parts: z
      .array(z.record(z.string(), z.unknown(), { error: 'must be an object' }), { error: partsIssue })
      .min(MIN_MERGE_PARTS, { error: partsIssue })
      .max(MAX_MERGE_PARTS, { error: partsIssue }),
  });

/** `parts.3.html` as a caller reads it: `parts[3].html`. */
const partPath = (field: string): string => field.replace(/^parts\.(\d+)/, 'parts[$1]');

const named = (index: number, e: unknown): unknown =>
  e instanceof ServiceError
    ? new ServiceError(e.code, `parts[${index}].${e.message}`, {
        details: (e.details ?? []).map((d) => ({ ...d, field: `parts[${index}].${d.field}` })),
      })
    : e;

export const parseCreateMerge = (
  body: Record<string, unknown>,
  schema: ReturnType<typeof createMergeSchema>,
  headers: Readonly<Record<string, string | undefined>> = {},
): MergeCommand => {
  const limits = limitsOf.get(schema);
  if (!limits) throw new Error('parseCreateMerge: the schema was not made by createMergeSchema');
  let outer: z.output<ReturnType<typeof outerSchema>>;
  try {
    outer = parseOrThrow(outerSchema(schema), body);
  } catch (e) {
    throw e instanceof ServiceError && e.details
      ? new ServiceError(e.code, partPath(e.message), {
          details: e.details.map((d) => ({ ...d, field: partPath(d.field) })),
        })
      : e;
  }
  const renderSchema = createPdfSchema(limits);
  const parts = outer.parts.map((raw, i): MergePartCommand => {
    if ('job_id' in raw) {
      const part = (() => {
        try {
          return parseOrThrow(jobPartSchema, raw);
        } catch (e) {
          throw named(i, e);
        }
      })();
      return { kind: 'job', jobId: part.job_id, title: part.title ?? null };
    }
    const { title: partTitle, ...render } = raw;
    for (const field of ['async', 'webhook_id', 'destination_id'] as const) {
      if (field in render) {
        const issue = 'is not a known field of a merge part (the merge is answered as one job)';
        throw new ServiceError('VALIDATION_ERROR', `parts[${i}].${field} ${issue}`, {
          details: [{ field: `parts[${i}].${field}`, issue }],
        });
      }
    }
    // An encrypted part cannot be merged (its pages cannot be read without its password), and a
    // merge's stored order must hold no password: protect the merged document instead.
    if ('protection' in render) {
      const issue = 'cannot be set on a merge part: an encrypted PDF cannot be merged';
      throw new ServiceError('INVALID_PDF_OPTIONS', `parts[${i}].protection ${issue}`, {
        details: [{ field: `parts[${i}].protection`, issue }],
      });
    }
    try {
      const parsedTitle = title.parse(partTitle);
      return {
        kind: 'render',
        render: parseCreatePdf(render, renderSchema, {}, JSON.stringify(render)),
        title: parsedTitle ?? null,
      };
    } catch (e) {
      if (e instanceof z.ZodError) {
        const issue = e.issues[0]?.message ?? 'is invalid';
        throw new ServiceError('VALIDATION_ERROR', `parts[${i}].title ${issue}`, {
          details: [{ field: `parts[${i}].title`, issue }],
        });
      }
      throw named(i, e);
    }
  });
  return {
    parts,
    pageNumbers: outer.page_numbers ?? 'per_part',
    outline: outer.outline ?? true,
    metadata: outer.metadata,
    async: outer.async === true || prefersAsync(headers.prefer),
    webhookId: outer.webhook_id ?? null,
    destinationId: outer.destination_id ?? null,
  };
};
