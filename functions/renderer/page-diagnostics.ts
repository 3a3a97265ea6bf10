/**
 * A render's diagnostics, gathered from its own page only (the caps: domain/diagnostics.ts):
 *
 * - console: `console.error` calls and the browser's own error log lines (CSP refusals, …), except
 *   "Failed to load resource", which the resource entries say better; capped at the source
 *   (page-caps.ts);
 * - page_error: uncaught exceptions;
 * - resource: requests the egress policy refused, with its reason (interception.ts tells the
 *   page's guard, and only about requests from this page's frames and workers), requests that
 *   failed (`failed: net::ERR_…`), answers of HTTP 400 and above, and, when the render ran out of
 *   time, the requests still loading;
 * - missing_glyph: characters of the document's text that no font can draw (see GLYPH_CHECK).
 *
 * Everything comes from the render's own page (its puppeteer page, its DevTools session, its
 * guard), which sees nothing of any other render's, and stops at `finish`.
 */
import type { CDPSession, ConsoleMessage, Page, Protocol } from 'puppeteer-core';
import { DiagnosticsRecorder } from '../domain/jobs/diagnostics.js';
import type { Diagnostics } from './contract.js';
import type { PageGuard } from './interception.js';
import { log } from './log.js';
import {
  installPageCaps,
  MAX_CONSOLE_CALLS,
  MAX_LOG_ENTRIES,
  MAX_PAGE_ERRORS,
  PageEventFloodError,
  PROTOCOL_EVENT_LIMIT,
} from './page-caps.js';

const noop = (): void => {};

/**
 * Net errors that are not the resource's fault: refused by the egress policy (interception.ts
 * reports those with the reason; the Network domain calls them net::ERR_BLOCKED_BY_CLIENT.Inspector)
 * or cancelled (a navigation refused, a frame removed, the page done with).
 */
const notAFailure = (errorText: string): boolean =>
  errorText.startsWith('net::ERR_BLOCKED_BY_CLIENT') || errorText === 'net::ERR_ABORTED';

/**
 * Text that falls back to a missing glyph, looked for in the page: for every element whose text
 * has characters beyond ASCII (every system has a Latin font; a document of ASCII only is done
 * with after one read of its text), each distinct character is measured on a canvas in
 * the element's font and compared with a character that no font has (U+0378, unassigned): Chromium
 * draws both with the same .notdef box, so equal metrics, confirmed by equal pixels, mean the
 * character prints as a box. Canvas text uses the page's fonts and fallback, web fonts included.
 * Runs in an isolated world, so the page's scripts cannot change what it sees or calls, and under
 * a CDP timeout. The main document's text only (not frames, generated content, or the header and
 * footer; hidden text included); marks, format and space characters are skipped (they draw
 * nothing anyway).
 */
const GLYPH_CHECK = `(() => {
  const MAX_CHECKS = 5000, MAX_FAMILIES = 10, MAX_CHARS = 20;
  const skip = /[\\p{Z}\\p{C}\\p{M}]/u;
  const root = document.body || document.documentElement;
  // One native call answers most documents: nothing beyond ASCII, nothing to look at.
  const beyondAscii = new Set(root ? root.textContent.match(/[^\\x00-\\x7f]/gu) : []);
  if (beyondAscii.size === 0) return [];
  // A few such characters (a report's "Δ", an invoice's "€"): XPath finds the text nodes that
  // have them natively, where walking the 12,000 text nodes of a 30-page table took ~10 ms. Many
  // (a document in another script): every text node is looked at anyway.
  let nodes;
  if (beyondAscii.size <= 64) {
    const test = [...beyondAscii].map((ch) => 'contains(., "' + ch + '")').join(' or ');
    const found = document.evaluate('.//text()[' + test + ']', root, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
    nodes = Array.from({ length: found.snapshotLength }, (_, i) => found.snapshotItem(i));
  } else {
    nodes = [];
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
  }
  const byFont = new Map();
  let checks = 0;
  for (const node of nodes) {
    if (checks >= MAX_CHECKS) break;
    const text = node.data;
    if (!/[^\\x00-\\x7f]/.test(text)) continue;
    const el = node.parentElement;
    // Not checkVisibility(): it would lay the page out for the screen, a cost as large as the rest.
    if (!el || el.closest('script, style, noscript, template')) continue;
    const style = getComputedStyle(el);
    const key = style.fontStyle + ' ' + style.fontWeight + ' 32px ' + style.fontFamily;
    let entry = byFont.get(key);
    if (!entry) byFont.set(key, (entry = { family: style.fontFamily, chars: new Set() }));
    for (const ch of text) {
      if (ch.charCodeAt(0) < 0x80 || skip.test(ch) || entry.chars.has(ch)) continue;
      entry.chars.add(ch);
      checks++;
    }
  }
  const canvas = new OffscreenCanvas(48, 48);
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  const metrics = (ch) => {
    const m = ctx.measureText(ch);
    return [m.width, m.actualBoundingBoxLeft, m.actualBoundingBoxRight, m.actualBoundingBoxAscent, m.actualBoundingBoxDescent].join();
  };
  const pixels = (ch) => {
    ctx.clearRect(0, 0, 48, 48);
    ctx.fillText(ch, 4, 36);
    return ctx.getImageData(0, 0, 48, 48).data.join();
  };
  const missing = new Map();
  for (const [font, entry] of byFont) {
    ctx.font = font;
    const box = '\\u0378';
    const boxMetrics = metrics(box);
    let boxPixels;
    for (const ch of entry.chars) {
      if (metrics(ch) !== boxMetrics) continue;
      boxPixels ??= pixels(box);
      if (pixels(ch) !== boxPixels) continue;
      let chars = missing.get(entry.family);
      if (!chars) {
        if (missing.size >= MAX_FAMILIES) continue;
        missing.set(entry.family, (chars = []));
      }
      if (chars.length < MAX_CHARS) chars.push(ch);
    }
  }
  return [...missing].map(([family, chars]) => ({ family, chars }));
})()`;

