/**
 * The local stack's sweeper (the cloud's is a Lambda every minute): one pass at start-up, before
 * the stack serves (jobs a killed stack left behind end first), then one every
 * SWEEP_INTERVAL_SECONDS (default 5 s). The same handler as the Lambda's (functions/sweeper).
 */
import { settingsFromEnvironment } from '../../functions/settings.js';
import { createSweepHandler } from '../../functions/sweeper/index.js';

/** Runs the first pass, then starts the timer; answers the function that stops it (awaiting a pass under way). */
export const startLocalSweeper = async (
  env: Readonly<Record<string, string>>,
  onError: (error: unknown) => void = (e) => console.error('local stack: sweep failed:', e),
): Promise<() => Promise<void>> => {
  const sweep = createSweepHandler(env);
  const intervalMs = settingsFromEnvironment(env).sweepIntervalSeconds * 1000;
  let running: Promise<unknown> | undefined = sweep().catch(onError);
  await running;
  running = undefined;
  const timer = setInterval(() => {
    if (running) return; // a pass slower than the interval is not overlapped by the next
    running = sweep()
      .catch(onError)
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
};
