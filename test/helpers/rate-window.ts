/**
 * The service counts requests in fixed windows of one clock minute (the usage store's
 * rate windows: render requests, template writes, webhook sends). A test that fills a window and
 * expects the next request refused is only meaningful when all its requests fall in one window;
 * on a busy machine a few seconds of requests can straddle a minute's end, and the new window
 * lets them through, as it should.
 *
 * Instead of waiting for a fresh minute before every such test (up to the time the test needs,
 * every third run or so), the attempt runs at once and, only when it failed and its requests
 * straddled a minute's end, runs again from the start: the attempt takes an account of its own
 * each time. A failure within one window is the test's failure.
 */
const minuteOf = (ms: number): number => Math.floor(ms / 60_000);

export const inOneRateWindow = async (attempt: () => Promise<void>, tries = 3): Promise<void> => {
  for (let tried = 1; ; tried++) {
    const startedIn = minuteOf(Date.now());
    try {
      await attempt();
      return;
    } catch (e) {
      if (tried >= tries || minuteOf(Date.now()) === startedIn) throw e;
    }
  }
};
