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
