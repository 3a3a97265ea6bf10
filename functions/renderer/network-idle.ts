/**
 * `networkidle0` and `networkidle2`, counted by the renderer from the render's own requests.
 *
 * Chromium's own network-idle lifecycle events (what puppeteer's waitUntil waits for) come once
 * per document *load*: its idleness detector starts at a navigation's DOMContentLoaded and stops
 * for good once it has reported. A render's document is written into the page's about:blank
 * (document.open/write, as page.setContent does), which starts no new load: so when the page's
 * about:blank had already gone idle before the write (0.5-2 s after the page opened: a spare
 * page waiting for its render, a page opened while a template ran), the written document never
 * got the event, and every network-idle render on it waited out its whole timeout (measured: a
 * page written 4 s after it opened got init, DOMContentLoaded and load, never networkIdle; one
 * written at once got it after 515 ms). Whether a render could finish depended on how long its
 * page had waited.
 *
 * So the renderer counts instead, as Playwright does for its own `networkidle`: every request of
 * the page's frames (the page's own DevTools session reports its same-process frames; each
 * out-of-process frame is attached to and reported the same way) from before the document is
 * written; from DOMContentLoaded on (where Chromium's detector starts), the page is idle once at
 * most `maxInflight` of them have been in flight for NETWORK_QUIET_MS without a break. Nothing of
 * the page's history before the write counts.
 */
import type { CDPSession } from 'puppeteer-core';

/** Chromium's and puppeteer's window: no more than N requests in flight for this long. */
export const NETWORK_QUIET_MS = 500;

export interface NetworkWatch {
  /**
   * Resolves once at most `maxInflight` requests have been in flight for NETWORK_QUIET_MS,
   * counting from this call (make it once the document's DOMContentLoaded has fired). Never
   * rejects; the caller bounds the wait.
   */
  idle(): Promise<void>;
  /** Stops counting and listening. */
  stop(): void;
}

const noop = (): void => {};

type Listener = (event: { requestId: string }) => void;

/**
 * Starts counting the requests of `cdp`'s page. Call it before the document is written; every
 * request from then on is counted until it finishes or fails.
 */
export const watchNetwork = async (cdp: CDPSession, maxInflight: number): Promise<NetworkWatch> => {
  const inflight = new Set<string>();
  const cleanups: (() => void)[] = [];
  let stopped = false;
  let quiet: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;

  /** Re-arms the quiet window when the count allows it; breaks it when it does not. */
  const check = (): void => {
    if (!quiet || stopped) return;
    if (inflight.size > maxInflight) {
      clearTimeout(timer);
      timer = undefined;
      return;
    }
    if (timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      if (inflight.size <= maxInflight) quiet?.();
    }, NETWORK_QUIET_MS);
  };

  /** Counts one session's requests: the page's, or an out-of-process frame's. */
  const count = (session: CDPSession): Promise<unknown> => {
    const key = session.id();
    const started: Listener = ({ requestId }) => {
      inflight.add(`${key}/${requestId}`);
      // A request that starts breaks the quiet window when it takes the count over the bound.
      if (inflight.size > maxInflight) check();
    };
    const ended: Listener = ({ requestId }) => {
      if (inflight.delete(`${key}/${requestId}`)) check();
    };
    session.on('Network.requestWillBeSent', started);
    session.on('Network.loadingFinished', ended);
    session.on('Network.loadingFailed', ended);
    cleanups.push(() => {
      session.off('Network.requestWillBeSent', started);
      session.off('Network.loadingFinished', ended);
      session.off('Network.loadingFailed', ended);
    });
    // No payloads kept for DevTools: the renderer reads none, and a page's images would be copied.
    return session.send('Network.enable', { maxTotalBufferSize: 0, maxResourceBufferSize: 0 });
  };

  /**
   * An out-of-process frame (another site's iframe) reports its requests on a session of its own:
   * it is attached to, counted, and let run. It waits for that (waitForDebuggerOnStart), so no
   * request of its is missed. Only frames: a worker's requests were not counted by Chromium's
   * detector either, and attaching to each would be a round trip per worker on the connection
   * every render shares.
   */
  const onAttached = (child: CDPSession): void => {
    if (stopped) return;
    // A frame whose session fails is let run all the same: its requests are simply not counted.
    count(child)
      .catch(noop)
      .finally(() => child.send('Runtime.runIfWaitingForDebugger').catch(noop));
  };
  cdp.on('sessionattached', onAttached);
  cleanups.push(() => cdp.off('sessionattached', onAttached));

  await Promise.all([
    count(cdp),
    cdp.send('Target.setAutoAttach', {
      autoAttach: true,
      waitForDebuggerOnStart: true,
      flatten: true,
      filter: [{ type: 'iframe', exclude: false }, { exclude: true }],
    }),
  ]);

  return {
    idle: () =>
      new Promise<void>((resolve) => {
        quiet = resolve;
        check();
      }),
    stop: () => {
      stopped = true;
      clearTimeout(timer);
      for (const cleanup of cleanups) cleanup();
    },
  };
};
