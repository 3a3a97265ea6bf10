/**
 * A page's console calls and uncaught errors are capped in the page itself, so that a flood costs
 * only its own render. Each console call and each uncaught error of a page is an event that
 * Chromium serialises and sends over the one DevTools connection every render on the browser
 * shares (puppeteer enables the Runtime domain on every page), and the renderer parses: measured
 * before the cap, a page's 50,000 console.log calls made another account's one-line render take
 * 1.2-4.4 s instead of 0.3-0.6 s, and left a backlog of 3 s on the next render; 50,000 from a
 * dedicated worker, 17.8 s.
 *
 * So, before the page's own scripts run, in every document of the page (Page.addScriptToEvaluate
 * OnNewDocument, and at once in the blank document that setContent writes into), console methods
 * are wrapped: console.error stops calling through after MAX_CONSOLE_CALLS calls, the others
 * never call through (nothing records them); uncaught errors and unhandled rejections past
 * MAX_PAGE_ERRORS are cancelled (preventDefault: Chromium then reports nothing). The wrappers keep
 * the originals and the primordials they call in their closure, out of the page's reach;
 * document.open (setContent's, or the page's own) erases a window's listeners, so it puts them
 * back. Dedicated workers and out-of-process frames are attached to from the renderer's session
 * and held at their start until their caps are in (puppeteer does not attach to workers at all:
 * warm-browser.ts). What the caps drop, each document reports (at most every REPORT_EVERY_MS), so
 * the diagnostics say how much was dropped. Whatever still gets past is counted where it arrives,
 * and past PROTOCOL_EVENT_LIMIT the render fails (PageEventFloodError) and its page is stopped.
 *
 * Measured after, over HTTP (test/integration/page-floods.test.ts; 2 cores at a load of 10-15,
 * another account's one-line render, median of nine during three floods against its idle median):
 * 50,000 console.log 241 → 201 ms, 20,000 console.error 253 → 273 ms, 50,000 uncaught errors
 * 146 → 171 ms, 50,000 unhandled rejections 170 → 216 ms, a worker's 100,000 console calls
 * 251 → 173 ms, a frame's 50,000 259 → 146 ms; the connection carried 135 KiB for the whole
 * console.log render instead of 816 KiB, 138 KiB instead of 4.6 MiB for the worker's. What remains
 * is the flooding page's own CPU, as a page that spins costs. Slowing a page down once it passed
 * its caps (Emulation.setCPUThrottlingRate 20) made the other render slower, not faster.
 */
import type { CDPSession, Protocol } from 'puppeteer-core';

/**
 * Console calls a document may make (the diagnostics keep 50 distinct entries, and count repeats
 * up to here).
 */
export const MAX_CONSOLE_CALLS = 1_000;
/**
 * Uncaught errors and unhandled rejections a document may report: each is an event of a kilobyte
 * or more (its stack trace), and the diagnostics keep 50 distinct entries.
 */
export const MAX_PAGE_ERRORS = 100;
/** The browser's own log lines (and a worker's console, which arrive as such) a render may get. */
export const MAX_LOG_ENTRIES = 1_000;
/**
 * Console and error events of one render past which it fails: the in-page caps were escaped (a
 * document each for many frames).
 */
export const PROTOCOL_EVENT_LIMIT = 2_500;

/** The page sent more console or error events than a render may. */
export class PageEventFloodError extends Error {
  constructor() {
    super(`the page sent more than ${PROTOCOL_EVENT_LIMIT} console messages or errors`);
    this.name = 'PageEventFloodError';
  }
}

/**
 * The page's own report of what its caps dropped: a binding (Runtime.addBinding on the renderer's
 * session, which needs no Runtime domain: its calls are the only Runtime events that session
 * gets). The caps take it out of the page's reach before any page script runs; a page that calls
 * it anyway can only change its own diagnostics.
 */
