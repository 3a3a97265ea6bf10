/**
 * A render's session: one page, isolated from every other render's, on a warm browser.
 *
 * Multi-process: a browser context of its own (incognito-like: cookies, storage, caches and
 * service workers of its own, discarded on close) with one page. Renders run side by side.
 *
 * Single-process (Chromium's --single-process, where a second context kills the browser): renders
 * take turns in the default context, each on a new page, and before a page gets content the
 * browsing data of the pages before it is wiped (wipeBrowsingData). A render whose page timed
 * out, crashed or went over its request budget costs the browser: a page that hung in a script
 * left the single-process browser unable to open another page (measured: newPage timed out after
 * closing it), so it is killed and the next render launches a fresh one (a fresh profile too).
 *
 * Every session's requests are charged to its render (interception.ts, PageGuard), and a crash of
 * its renderer process fails it at once, while it opens too: a renderer killed while its page
 * opened used to leave newPage waiting for the open timeout (10 s).
 */
import { randomUUID } from 'node:crypto';
import type { BrowserContext, CDPSession, Page, Target } from 'puppeteer-core';
import type { PageGuard } from './interception.js';
import { type PageWatch, watchPage } from './page-diagnostics.js';
import type { WarmBrowser } from './warm-browser.js';

const noop = (): void => {};

/** Opening a context and a page takes milliseconds; a browser that needs longer is stuck. */
export const OPEN_TIMEOUT_MS = 10_000;
/** Closing a context takes milliseconds, or ~0.5 s when its renderer is hung in a script. */
const CLOSE_TIMEOUT_MS = 3_000;

const TIMED_OUT = Symbol('timed out');

export const within = <T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> => {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<typeof TIMED_OUT>((resolve) => {
      timer = setTimeout(() => resolve(TIMED_OUT), ms);
    }),
  ]).finally(() => clearTimeout(timer));
};

export const timedOut = (value: unknown): value is typeof TIMED_OUT => value === TIMED_OUT;

export interface RenderSession {
  readonly warm: WarmBrowser;
  /** Multi-process: the render's own context. Single-process: none (the default context). */
  readonly context: BrowserContext | undefined;
  readonly page: Page;
  /** The renderer's own DevTools session on the page. */
  readonly cdp: CDPSession;
  /** Charges the page's requests to the render and reports its crash (interception.ts). */
  readonly guard: PageGuard;
  /**
   * The page's diagnostics and caps (page-diagnostics.ts), set up while the session opens: a
   * spare session pays for them ahead of its render (six DevTools round trips and the caps'
   * scripts), and a blank page has nothing to report meanwhile.
   */
  readonly watch: PageWatch;
  /** Opened for an offline render (SessionOptions.offline): never handed to another render. */
  readonly offline: boolean;
  /**
   * A batch run's item (a kept page, createRunPage): its own nonce, written into its document
   * with its content and checked before and after printing (render.ts, proveItemDocument), so
   * that an item is never printed from a page that does not hold its own document.
   */
  readonly itemNonce?: string;
  /**
   * Hands the session back (closeContext or closeTurn), never to be awaited by an answer. A
   * `spoiled` page (timed out, crashed, over budget) is stopped first.
   */
  readonly close: (spoiled: boolean) => Promise<void>;
}

/** Pages whose renderer process died (e.g. while waiting as a spare): never handed to a render. */
const crashedPages = new WeakSet<Page>();

export const usable = (session: RenderSession): boolean =>
  session.warm.usable && !session.page.isClosed() && !crashedPages.has(session.page);

/** Fails as soon as `guard` does (the page crashed): a crash is never waited out. */
const unlessFailed = <T>(promise: Promise<T>, guard: PageGuard): Promise<T> => {
  promise.catch(noop);
  return Promise.race([promise, guard.failed]);
};

/**
 * The renderer's own DevTools session on the page: it reports the page's frames to the guard, so
 * that their requests are charged to this render.
 */
