/**
 * One warm Chromium per process, launched on first use and kept at module scope: in Lambda it
 * survives warm invocations, locally it serves every render of the stack. Each render gets its
 * own browser context (incognito-like: cookies, storage, cache and service workers of its own,
 * discarded on close) and one page in it.
 *
 * Chromium runs multi-process. @sparticuz/chromium defaults to --single-process, under which a
 * second browser context kills the browser (measured: Target.createTarget fails with "Target
 * closed"), so per-render contexts, and with them isolation between renders, need several
 * processes. It also means a page that hangs its renderer can be closed without touching the
 * browser or the other renders.
 *
 * Egress: every request is checked by browser-wide interception (interception.ts), and every
 * connection leaves through the egress proxy (egress-proxy.ts); both apply egress.ts's policy.
 *
 * Recovery: a browser that disconnects (crash, killed) is dropped and the next render launches a
 * new one; a render whose context cannot be closed kills the browser process the same way.
 * Callers that arrive during a launch share it.
 *
 * Spare session (opt-in, setSpareSessions): opening a context and its page costs ~45 ms, most of
 * it Chromium starting the page's renderer process, and that was the largest cost of a small
 * render beyond Chromium's own work (measured with bench/). With a spare, the next render's fresh
 * context and page are opened in the background once a render has printed, and the next render
 * takes it: still a context of its own, never used before, used once. The Lambda handler turns
 * it on; the in-process renderer leaves it off unless asked, because tests inject faults into, and
 * find the processes of, a context created at render time.
 */
import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser, type BrowserContext, type Page } from 'puppeteer-core';
import { type RendererConfig, readRendererConfig } from '../core/config.js';
import { createEgressPolicy, type EgressPolicy } from './egress.js';
import { type EgressProxy, startEgressProxy } from './egress-proxy.js';
import { interceptRequests } from './interception.js';
import { log } from './log.js';

/** The Lambda's configuration, from its environment; the local stack hands its own in (configureRenderer). */
let config: RendererConfig = readRendererConfig();

/** The egress policy for pages, with the configured test allowances. */
let egressPolicy: EgressPolicy = createEgressPolicy({ allowHosts: config.egressAllowHosts });

/** Replaces the configuration; takes effect for the next browser and egress proxy started. */
export const configureRenderer = (next: RendererConfig): void => {
  config = next;
  egressPolicy = createEgressPolicy({ allowHosts: next.egressAllowHosts });
};

export const rendererConfig = (): RendererConfig => config;

const LAUNCH_TIMEOUT_MS = 30_000;
/** Opening a context and a page takes milliseconds; a browser that needs longer is stuck. */
const OPEN_TIMEOUT_MS = 10_000;
/** Closing a context takes milliseconds, or ~0.5 s when its renderer is hung in a script. */
const CLOSE_TIMEOUT_MS = 3_000;

// No WebGL, and no SwiftShader in the launch: pages do not need a GPU to print.
chromium.setGraphicsMode = false;

/**
 * @sparticuz/chromium's flags minus those that weaken isolation or that we replace:
 * --disable-web-security (same-origin policy off), --allow-running-insecure-content,
 * --disable-site-isolation-trials and the disabled IsolateOrigins/site-per-process features,
 * --enable-features=SharedArrayBuffer (high-resolution timers for any page), --single-process
 * (see above), and its --headless spelling (puppeteer passes its own). --no-zygote goes too: with
 * it every page's renderer process is a fresh exec of the binary; from the zygote it is a fork
 * (measured: 92 instead of 110 ms of Chromium CPU and 76 instead of 88 ms per one-page render with
 * a fresh context, and the zygote's children still show as --type=renderer). It needs no sandbox
 * (Chromium's --no-zygote is for running without one). --no-sandbox stays: Lambda
 * has no user namespaces and runs as root, so Chromium's sandbox cannot start there; the browser
 * is isolated by the Lambda (one render at a time, nothing secret in the process) instead.
 */
const DROPPED_FLAGS = new Set([
  '--disable-web-security',
  '--allow-running-insecure-content',
  '--disable-site-isolation-trials',
  '--single-process',
  '--no-zygote',
]);
const DROPPED_FEATURES = new Set(['IsolateOrigins', 'site-per-process', 'SharedArrayBuffer']);

