/**
 * Compiled by `npm run typecheck`, never run: a render option declared on one side only (the
 * request schemas, or the domain's RequestedOptions) fails `tsc` at the edge that hands the one to
 * the other, through the very types the edges assert on (functions/pdf/request.ts,
 * functions/batches/request.ts, functions/templates/request.ts). Each `@ts-expect-error` below is
 * itself an error once its line compiles, so a check that goes lax fails the typecheck.
 */
import { z } from 'zod';
import type { BatchOptionsOf } from '../../functions/batches/request.js';
import { createBatchSchema } from '../../functions/batches/request.js';
import type { Exactly } from '../../functions/core/validation.js';
import type { RequestedOptions, TemplatePdfOptions } from '../../functions/domain/renders/render-options.js';
import { templatePdfOptionsSchema } from '../../functions/pdf/options.js';
import { createPdfSchema, type RenderOptionsOf } from '../../functions/pdf/request.js';

const limits = { maxInlineHtmlBytes: 1024, maxVariablesBytes: 1024 };
/** A page option the schemas gain and the domain does not know. */
const grayscale = { grayscale: z.boolean().optional() };

type Render<S extends z.ZodType> = RenderOptionsOf<z.output<S>>;
type Batch<S extends z.ZodType> = BatchOptionsOf<z.output<S>>;

// As the tree is: each edge's options are the domain's.
export const render: Exactly<Render<ReturnType<typeof createPdfSchema>>, RequestedOptions> = true;
export const batch: Exactly<Batch<ReturnType<typeof createBatchSchema>>, RequestedOptions> = true;
export const template: Exactly<z.output<typeof templatePdfOptionsSchema>, TemplatePdfOptions> = true;

const renderSchema = createPdfSchema(limits).extend(grayscale);
const batchSchema = createBatchSchema(limits).extend(grayscale);
const templateSchema = templatePdfOptionsSchema.extend(grayscale);

// @ts-expect-error a field only POST /v1/pdf's schema has
export const renderSchemaOnly: Exactly<Render<typeof renderSchema>, RequestedOptions> = true;
// @ts-expect-error a field only POST /v1/batches' schema has
export const batchSchemaOnly: Exactly<Batch<typeof batchSchema>, RequestedOptions> = true;
// @ts-expect-error a field only a template's pdf_options schema has
export const templateSchemaOnly: Exactly<z.output<typeof templateSchema>, TemplatePdfOptions> = true;

type DomainWithGrayscale = RequestedOptions & { readonly grayscale?: boolean };
// @ts-expect-error a field only the domain has: no request could ever set it
export const domainOnly: Exactly<Render<ReturnType<typeof createPdfSchema>>, DomainWithGrayscale> = true;

const tighter = createPdfSchema(limits).extend({ landscape: z.literal(true).optional() });
// @ts-expect-error a field on both sides whose types differ
export const typeDiffers: Exactly<Render<typeof tighter>, RequestedOptions> = true;