const attach = async (
  page: Page,
  guard: PageGuard,
  cdp?: CDPSession,
): Promise<{ readonly cdp: CDPSession; readonly mainFrameId: string }> => {
  const session = cdp ?? (await page.createCDPSession());
  session.on('Page.frameAttached', ({ frameId }: { frameId: string }) => guard.addFrame(frameId));
  // Sent together: a session's commands run in order, so one round trip instead of two.
  const [, { frameTree }] = await Promise.all([
    session.send('Page.enable'),
    session.send('Page.getFrameTree'),
  ]);
  guard.addMainFrame(frameTree.frame.id);
  // The page's watch (watchPage) takes the main frame from here: asked again, it was one more
  // round trip per render (issue 43).
  return { cdp: session, mainFrameId: frameTree.frame.id };
};

/** Should a new tab get past --block-new-web-contents (a system Chrome), it is closed at once. */
const closePopups = (context: BrowserContext, page: Page): (() => void) => {
  const onTarget = (target: Target): void => {
    if (target.type() !== 'page') return;
    target
      .page()
      .then((p) => (p && p !== page ? p.close() : undefined))
      .catch(noop);
  };
  context.on('targetcreated', onTarget);
  return () => context.off('targetcreated', onTarget);
};

/** How a session is opened. */
export interface SessionOptions {
  /**
   * An offline render's session: its requests are all refused by interception, and its
   * connections go to `offlineProxyUrl`, a proxy that refuses every one (multi-process: the
   * context's own proxy; single-process: the caller switches the browser's proxy for the turn).
   */
  readonly offline?: { readonly offlineProxyUrl: string };
}

/**
 * Multi-process: a context of the render's own with one page. An offline context has a proxy of
 * its own that refuses every connection, so nothing of it (a WebSocket, a worker's fetch, a
 * preconnect: whatever interception does not see) reaches the network, or a resolver.
 */
const openContext = async (
  warm: WarmBrowser,
  maxRequests: number,
  options: SessionOptions,
): Promise<RenderSession> => {
  const context = await warm.browser.createBrowserContext({
    downloadBehavior: { policy: 'deny' },
    ...(options.offline
      ? { proxyServer: options.offline.offlineProxyUrl, proxyBypassList: ['<-loopback>'] }
      : {}),
  });
  const offline = options.offline !== undefined;
  const guard = warm.interceptor.guard(context.id, maxRequests, offline);
  warm.addSession();
  try {
    const page = await unlessFailed(context.newPage(), guard);
    page.once('error', () => crashedPages.add(page));
    const { cdp, mainFrameId } = await unlessFailed(attach(page, guard), guard);
    const watch = await unlessFailed(watchPage(page, cdp, guard, mainFrameId), guard);
    const stopClosingPopups = closePopups(context, page);
    const close = (spoiled: boolean): Promise<void> => {
      stopClosingPopups();
      return closeContext(warm, context, guard, cdp, spoiled);
    };
    return { warm, context, page, cdp, guard, watch, offline, close };
  } catch (e) {
    void closeContext(warm, context, guard, undefined, true);
    throw e;
  }
};

/**
 * Closes a render's context in the background of its answer. A spoiled page (timed out, crashed,
 * over its request budget) has its renderer process crashed first (Page.crash): it stops at once
 * whatever it was doing, and the close is quick. A context that will not close retires the browser.
 */
const closeContext = async (
  warm: WarmBrowser,
  context: BrowserContext,
  guard: PageGuard,
  cdp: CDPSession | undefined,
  spoiled: boolean,
): Promise<void> => {
  guard.end();
  try {
    if (!warm.browser.connected) return;
    if (spoiled) cdp?.send('Page.crash').catch(noop);
    const closed = await within(
      context.close().then(
        () => true,
        () => false,
      ),
      CLOSE_TIMEOUT_MS,
    );
    if (closed !== true && warm.browser.connected) warm.retire('closing a page failed');
  } finally {
    warm.removeSession();
  }
};

