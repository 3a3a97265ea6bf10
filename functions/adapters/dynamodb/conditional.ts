/**
 * Conditional writes and the SDK's retries. A write whose answer timed out is retried by the SDK
 * (client.ts); when the first attempt had landed, the retry fails the write's own condition, and
 * the caller would take its own write for someone else's. Each store checks, after a refusal that
 * came on a retry, whether the item shows its own write, and then takes it as done.
 */
export const isConditionFailure = (e: unknown): boolean =>
  (e as Error | undefined)?.name === 'ConditionalCheckFailedException';

/** A condition refused on the SDK's second or later attempt: the first may have landed. */
export const refusedOnRetry = (e: unknown): boolean =>
  isConditionFailure(e) && ((e as { $metadata?: { attempts?: number } }).$metadata?.attempts ?? 1) > 1;

/**
 * `write`, or, when it was refused on a retry, what `landed` finds of it (undefined: it did not
 * land, someone else's write refused it, and the refusal stands).
 */
export const orLanded = async <T>(
  write: () => Promise<T>,
  landed: () => Promise<T | undefined>,
): Promise<T> => {
  try {
    return await write();
  } catch (e) {
    if (refusedOnRetry(e)) {
      const own = await landed();
      if (own !== undefined) return own;
    }
    throw e;
  }
};

/**
 * The condition that a counter, once `adding` is added, stays within `limit`: `path <= limit -
 * adding`, where a counter that does not exist yet counts as 0. A missing attribute fails every
 * comparison, so the absent case is its own branch, and that branch is only there when 0 + adding
 * fits: a first write of a month is held to the limit as every later one is (a batch of 30 on a
 * plan of 10 with nothing used yet, or a render on a plan of 0, is refused).
 */
export const withinLimit = (
  path: string,
  most: string,
  {
    adding,
    limit,
    attribute = path,
  }: {
    readonly adding: number;
    readonly limit: number;
    /** The attribute whose absence means 0 (`key_ids` for `size(key_ids)`). @default path */
    readonly attribute?: string;
  },
): { readonly condition: string; readonly most: number } => ({
  condition:
    adding <= limit ? `(attribute_not_exists(${attribute}) OR ${path} <= ${most})` : `${path} <= ${most}`,
  most: limit - adding,
});
