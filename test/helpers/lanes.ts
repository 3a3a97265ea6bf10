/**
 * Work run at most `n` at a time: a gate each piece passes through, or a list worked through by
 * `n` lanes (a lane takes the next item as soon as its last one is done, so one slow item holds
 * up one lane, not a whole batch).
 */
export const lanes = (n: number) => {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(work: () => Promise<T>): Promise<T> => {
    if (running < n) running += 1;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    }
  };
};

/** `check` on every item, `n` at a time; rejects with the first failure once all have settled. */
export const eachInLanes = async <T>(
  items: readonly T[],
  n: number,
  check: (item: T) => Promise<void>,
): Promise<void> => {
  const gate = lanes(n);
  const results = await Promise.allSettled(items.map((item) => gate(() => check(item))));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
};
