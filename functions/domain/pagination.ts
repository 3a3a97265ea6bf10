import { type DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
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
});

export type Page = z.output<typeof pageQuerySchema>;

export const parsePage = (query: Readonly<Record<string, string | undefined>>): Page =>
  parseOrThrow(pageQuerySchema, { limit: query.limit, offset: query.offset });

/**
 * Where a page at `offset` starts. DynamoDB cannot skip items: this reads `offset` items of
 * `query` (give it a keys-only ProjectionExpression) and answers the key to start after, or that
 * there are no more. The offset cap (MAX_LIST_OFFSET) bounds what it reads.
 */
export const skipItems = async (
  db: DynamoDBDocumentClient,
  query: QueryCommandInput,
  offset: number,
): Promise<{ startKey: Record<string, unknown> | undefined; exhausted: boolean }> => {
  let startKey: Record<string, unknown> | undefined;
  let left = offset;
  while (left > 0) {
    const out = await db.send(
      new QueryCommand({ ...query, Limit: Math.min(left, 1000), ExclusiveStartKey: startKey }),
    );
    left -= out.Items?.length ?? 0;
    startKey = out.LastEvaluatedKey;
    if (!startKey) return { startKey, exhausted: true };
  }
  return { startKey, exhausted: false };
};
