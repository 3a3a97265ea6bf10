/** The `limit` and `offset` query parameters of the listings, parsed into a domain Page. */
import { z } from 'zod';
import type { Page } from '../domain/common/pagination.js';
import { MAX_LIST_OFFSET } from '../settings.js';
import { parseOrThrow } from './validation.js';

/** A query-string integer: digits only, then the range; `fallback` when absent. */
const queryInteger = (min: number, max: number, fallback: number) => {
  const error = `must be an integer from ${min} to ${max}`;
  return z
    .string({ error })
    .regex(/^\d{1,9}$/, { error })
    .default(String(fallback))
    .transform(Number)
    .pipe(z.number().int().min(min, { error }).max(max, { error }));
};

/**
 * `limit` 1-100 (default 20) and `offset` 0 to MAX_LIST_OFFSET (default 0); anything else answers
 * 422 VALIDATION_ERROR.
 */
export const pageQuerySchema = z.object({
  limit: queryInteger(1, 100, 20),
  offset: queryInteger(0, MAX_LIST_OFFSET, 0),
}) satisfies z.ZodType<Page, Readonly<Record<string, string | undefined>>>;

export type { Page } from '../domain/common/pagination.js';

export const parsePage = (query: Readonly<Record<string, string | undefined>>): Page =>
  parseOrThrow(pageQuerySchema, { limit: query.limit, offset: query.offset });
