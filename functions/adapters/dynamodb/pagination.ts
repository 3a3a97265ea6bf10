/** Offset paging on DynamoDB, which cannot skip items. */
import { type DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';

/** Every item of `query`, page after page (for queries an account's own items bound). */
export const queryAll = async (
  db: DynamoDBDocumentClient,
  query: QueryCommandInput,
): Promise<Record<string, unknown>[]> => {
  const items: Record<string, unknown>[] = [];
  let next: Record<string, unknown> | undefined;
  do {
    const out = await db.send(new QueryCommand({ ...query, ExclusiveStartKey: next }));
    items.push(...(out.Items ?? []));
    next = out.LastEvaluatedKey;
  } while (next);
  return items;
};

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

/**
 * The `limit` items of `query` after the first `offset`: those are skipped with `keysOnly` as the
 * projection (skipItems; DynamoDB's LastEvaluatedKey carries every key attribute whatever the
 * projection), then the page is read until it is full or the query ends.
 */
export const queryPage = async (
  db: DynamoDBDocumentClient,
  query: QueryCommandInput,
  { limit, offset }: { readonly limit: number; readonly offset: number },
  keysOnly: Pick<QueryCommandInput, 'ProjectionExpression'>,
): Promise<Record<string, unknown>[]> => {
  const { startKey, exhausted } =
    offset > 0
      ? await skipItems(db, { ...query, ...keysOnly }, offset)
      : { startKey: undefined, exhausted: false };
  if (exhausted) return [];
  const items: Record<string, unknown>[] = [];
  let next = startKey;
  do {
    const out = await db.send(
      new QueryCommand({ ...query, Limit: limit - items.length, ExclusiveStartKey: next }),
    );
    items.push(...(out.Items ?? []));
    next = out.LastEvaluatedKey;
  } while (next && items.length < limit);
  return items;
};

/**
 * Up to `limit` items of a query written across `shards` GSI partitions (the open-job and
 * pending-delivery indexes), shard by shard, each item turned into a ref by `parse` (an item it
 * cannot read is left out).
 */
export const queryShards = async <T>(
  db: DynamoDBDocumentClient,
  shards: number,
  queryOf: (shard: number) => QueryCommandInput,
  limit: number,
  parse: (item: Record<string, unknown>) => T | undefined,
): Promise<T[]> => {
  const refs: T[] = [];
  for (let shard = 0; shard < shards && refs.length < limit; shard++) {
    let next: Record<string, unknown> | undefined;
    do {
      const out = await db.send(
        new QueryCommand({ ...queryOf(shard), Limit: limit - refs.length, ExclusiveStartKey: next }),
      );
      for (const item of out.Items ?? []) {
        const ref = parse(item);
        if (ref !== undefined) refs.push(ref);
      }
      next = out.LastEvaluatedKey;
    } while (next && refs.length < limit);
  }
  return refs;
};
