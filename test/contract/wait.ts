/** Waiting in contract cases: until a condition holds, or a generous deadline that only a broken part reaches. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const waitUntil = async (what: string, done: () => boolean, timeoutMs = 30_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await sleep(10);
  }
};