export const chromiumArgs = (base: readonly string[], proxyUrl: string): string[] => [
  ...base.flatMap((arg) => {
    if (DROPPED_FLAGS.has(arg) || arg.startsWith('--headless')) return [];
    const features = /^--(disable|enable)-features=(.*)$/.exec(arg);
    if (!features) return [arg];
    const kept = (features[2] ?? '').split(',').filter((f) => f !== '' && !DROPPED_FEATURES.has(f));
    return kept.length > 0 ? [`--${features[1]}-features=${kept.join(',')}`] : [];
  }),
  // Every connection goes through the egress proxy, loopback included (Chromium bypasses proxies
  // for loopback unless told otherwise).
  `--proxy-server=${proxyUrl}`,
  '--proxy-bypass-list=<-loopback>',
  // window.open and target=_blank get nothing (headless has no popup blocker of its own).
  '--block-new-web-contents',
  // WebRTC could send UDP (STUN) around the proxy.
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  // No traffic of Chromium's own (updates, metrics, safe browsing lists).
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-notifications',
];

let proxy: Promise<EgressProxy> | undefined;
/** The browser being launched or in use; undefined when the next render must launch one. */
let current: Promise<Browser> | undefined;
/** Which launch produced a browser, so that dropping a dead one never drops its successor. */
const launchOf = new WeakMap<Browser, Promise<Browser>>();

const getProxy = (): Promise<EgressProxy> => {
  proxy ??= startEgressProxy(egressPolicy).catch((e: unknown) => {
    proxy = undefined;
    throw e;
  });
  return proxy;
};

const launchOnce = async (): Promise<Browser> => {
  const { url } = await getProxy();
  const executablePath = config.chromeExecutablePath ?? (await chromium.executablePath());
  const browser = await puppeteer.launch({
    executablePath,
    args: chromiumArgs(chromium.args, url),
    // Popups stay blocked (puppeteer's defaults would allow them).
    ignoreDefaultArgs: ['--disable-popup-blocking'],
    headless: 'shell',
    // DevTools over a pipe: no debugging port for a page (or anyone else) to reach.
    pipe: true,
    timeout: LAUNCH_TIMEOUT_MS,
    // The local stack shuts down by calling closeBrowser(); puppeteer must not exit the process.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  try {
    await interceptRequests(browser, egressPolicy);
  } catch (e) {
    browser.process()?.kill('SIGKILL');
    throw e;
  }
  return browser;
};

const launch = async (): Promise<Browser> => {
  const started = performance.now();
  let browser: Browser;
  try {
    browser = await launchOnce();
  } catch (e) {
    // A first launch can meet another process still inflating Chromium into /tmp (text file busy).
    log('WARN', 'browser-launch-retry', { error: (e as Error).message });
    await new Promise((r) => setTimeout(r, 1000));
    browser = await launchOnce();
  }
  log('INFO', 'browser-launched', {
    ms: Math.round(performance.now() - started),
    pid: browser.process()?.pid,
  });
  return browser;
};

/** The warm browser, launching it when there is none or the last one died. */
export const getBrowser = async (): Promise<Browser> => {
  for (let attempt = 0; ; attempt++) {
    let pending = current;
    if (!pending) {
      const launching = launch();
      current = pending = launching;
      const forget = (): void => {
        if (current === launching) current = undefined;
      };
      launching.then((b) => {
        launchOf.set(b, launching);
        b.once('disconnected', forget);
      }, forget);
    }
    const browser = await pending;
    if (browser.connected) return browser;
    // Died before its 'disconnected' event was handled; the next turn launches (or joins) anew.
    if (current === pending) current = undefined;
    if (attempt >= 1) throw new Error('the browser disconnected right after launching');
  }
};

/** Kills the browser process (a render could not clean up after itself); the next render relaunches. */
export const killBrowser = (browser: Browser, reason: string): void => {
  log('WARN', 'browser-killed', { reason, pid: browser.process()?.pid });
  if (current !== undefined && current === launchOf.get(browser)) current = undefined;
  browser.process()?.kill('SIGKILL');
};

const TIMED_OUT = Symbol('timed out');

const within = <T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> => {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<typeof TIMED_OUT>((resolve) => {
      timer = setTimeout(() => resolve(TIMED_OUT), ms);
    }),
  ]).finally(() => clearTimeout(timer));
};

export interface RenderSession {
  readonly browser: Browser;
  readonly context: BrowserContext;
  readonly page: Page;
}

/** Pages whose renderer process died (e.g. while waiting as a spare): never handed to a render. */
const crashedPages = new WeakSet<Page>();