export const DROPPED_BINDING = '__renderCapsDropped';
/** A document reports its drops at most this often (one event each time, whatever the flood). */
const REPORT_EVERY_MS = 100;

/**
 * The caps, for a document (`window`) or a worker. No sourceURL: a stack trace through these
 * wrappers names no file of the renderer's.
 *
 * A document's console.error calls pass until MAX_CONSOLE_CALLS (the diagnostics record them);
 * its other console methods never reach Chromium's console at all (nothing records them, and each
 * would be an event on the shared connection). A worker's console never does (its messages reach
 * the page's log, which the diagnostics do not record). Uncaught errors and unhandled rejections
 * of a document past MAX_PAGE_ERRORS, and a worker's errors forwarded to its Worker object past
 * the same count, are cancelled (preventDefault: the page's own listeners still see them; Chromium
 * reports nothing). A worker's unhandled rejections, which only reach the page's log, are all
 * cancelled.
 */
const capsScript = (scope: 'document' | 'worker'): string => `(() => {
  const apply = Reflect.apply;
  const construct = Reflect.construct;
  const defineProperty = Object.defineProperty;
  const getOwnPropertyNames = Object.getOwnPropertyNames;
  const addEventListener = EventTarget.prototype.addEventListener;
  const preventDefault = Event.prototype.preventDefault;
  const targetOf = Object.getOwnPropertyDescriptor(Event.prototype, 'target').get;
  const schedule = globalThis.setTimeout;
  const target = globalThis;
  const worker = ${scope === 'worker'};
  const report = typeof target.${DROPPED_BINDING} === 'function' ? target.${DROPPED_BINDING} : undefined;
  if (report) delete target.${DROPPED_BINDING};
  let calls = 0;
  let errors = 0;
  let dropped = 0;
  let first = true;
  let reporting = false;
  const flush = () => {
    reporting = false;
    apply(report, target, ['' + dropped]);
  };
  // The first at once, then at most every ${REPORT_EVERY_MS} ms.
  const tell = () => {
    if (!report) return;
    if (first) {
      first = false;
      flush();
    } else if (!reporting) {
      reporting = true;
      apply(schedule, target, [flush, ${REPORT_EVERY_MS}]);
    }
  };
  const drop = () => {
    dropped++;
    tell();
  };
  const c = globalThis.console;
  if (c) {
    for (const name of getOwnPropertyNames(c)) {
      const original = c[name];
      if (typeof original !== 'function') continue;
      const wrapped = !worker && name === 'error'
        ? { [name](...args) {
            if (++calls > ${MAX_CONSOLE_CALLS}) return drop();
            return apply(original, c, args);
          } }[name]
        : { [name]() {} }[name];
      defineProperty(c, name, { value: wrapped, writable: true, configurable: true, enumerable: true });
    }
  }
  const cancel = (event) => {
    if (++errors <= ${MAX_PAGE_ERRORS}) return;
    drop();
    apply(preventDefault, event, []);
  };
  // A worker's uncaught error goes on to its Worker object, and is reported only if not cancelled
  // there: so it is counted there, and the page still gets it.
  const NativeWorker = globalThis.Worker;
  if (typeof NativeWorker === 'function') {
    const Worker = new Proxy(NativeWorker, {
      construct(native, args, newTarget) {
        const created = construct(native, args, newTarget);
        apply(addEventListener, created, ['error', cancel]);
        return created;
      },
    });
    defineProperty(globalThis, 'Worker', { value: Worker, writable: true, configurable: true });
  }
  if (worker) {
    apply(addEventListener, target, ['unhandledrejection', (event) => apply(preventDefault, event, []), true]);
    return;
  }
  // A window's own error events only: a resource's error passes through capture too.
  const own = (event) => {
    if (apply(targetOf, event, []) === target) cancel(event);
  };
  const listen = () => {
    apply(addEventListener, target, ['error', own, true]);
    apply(addEventListener, target, ['unhandledrejection', own, true]);
  };
  listen();
  // document.open (setContent's, or the page's own) erases a window's listeners: put them back.
  const open = Document.prototype.open;
  defineProperty(Document.prototype, 'open', {
    value: { open(...args) {
      const result = apply(open, this, args);
      listen();
      return result;
    } }.open,
    writable: true,
    configurable: true,
  });
})();`;