/**
 * Single-process: renders take turns, one page at a time in the default context. A turn is held
 * from before its browser is chosen until its page is closed (or its browser is gone); call the
 * function it resolves to to hand it on (more than once does no harm). One queue per renderer
 * (browser.ts): renderers in the same process never wait for each other.
 */
export const createTurnQueue = (): (() => Promise<() => void>) => {
  let turns: Promise<void> = Promise.resolve();
  return () => {
    const before = turns;
    let release: () => void = noop;
    turns = new Promise<void>((resolve) => {
      release = resolve;
    });
    return before.then(() => release);
  };
};

/**
 * Single-process: what earlier renders left in the default context is wiped before a page gets
 * content. Measured without it, the next render's page was sent the earlier page's cookie and
 * served its images and fetches from the HTTP cache; localStorage and IndexedDB did not carry
 * over (a page's frames are partitioned under its opaque top-level origin), and Cache Storage and
 * service workers are out of reach (a setContent page is not a secure context, nor are its
 * frames). All of them are cleared for every origin a page was let through to anyway.
 */
export const wipeBrowsingData = async (cdp: CDPSession, origins: readonly string[]): Promise<void> => {
  await Promise.all([
    cdp.send('Network.clearBrowserCookies'),
    cdp.send('Network.clearBrowserCache'),
    ...origins.map((origin) => cdp.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' })),
  ]);
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  await cdp.send('ServiceWorker.disable');
};

/** Single-process: a new page in the default context, its browsing data wiped first. */
const openTurn = async (
  warm: WarmBrowser,
  maxRequests: number,
  release: () => void,
  options: SessionOptions,
): Promise<RenderSession> => {
  const offline = options.offline !== undefined;
  warm.addSession();
  try {
    const page = await warm.browser.newPage();
    page.once('error', () => crashedPages.add(page));
    const cdp = await page.createCDPSession();
    await wipeBrowsingData(cdp, warm.interceptor.takeOrigins());
    // Charged from here on: the page has made no request yet.
    const guard = warm.interceptor.guard(undefined, maxRequests, offline);
    const { mainFrameId } = await attach(page, guard, cdp);
    const watch = await unlessFailed(watchPage(page, cdp, guard, mainFrameId), guard);
    const stopClosingPopups = closePopups(warm.browser.defaultBrowserContext(), page);
    const close = (spoiled: boolean): Promise<void> => {
      stopClosingPopups();
      return closeTurn(warm, page, guard, spoiled, release);
    };
    return { warm, context: undefined, page, cdp, guard, watch, offline, close };
  } catch (e) {
    // Whatever failed (the wipe included), no later page may share this browser's data.
    warm.kill('opening a page failed in a single-process browser');
    warm.removeSession();
    throw e;
  }
};

const closeTurn = async (
  warm: WarmBrowser,
  page: Page,
  guard: PageGuard,
  spoiled: boolean,
  release: () => void,
): Promise<void> => {
  guard.end();
  try {
    if (!warm.browser.connected) return;
    if (spoiled) {
      warm.kill('a spoiled page in a single-process browser');
      return;
    }
    const closed = await within(
      page.close().then(
        () => true,
        () => false,
      ),
      CLOSE_TIMEOUT_MS,
    );
    if (closed !== true) warm.kill('closing a page failed');
  } finally {
    warm.removeSession();
    // A killed browser is retired at once: the next turn launches a new one.
    release();
  }
};

/** Opening a page took longer than OPEN_TIMEOUT_MS: the browser is retired, never retried. */
export class OpenTimeoutError extends Error {
  constructor() {
    super('opening a page timed out');
    this.name = 'OpenTimeoutError';
  }
}

/**
 * Opens a session on `warm` within OPEN_TIMEOUT_MS, failing at once when the page's renderer
 * process dies meanwhile. Single-process: the caller holds the turn (`release` hands it on when
 * the session closes). A browser that does not open a page in time is retired (multi-process) or
 * killed (single-process).
 */
export const openSession = async (
  warm: WarmBrowser,
  maxRequests: number,
  release: () => void = noop,
  options: SessionOptions = {},
): Promise<RenderSession> => {
  const opening =
    warm.model === 'multi'
      ? openContext(warm, maxRequests, options)
      : openTurn(warm, maxRequests, release, options);
  const session = await within(opening, OPEN_TIMEOUT_MS);
  if (!timedOut(session)) return session;
  opening.then((s) => s.close(true), noop);
  if (warm.model === 'multi') warm.retire('opening a page timed out');
  else warm.kill('opening a page timed out');
  throw new OpenTimeoutError();
};

/**
 * A batch run's page (issue 43): the items of one run of one batch render one after another on
 * one page of one context, instead of a context each. A fresh context's renderer process costs
 * about 50 ms of Chromium's CPU to start and 20-25 ms to end, more than loading and printing an
 * invoice (measured: 108 ms of Chromium CPU per invoice with a context each, 96 ms with a page
 * each in one context, 37 ms with one page). Between items everything an item could leave is
 * wiped (wipeItem): the next item never sees it. Multi-process only (a single-process browser's
 * renders already take turns in one wiped context, each on a new page).
 */
export interface RunPage {
  /** A session for the run's next item: the page as the last item left it, wiped; or none yet. */
  take(maxRequests: number, offline: boolean): Promise<RenderSession | undefined>;
  /** Keeps `session` (the run's first) for the next items: its close now wipes instead. */
  keep(session: RenderSession): RenderSession;
  /** Closes the context (the run is over). */
  close(): Promise<void>;
  /** The contexts this run used, in order (one unless an item spoiled its page). */
  readonly contexts: readonly string[];
}

/** How long wiping a page between items may take before its context is dropped instead. */
const WIPE_TIMEOUT_MS = 3_000;

/**
 * What one item may have left in its context, wiped before the next item gets the page: other
 * pages closed, the page taken to a new blank document (a new window and a new opaque origin,
 * so its frames' partitioned storage is out of reach), the context's cookies and HTTP cache
 * cleared, every kind of storage (local and session storage, IndexedDB, Cache Storage, service
 * workers, file systems) cleared for every origin the item's requests reached, service workers
 * stopped, permission overrides reset. The item's own DevTools session (its caps' scripts and
 * bindings) is detached.
 */
const wipeItem = async (
  item: RenderSession,
  origins: readonly string[],
  wiperOf: (page: Page) => Promise<CDPSession>,
): Promise<void> => {
  const { context, page, cdp } = item;
  if (!context) throw new Error('a run page needs a context of its own');
  // Round trips side by side where nothing orders them (the wipe is on the run's page's path
  // between two items: ~34 ms of an item's ~84 at a load of 6, its steps one after another).
  const [, pages, wiper] = await Promise.all([cdp.detach().catch(noop), context.pages(), wiperOf(page)]);
  const others = pages.filter((p) => p !== page);
  await Promise.all(others.map((p) => p.close()));
  await wiper.send('Page.navigate', { url: 'about:blank' });
  const [{ result }] = await Promise.all([
    // The blank document has committed: a later item's content goes into it, not the one before.
    wiper.send('Runtime.evaluate', {
      expression:
        'document.URL + "|" + document.childElementCount + "|" + (document.body?.childElementCount ?? 0)',
      returnByValue: true,
    }),
    wiper.send('Network.clearBrowserCookies'),
    wiper.send('Network.clearBrowserCache'),
    ...origins.map((origin) => wiper.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' })),
    context.clearPermissionOverrides(),
    // Its domain enabled once, with the wipes' session (wiperOf); beside the clears.
    wiper.send('ServiceWorker.stopAllWorkers'),
  ]);
  if (result.value !== 'about:blank|1|0')
    throw new Error(`the page was not blank after the wipe: ${result.value}`);
};

/** A session for one more item on a kept page: a guard, a DevTools session and caps of its own. */
const openItem = async (
  first: RenderSession,
  maxRequests: number,
  onClose: (item: RenderSession, spoiled: boolean) => Promise<void>,
): Promise<RenderSession> => {
  const { warm, context, page, offline } = first;
  const guard = warm.interceptor.guard(context?.id, maxRequests, offline);
  try {
    const cdp = await unlessFailed(page.createCDPSession(), guard);
    const { mainFrameId } = await unlessFailed(attach(page, guard, cdp), guard);
    const watch = await unlessFailed(watchPage(page, cdp, guard, mainFrameId), guard);
    const item: RenderSession = {
      warm,
      context,
      page,
      cdp,
      guard,
      watch,
      offline,
      itemNonce: randomUUID(),
      close: (spoiled) => onClose(item, spoiled),
    };
    return item;
  } catch (e) {
    guard.end();
    throw e;
  }
};

export const createRunPage = (): RunPage => {
  /** The run's first session (its context and page), while the page is kept. */
  let first: RenderSession | undefined;
  /** Resolves true once the last item's page is wiped and may take the next item. */
  let ready: Promise<boolean> = Promise.resolve(true);
  const contexts: string[] = [];
  /**
   * The wipes' DevTools session on the kept page: opened by the first wipe, kept while the page
   * is (no item's scripts, bindings or listeners are on it). One per wipe cost an attach and a
   * detach per item, and puppeteer's session set-up (issue 43).
   */
  let wiper: Promise<CDPSession> | undefined;
  const wiperOf = (page: Page): Promise<CDPSession> => {
    if (!wiper) {
      // Its ServiceWorker domain stays on (stopAllWorkers needs it): enabled and disabled again
      // by each wipe, it was two more round trips and two events per item.
      wiper = page.createCDPSession().then(async (session) => {
        await session.send('ServiceWorker.enable');
        return session;
      });
      wiper.catch(noop);
    }
    return wiper;
  };

  const drop = (spoiled: boolean): Promise<void> => {
    const dropped = first;
    first = undefined;
    const detaching = wiper;
    wiper = undefined;
    detaching?.then((w) => w.detach()).catch(noop);
    return dropped ? dropped.close(spoiled) : Promise.resolve();
  };

  /** An item's end: a spoiled page ends the context; else the page is wiped for the next item. */
  const onClose = (item: RenderSession, spoiled: boolean): Promise<void> => {
    item.guard.end();
    if (spoiled || !first || !usable(item)) {
      ready = Promise.resolve(false);
      return drop(spoiled);
    }
    const wiping = within(
      wipeItem(item, [...item.guard.origins], wiperOf).then(
        () => true,
        () => false,
      ),
      WIPE_TIMEOUT_MS,
    ).then((wiped) => wiped === true);
    ready = wiping;
    return wiping.then(async (wiped) => {
      if (!wiped) await drop(true);
    });
  };

  return {
    contexts,
    async take(maxRequests, offline) {
      if (!first) return undefined;
      const kept = first;
      if (!(await ready) || first !== kept || !usable(kept) || kept.offline !== offline) {
        if (first === kept) await drop(true);
        return undefined;
      }
      return openItem(kept, maxRequests, onClose);
    },
    keep(session) {
      if (session.context === undefined || first !== undefined) return session;
      first = session;
      contexts.push(session.context.id ?? '');
      ready = Promise.resolve(true);
      // The first item's own close wipes too: its guard, session and caps are its own.
      return { ...session, itemNonce: randomUUID(), close: (spoiled) => onClose(session, spoiled) };
    },
    async close() {
      await ready.catch(noop);
      await drop(false);
    },
  };
};