const openOn = async (browser: Browser): Promise<RenderSession> => {
  const context = await browser.createBrowserContext({ downloadBehavior: { policy: 'deny' } });
  try {
    const page = await context.newPage();
    page.once('error', () => crashedPages.add(page));
    // Should a new tab get past --block-new-web-contents (a system Chrome), it is closed at once.
    context.on('targetcreated', (target) => {
      if (target.type() !== 'page') return;
      target
        .page()
        .then((p) => (p && p !== page ? p.close() : undefined))
        .catch(() => {});
    });
    return { browser, context, page };
  } catch (e) {
    await context.close().catch(() => {});
    throw e;
  }
};

/** A fresh context with one page, on the warm browser; one retry on a browser that just died. */
export const openSession = async (): Promise<RenderSession> => {
  for (let attempt = 0; ; attempt++) {
    const browser = await getBrowser();
    try {
      const opening = openOn(browser);
      const session = await within(opening, OPEN_TIMEOUT_MS);
      if (session !== TIMED_OUT) return session;
      opening.catch(() => {});
      killBrowser(browser, 'opening a page timed out');
      throw new Error('opening a page timed out');
    } catch (e) {
      if (browser.connected || attempt >= 1) throw e;
    }
  }
};

let spareSessions = 0;
/** The next render's session, opening or open; undefined when there is none. */
let spare: Promise<RenderSession | undefined> | undefined;

/** Whether renders get a context and page opened ahead of them (0: each render opens its own). */
export const setSpareSessions = (count: 0 | 1): void => {
  spareSessions = count;
  if (count === 0) dropSpare();
};

const dropSpare = (): void => {
  const dropped = spare;
  spare = undefined;
  dropped?.then((s) => (s ? closeSession(s) : undefined)).catch(() => {});
};

/**
 * Opens the next render's session in the background, on the running browser (never launching
 * one). A failure is forgotten: the next render then opens its own.
 */
export const prepareSpare = (): void => {
  if (spareSessions === 0 || spare) return;
  const launching = current;
  if (!launching) return;
  spare = launching
    .then((browser) => (browser.connected ? openOn(browser) : undefined))
    .catch(() => undefined);
};

/**
 * Launches the browser (and opens the spare session, when on) ahead of the first render, so that
 * a cold start overlaps the launch with the rest of its start. A failed launch is logged; the
 * first render tries again.
 */
export const prewarm = (): void => {
  getBrowser().then(prepareSpare, (e: unknown) =>
    log('WARN', 'browser-prewarm-failed', { error: (e as Error).message }),
  );
};

const usable = (session: RenderSession): boolean =>
  session.browser.connected && !session.page.isClosed() && !crashedPages.has(session.page);

/**
 * A fresh context with one page for one render: the spare when there is a usable one (waiting
 * for it if it is still opening), else a new one (openSession).
 */
export const takeSession = async (): Promise<RenderSession> => {
  const waiting = spare;
  spare = undefined;
  if (waiting) {
    const session = await within(waiting, OPEN_TIMEOUT_MS);
    if (session === TIMED_OUT) {
      waiting.then((s) => (s ? closeSession(s) : undefined)).catch(() => {});
    } else if (session) {
      if (usable(session)) return session;
      closeSession(session).catch(() => {});
    }
  }
  return openSession();
};

/**
 * Hands back a session that no content ever reached (its render failed in templating): it becomes
 * the spare when spares are on and there is none (still never used), else it is closed.
 */
export const releaseUnused = async (session: RenderSession): Promise<void> => {
  if (spareSessions > 0 && !spare && usable(session)) {
    spare = Promise.resolve(session);
    return;
  }
  await closeSession(session);
};

/** Closes the render's context (and so its page); a context that will not close costs the browser. */
export const closeSession = async (session: RenderSession): Promise<void> => {
  if (!session.browser.connected) return;
  const closed = await within(
    session.context.close().then(
      () => true,
      () => false,
    ),
    CLOSE_TIMEOUT_MS,
  );
  if (closed !== true && session.browser.connected) killBrowser(session.browser, 'closing a page failed');
};

/** Closes the browser and the egress proxy (local stack shutdown, tests). Renders may follow. */
export const closeBrowser = async (): Promise<void> => {
  const pending = current;
  current = undefined;
  spare = undefined; // its context closes with the browser
  const browser = await pending?.catch(() => undefined);
  if (browser?.connected) {
    const closed = await within(
      browser.close().then(() => true),
      CLOSE_TIMEOUT_MS,
    ).catch(() => false);
    if (closed !== true) browser.process()?.kill('SIGKILL');
  }
  const closing = proxy;
  proxy = undefined;
  await (await closing?.catch(() => undefined))?.close();
};