/**
 * Characters that the renderer's fonts all draw: WGL4's Latin, Greek and Cyrillic letters and its
 * common punctuation, which the Chromium layer's Arimo, Tinos and Cousine (metric-compatible with
 * Arial, Times and Courier) have, as do the Noto Sans fonts beside them. A document whose text has
 * nothing else cannot print a missing-glyph box: a web font that lacks one falls back to them.
 */
const ALWAYS_DRAWN =
  /^[\u00a0-\u017f\u0391-\u03a9\u03b1-\u03c9\u0401-\u045f\u2013\u2014\u2018-\u201e\u2020-\u2022\u2026\u2030\u2039\u203a\u20ac\u2122]$/u;

/** Character references that stand for ASCII or ALWAYS_DRAWN characters (the common named ones too). */
const plainReference = (reference: string): boolean => {
  const numeric = /^&#(x[0-9a-f]+|[0-9]+);$/i.exec(reference);
  if (!numeric) return /^&(amp|lt|gt|quot|apos|nbsp|copy|reg|euro|ndash|mdash|hellip);$/i.test(reference);
  const body = numeric[1] ?? '';
  const code = body[0] === 'x' || body[0] === 'X' ? Number.parseInt(body.slice(1), 16) : Number(body);
  if (!Number.isSafeInteger(code) || code > 0x10ffff) return false;
  const ch = String.fromCodePoint(code);
  return code < 0x80 || ALWAYS_DRAWN.test(ch);
};

/**
 * Whether the HTML could run a script, spelled any way a browser reads it: a script element, an
 * event handler attribute (after a space, a slash or a quote: `<img/onerror=…>`), a same-origin
 * srcdoc frame, or a javascript: URL, also with its letters written as character references or
 * split by the tabs and line breaks a URL parser drops (`jav&#x61;script:`, `java&Tab;script:`).
 */
