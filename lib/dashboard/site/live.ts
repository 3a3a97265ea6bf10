/**
 * Keeping a page's unfinished work up to date (async jobs, batches, webhook deliveries) without a
 * reload: the page asks again every few seconds while something on screen can still change, and
 * stops when nothing can. A hidden tab asks nothing (nobody is looking, and every request is a
 * read the account's users pay for in latency); it asks at once when it is shown again.
 */
import { useEffect, useRef } from 'preact/hooks';
import { POLL_INTERVAL_MS } from './poll-interval.js';

/**
 * Calls `tick` every `intervalMs` while `active` and the document is visible, one call at a time
 * (the next is scheduled when the last has settled, so a slow API is never asked twice at once).
 */
export const usePolling = (active: boolean, tick: () => Promise<unknown>, intervalMs = POLL_INTERVAL_MS) => {
  // The latest tick, without restarting the timer each render.
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    if (!active) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    let running = false;
    const schedule = () => {
      clearTimeout(timer);
      if (!stopped && document.visibilityState === 'visible') timer = setTimeout(run, intervalMs);
    };
    const run = () => {
      if (running || stopped) return;
      running = true;
      latest
        .current()
        .catch(() => {})
        .finally(() => {
          running = false;
          schedule();
        });
    };
    const onVisibility = () => {
      if (document.visibilityState === 'visible') run();
      else clearTimeout(timer);
    };
    document.addEventListener('visibilitychange', onVisibility);
    schedule();
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [active, intervalMs]);
};
