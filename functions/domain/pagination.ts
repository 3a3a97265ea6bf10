import { z } from 'zod';
import { parseOrThrow } from './validation.js';

const integerText = (min: number, max: number, error: string) =>
  z
    .string({ error })
    .regex(/^\d{1,9}$/, { error })
    .transform(Number)
    .pipe(z.number().min(min, { error }).max(max, { error }));

const paginationSchema = z.object({
  limit: integerText(1, 100, 'must be an integer from 1 to 100').optional(),
  offset: integerText(0, 1_000_000_000, 'must be an integer of 0 or more').optional(),
});

export interface Page {
  readonly limit: number;
  readonly offset: number;
}

/** `limit` 1-100 (default 20) and `offset` 0 or more (default 0), else 422 VALIDATION_ERROR. */
export const parsePage = (query: Readonly<Record<string, string | undefined>>): Page => {
  const { limit, offset } = parseOrThrow(paginationSchema, { limit: query.limit, offset: query.offset });
  return { limit: limit ?? 20, offset: offset ?? 0 };
};