const couldRunScript = (html: string): boolean => {
  if (/<script|[\s/"'`]on[a-z]+\s*=|srcdoc/i.test(html)) return true;
  const decoded = html
    .replace(/&#(x[0-9a-f]+|[0-9]+);?/gi, (_, body: string) => {
      const code = body[0] === 'x' || body[0] === 'X' ? Number.parseInt(body.slice(1), 16) : Number(body);
      return Number.isSafeInteger(code) && code <= 0x10ffff ? String.fromCodePoint(code) : '';
    })
    .replace(/&(colon|tab|newline);?/gi, (_, name: string) => (name.toLowerCase() === 'colon' ? ':' : ''))
    .replace(/[\t\n\r]/g, '');
  return /javascript:/i.test(decoded);
};

/**
 * Whether the glyph check (GLYPH_CHECK) could find anything in a page written from `html`: false
 * only when the document's text is surely ASCII and ALWAYS_DRAWN characters, that is, when its
 * HTML has no other character, no other character reference, and nothing that could run a script
 * that writes text into it (a script element, an event handler attribute, a javascript: URL, a
 * same-origin srcdoc frame). Everything else is checked, as before.
 */
export const glyphCheckNeeded = (html: string): boolean => {
  if (couldRunScript(html)) return true;
  for (const [reference] of html.matchAll(/&[^\s;&<]{0,32};?/g)) {
    if (!reference.endsWith(';')) {
      // A bare & (an ampersand in text or a URL) is itself; a legacy reference without its ';' is not.
      if (/^&[a-z#]/i.test(reference)) return true;
      continue;
    }
    if (!plainReference(reference)) return true;
  }
  for (const [ch] of html.matchAll(/[^\p{ASCII}]/gu)) if (!ALWAYS_DRAWN.test(ch)) return true;
  return false;
};

const count = (n: number): string => n.toLocaleString('en-US');

/** The entry that says how much of a flood the page's caps dropped (page-caps.ts). */
export const droppedMessage = (dropped: number): string =>
  `${count(dropped)} console errors and uncaught errors were dropped: a page's document keeps ` +
  `${count(MAX_CONSOLE_CALLS)} console.error calls and ${count(MAX_PAGE_ERRORS)} uncaught errors`;

const codePoint = (ch: string): string =>
  `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

/** Puppeteer's own DevTools session on the page (not public API: CdpPage._client()). */
const puppeteerSession = (page: Page): CDPSession => (page as unknown as { _client(): CDPSession })._client();

export interface PageWatch {
  /** Records what the renderer found in the printed PDF (before finish). */
  add(type: 'unsafe_link', message: string, url: string): void;
  /** Looks for text that prints as missing-glyph boxes; gives up quietly after `timeoutMs`. */
  checkGlyphs(timeoutMs: number): Promise<void>;
  /** Stops watching; when the render ran out of time, the requests still loading are listed. */
  finish(outcome: { readonly timedOut: boolean }): Diagnostics;
}

/** Pages whose puppeteer session has its Log domain turned off already. */
const logDisabled = new WeakSet<Page>();
const logOff = async (page: Page): Promise<void> => {
  if (logDisabled.has(page)) return;
  await puppeteerSession(page).send('Log.disable');
  logDisabled.add(page);
};

/**
 * Starts recording what `page` does; resolves before the page gets content.
 *
 * Requests are followed through the Network domain of the renderer's own DevTools session on the
 * page, not puppeteer's request events: the browser runs with puppeteer's network tracking off
 * (warm-browser.ts: it cost a core on a page with a thousand requests in flight), and these
 * handlers do a map operation per event. Chromium keeps no response bodies for it (buffers of 0).
 * It sees the page's own frames' requests; requests of out-of-process frames and workers show
 * only when the egress policy refuses them (interception.ts sees every request).
 */
export const watchPage = async (
  page: Page,
  cdp: CDPSession,
  guard: PageGuard,
  /** The page's main frame (the glyph check's: it stays the same through setContent, document.write). */
  mainFrameId: string,
): Promise<PageWatch> => {
  const recorder = new DiagnosticsRecorder({ closingEntry: true });
  /** Requests in flight, by request id: their URLs. */
  const loading = new Map<string, string>();

  /** Console and error events that reached the renderer (the page caps them: page-caps.ts). */
  let consoleEvents = 0;
  let events = 0;
  const counted = (): boolean => {
    if (++events === PROTOCOL_EVENT_LIMIT + 1) guard.fail(new PageEventFloodError());
    return events <= PROTOCOL_EVENT_LIMIT;
  };

  const onConsole = (message: ConsoleMessage): void => {
    // Past the page's own cap its console says nothing more: the entries may be incomplete.
    if (++consoleEvents === MAX_CONSOLE_CALLS) recorder.truncate();
    const args = message.args();
    // Puppeteer keeps a listener's console arguments alive in the page; nothing here reads them.
    for (const arg of args) arg.dispose().catch(noop);
    if (!counted() || message.type() !== 'error') return;
    const text = message.text();
    if (args.length === 0 && text.startsWith('Failed to load resource')) return;
    recorder.add('console', text);
  };
  /**
   * The browser's own log lines (a CSP refusal, a file: URL refused), and a dedicated worker's
   * console, which Chromium sends as such to the page: read here, on the renderer's own session,
   * and no longer by puppeteer's (see watchPage), so that past MAX_LOG_ENTRIES the domain is
   * turned off and nothing more of it is sent.
   */
  let logEntries = 0;
  const onLog = ({ entry }: Protocol.Log.EntryAddedEvent): void => {
    if (++logEntries >= MAX_LOG_ENTRIES) {
      if (logEntries === MAX_LOG_ENTRIES) {
        cdp.send('Log.disable').catch(noop);
        recorder.truncate();
      }
      return;
    }
    if (!counted() || entry.level !== 'error' || entry.source === 'worker') return;
    if (entry.text.startsWith('Failed to load resource')) return;
    recorder.add('console', entry.text);
  };
  const onPageError = (error: unknown): void => {
    if (!counted()) return;
    if (!(error instanceof Error)) {
      recorder.add('page_error', String(error));
      return;
    }
    const name = error.name && error.name !== 'Error' ? `${error.name}: ` : '';
    recorder.add('page_error', `${name}${error.message}`);
  };
  const onRequest = ({ requestId, request }: Protocol.Network.RequestWillBeSentEvent): void => {
    loading.set(requestId, request.url);
  };
  const onFinished = ({ requestId }: Protocol.Network.LoadingFinishedEvent): void => {
    loading.delete(requestId);
  };
  const onFailed = ({ requestId, errorText, canceled }: Protocol.Network.LoadingFailedEvent): void => {
    const url = loading.get(requestId);
    loading.delete(requestId);
    if (url === undefined || canceled || notAFailure(errorText)) return;
    recorder.add('resource', `failed: ${errorText}`, url);
  };
  const onResponse = ({ response }: Protocol.Network.ResponseReceivedEvent): void => {
    if (response.status >= 400) recorder.add('resource', `failed: HTTP ${response.status}`, response.url);
  };

  page.on('console', onConsole);
  page.on('pageerror', onPageError);
  cdp.on('Network.requestWillBeSent', onRequest);
  cdp.on('Network.loadingFinished', onFinished);
  cdp.on('Network.loadingFailed', onFailed);
  cdp.on('Network.responseReceived', onResponse);
  guard.onBlocked((url, reason) => recorder.add('resource', reason, url));
  cdp.on('Log.entryAdded', onLog);
  // All sent at once (one round trip, not six; each session runs its own commands in order). The
  // session opens it (session.ts), so a spare session has paid for it before its render.
  const [caps] = await Promise.all([
    installPageCaps(cdp),
    // Puppeteer's Log domain on the page would relay every entry, uncapped (a worker's console
    // flood arrives this way): off, and the renderer's own session reads the log instead. Once
    // per page: a batch run's items share theirs, and it stays off.
    logOff(page),
    cdp.send('Log.enable'),
    cdp.send('Network.enable', { maxTotalBufferSize: 0, maxResourceBufferSize: 0, maxPostDataSize: 0 }),
  ]);

  /** GLYPH_CHECK in a world of its own on the page's main frame; its findings recorded. */
  const glyphCheck = async (timeoutMs: number): Promise<void> => {
    const { executionContextId } = await cdp.send('Page.createIsolatedWorld', {
      frameId: mainFrameId,
      worldName: 'render-diagnostics',
    });
    const { result, exceptionDetails } = await cdp.send('Runtime.evaluate', {
      expression: GLYPH_CHECK,
      contextId: executionContextId,
      returnByValue: true,
      timeout: Math.round(timeoutMs),
    });
    if (exceptionDetails || !Array.isArray(result.value)) throw new Error('the glyph check did not finish');
    for (const { family, chars } of result.value as { family: string; chars: string[] }[]) {
      const list = chars.map((ch) => `${ch} (${codePoint(ch)})`).join(', ');
      recorder.add('missing_glyph', `no font has a glyph for ${list}; font-family: ${family}`);
    }
  };

  return {
    add(type, message, url) {
      recorder.add(type, message, url);
    },

    async checkGlyphs(timeoutMs) {
      if (timeoutMs < 1) return;
      const started = performance.now();
      let timer: NodeJS.Timeout | undefined;
      // The CDP timeout stops the script; this stops waiting on a page that went away meanwhile.
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('the glyph check timed out')), timeoutMs + 250);
      });
      try {
        await Promise.race([glyphCheck(timeoutMs), late]);
      } catch (e) {
        // Diagnostics never fail a render.
        log('INFO', 'glyph-check-skipped', {
          error: (e as Error).message,
          ms: Math.round(performance.now() - started),
        });
      } finally {
        clearTimeout(timer);
      }
    },

    finish({ timedOut }) {
      caps.stop();
      const dropped = caps.dropped();
      if (dropped > 0) {
        recorder.truncate();
        recorder.close('console', droppedMessage(dropped));
      }
      page.off('console', onConsole);
      page.off('pageerror', onPageError);
      cdp.off('Network.requestWillBeSent', onRequest);
      cdp.off('Network.loadingFinished', onFinished);
      cdp.off('Network.loadingFailed', onFailed);
      cdp.off('Network.responseReceived', onResponse);
      cdp.off('Log.entryAdded', onLog);
      guard.onBlocked(noop);
      if (timedOut) {
        for (const url of loading.values())
          recorder.add('resource', 'pending: still loading at the deadline', url);
      }
      loading.clear();
      return recorder.result();
    },
  };
};