const DOCUMENT_CAPS = capsScript('document');
const WORKER_CAPS = capsScript('worker');

/** What a session's targets report: drops, per document (cumulative counts, by context). */
export interface PageCaps {
  /** Console errors and uncaught errors the page's documents dropped so far. */
  dropped(): number;
  /** Stops listening. */
  stop(): void;
}

const noop = (): void => {};

/**
 * Targets a page session auto-attaches to (and holds until its caps are in): its dedicated
 * workers, and its out-of-process frames, whose documents get the caps as the page's do.
 */
const AUTO_ATTACH = {
  autoAttach: true,
  waitForDebuggerOnStart: true,
  flatten: true,
  filter: [{ type: 'worker' }, { type: 'iframe' }, { exclude: true }],
};

/**
 * Installs the caps in every document the page will have (and in the one it has now), in every
 * dedicated worker before its script runs, and in out-of-process frames: each attached to from
 * the renderer's session, paused until its caps are in (waitForDebuggerOnStart; puppeteer's own
 * auto-attach resumes only its own hold), and left with no domain enabled, so that nothing of it
 * is sent but the drops it reports.
 */
export const installPageCaps = async (cdp: CDPSession): Promise<PageCaps> => {
  const counts = new Map<string, number>();
  let stopped = false;

  const watch = (session: CDPSession): void => {
    session.on('Runtime.bindingCalled', ({ name, payload, executionContextId }: BindingCalled) => {
      if (stopped || name !== DROPPED_BINDING) return;
      const dropped = Number(payload);
      if (Number.isSafeInteger(dropped) && dropped > 0)
        counts.set(`${session.id()}/${executionContextId}`, dropped);
    });
    session.on(
      'Target.attachedToTarget',
      ({ sessionId, targetInfo }: Protocol.Target.AttachedToTargetEvent) => {
        const child = session.connection()?.session(sessionId);
        if (child) capTarget(child, targetInfo.type).catch(noop); // the target went away meanwhile
      },
    );
  };

  const capTarget = async (session: CDPSession, type: string): Promise<void> => {
    try {
      if (type === 'worker') {
        // Evaluated while the worker waits for the debugger: before its script, imports included.
        await session.send('Runtime.evaluate', { expression: WORKER_CAPS });
      } else {
        watch(session);
        await session.send('Runtime.addBinding', { name: DROPPED_BINDING });
        await session.send('Page.addScriptToEvaluateOnNewDocument', { source: DOCUMENT_CAPS });
      }
      await session.send('Target.setAutoAttach', AUTO_ATTACH);
    } finally {
      // Whatever failed, the target is never left waiting: a frame that never resumed would hold
      // its page's load for ever.
      await session.send('Runtime.runIfWaitingForDebugger');
    }
  };

  watch(cdp);
  // Sent together, in this order: a session runs its commands in order, so the caps are in before
  // auto-attach holds a frame, in one round trip instead of three.
  await Promise.all([
    cdp.send('Runtime.addBinding', { name: DROPPED_BINDING }),
    cdp.send('Page.addScriptToEvaluateOnNewDocument', { source: DOCUMENT_CAPS, runImmediately: true }),
    cdp.send('Target.setAutoAttach', AUTO_ATTACH),
  ]);
  return {
    dropped() {
      let total = 0;
      for (const n of counts.values()) total += n;
      return total;
    },
    stop() {
      stopped = true;
    },
  };
};

interface BindingCalled {
  readonly name: string;
  readonly payload: string;
  readonly executionContextId: number;
}
