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
 * are wrapped to stop calling through after MAX_CONSOLE_CALLS calls, and uncaught errors and
 * unhandled rejections past MAX_PAGE_ERRORS are cancelled (preventDefault: Chromium then reports
 * nothing). The wrappers keep the originals and the primordials they call in their closure, out of
 * the page's reach; document.open (setContent's, or the page's own) erases a window's listeners,
 * so it puts them back. Workers are never attached to (warm-browser.ts): their console reaches
 * nobody. Whatever still gets past (an out-of-process frame) is counted where it arrives, and past
 * PROTOCOL_EVENT_LIMIT the render fails (PageEventFloodError) and its page is stopped.
 */
import type { CDPSession } from 'puppeteer-core';

/**
 * Console calls a document may make (the diagnostics keep 50 distinct entries, and count repeats
 * up to here).
 */
export const MAX_CONSOLE_CALLS = 1_000;
/** Uncaught errors and unhandled rejections a document may report. */
export const MAX_PAGE_ERRORS = 1_000;
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

/** No sourceURL: a stack trace through these wrappers names no file of the renderer's. */
const CAPS_SCRIPT = `(() => {
  const apply = Reflect.apply;
  const defineProperty = Object.defineProperty;
  const addEventListener = EventTarget.prototype.addEventListener;
  const preventDefault = Event.prototype.preventDefault;
  const open = Document.prototype.open;
  const targetOf = Object.getOwnPropertyDescriptor(Event.prototype, 'target').get;
  const target = globalThis;
  const c = globalThis.console;
  if (!c) return;
  let calls = 0;
  let errors = 0;
  for (const name of Object.getOwnPropertyNames(c)) {
    const original = c[name];
    if (typeof original !== 'function') continue;
    const wrapped = { [name](...args) {
      if (++calls > ${MAX_CONSOLE_CALLS}) return undefined;
      return apply(original, c, args);
    } }[name];
    defineProperty(c, name, { value: wrapped, writable: true, configurable: true, enumerable: true });
  }
  // A window's own error events only: a resource's error passes through capture too.
  const cancel = (event) => {
    if (apply(targetOf, event, []) !== target) return;
    if (++errors > ${MAX_PAGE_ERRORS}) apply(preventDefault, event, []);
  };
  const listen = () => {
    apply(addEventListener, target, ['error', cancel, true]);
    apply(addEventListener, target, ['unhandledrejection', cancel, true]);
  };
  listen();
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

/** Installs the caps in every document the page will have, and in the one it has now. */
export const installPageCaps = async (cdp: CDPSession): Promise<void> => {
  await cdp.send('Page.addScriptToEvaluateOnNewDocument', { source: CAPS_SCRIPT, runImmediately: true });
};
