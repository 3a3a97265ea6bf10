/**
 * One warm Chromium per renderer (createBrowserHost; renderer.ts makes one per createRenderer),
 * launched on first use: in Lambda the renderer lives at module scope and the browser survives
 * warm invocations; locally each stack's renderer serves every render of that stack, and several
 * stacks (each with its own browser, egress proxy and process model) can run in one process.
 * Each render gets a session of its own (session.ts): a page isolated from every other render's.
 *
 * Process model (RENDERER_PROCESS_MODEL, warm-browser.ts): multi-process gives each render a
 * browser context; single-process (--single-process, as @sparticuz/chromium sets it for Lambda)
 * has one context, so renders take turns and the context's data is wiped between them. Reports
 * from Lambda show multi-process Chromium failing there ("prctl(PR_SET_NO_NEW_PRIVS) failed",
 * "Cannot communicate with zygote", newPage() hanging), and nothing outside Lambda can prove it
 * works inside. So `auto`, the default, proves it on the spot: the first launch is multi-process
 * and must open an isolated page and print within PROBE_TIMEOUT_MS; if it cannot, Chromium is
 * relaunched single-process (proved the same way). The outcome is logged
 * (browser-process-model) and counted (the BrowserProcessModel metric), and later relaunches use
 * it without proving it again.
 *
 * Egress: every request is checked by browser-wide interception (interception.ts), and every
 * connection leaves through the egress proxy (egress-proxy.ts); both apply egress.ts's policy.
 *
 * Recovery: a browser that disconnects (crash, killed) is dropped and the next render launches a
 * new one; a browser that a render could not clean up after is retired (warm-browser.ts): the
 * renders still on it finish, new ones get a new browser. Callers that arrive during a launch
 * share it.
 *
 * Spare session (opt-in, spareSessions, multi-process only): opening a context and its page
 * costs ~45 ms, most of it Chromium starting the page's renderer process, and that was the largest
 * cost of a small render beyond Chromium's own work (measured with bench/). With a spare, the
 * next render's fresh context and page are opened in the background once a render has printed,
 * and the next render takes it: still a context of its own, never used before, used once. The
 * Lambda handler turns it on; the in-process renderer leaves it off unless asked, because tests
 * inject faults into, and find the processes of, a context created at render time. Single-process
 * has none: its page must be opened (and the context wiped) after the page before it has closed.
 */
import chromium from '@sparticuz/chromium';
import type { Browser } from 'puppeteer-core';
import type { RendererConfig } from '../core/config.js';
import { countWith } from '../core/metrics.js';
import { chromiumFromPack } from './chromium-pack.js';
import { createEgressPolicy, type EgressPolicy, refuseAllPolicy } from './egress.js';
import { type EgressProxy, startEgressProxy } from './egress-proxy.js';
import type { FetchedFonts } from './fetched-fonts.js';
import { log } from './log.js';
import {
  createTurnQueue,
  OPEN_TIMEOUT_MS,
  OpenTimeoutError,
  openSession,
  type RenderSession,
  type SessionOptions,
  timedOut,
  usable,
  within,
} from './session.js';
import { launchBrowser, type ProcessModel, WarmBrowser } from './warm-browser.js';

export type { RenderSession } from './session.js';
export { chromiumArgs, type ProcessModel } from './warm-browser.js';

/**
 * How long `auto` gives a freshly launched browser to open an isolated page and print a one-line
 * PDF. Measured: 50-150 ms from launch to DevTools, then ~50 ms to the first PDF (2 cores, both
 * models, in the Lambda-like sandbox of test/integration/lambda-sandbox.test.ts too); Lambda's
 * cold start is ~0.6 s from launch to a first PDF (lib/service-settings.ts). A multi-process
 * browser whose renderers cannot start shows its first page crashed within ~15 ms, which fails
 * the proof at once; the deadline is for a browser that hangs instead.
 */
export const PROBE_TIMEOUT_MS = 5_000;
/** A spare's page answers a round trip in about a millisecond; one that takes this long is not used. */
const SPARE_PROBE_TIMEOUT_MS = 1_000;

// No WebGL, and no SwiftShader in the launch: pages do not need a GPU to print.
chromium.setGraphicsMode = false;

export interface BrowserHostOptions {
  /**
   * Whether renders get a context and page opened ahead of them (0: each render opens its own).
   * @default 0
   */
  readonly spareSessions?: 0 | 1;
  /**
   * The fonts fetched on first need (fetched-fonts.ts): each launch takes the fontconfig file for
   * the families landed by then, and a browser launched before the latest is relaunched by
   * refreshFonts. @default none are ever fetched
   */
  readonly fetchedFonts?: Pick<FetchedFonts, 'fontconfigFile' | 'generation'> | undefined;
}

export interface TakeSessionOptions {
  /**
   * No network egress for the session's page (RenderRequest.offline): every request refused by
   * interception, every connection by a proxy that refuses all (multi-process: the context's own;
   * single-process: the browser's proxy for the turn, its open connections ended first).
   * @default false
   */
  readonly offline?: boolean;
}

/** A renderer's browser: launched on demand, relaunched when it dies, shared by its renders. */
export interface BrowserHost {
  /** The warm browser, launching it when there is none or the last one died or was retired. */
  getWarmBrowser(): Promise<WarmBrowser>;
  /** The warm browser's puppeteer handle (tests inspect and inject faults through it). */
  getBrowser(): Promise<Browser>;
  /** The process model renders run in now (undefined before the first launch). */
  processModel(): ProcessModel | undefined;
  /**
   * A fresh session for one render: the spare when there is a usable one, else a new one. An
   * offline render always gets a new one, opened offline (see TakeSessionOptions).
   */
  takeSession(options?: TakeSessionOptions): Promise<RenderSession>;
  /** Hands back a session that no content ever reached (its render failed in templating). */
  releaseUnused(session: RenderSession): void;
  /** Opens the next render's session in the background, when spares are on. */
  prepareSpare(): void;
  /** Launches the browser (and opens the spare, when on) ahead of the first render. */
  prewarm(): void;
  /** Whether renders get a context and page opened ahead of them. */
  setSpareSessions(count: 0 | 1): void;
  /**
   * Retires the warm browser (and its spare) when it was launched before the latest fetched fonts
   * landed: its fontconfig never sees them. The next session is opened on a relaunched browser.
   */
  refreshFonts(): Promise<void>;
  /** Closes every browser and the egress proxy (shutdown, tests). Renders may follow. */
  close(): Promise<void>;
}

/** The Chromium to launch: a configured one, the layer's pack (Lambda), or @sparticuz/chromium's. */
const chromiumBinary = async (
  config: RendererConfig,
): Promise<{ executablePath: string; libraryPath?: string }> => {
  if (config.chromeExecutablePath) return { executablePath: config.chromeExecutablePath };
  if (config.chromiumPackDir) return chromiumFromPack(config.chromiumPackDir);
  return { executablePath: await chromium.executablePath() };
};

export const createBrowserHost = (config: RendererConfig, options: BrowserHostOptions = {}): BrowserHost => {
  /** The egress policy for pages, with the configured test allowances. */
  const egressPolicy = createEgressPolicy({ allowHosts: config.egressAllowHosts });
  /**
   * Single-process: whether the turn in progress is offline. Turns are strictly one after another
   * (a turn ends when its page is closed), so the browser's one proxy refuses everything for it.
   */
  let offlineTurn = false;
  const proxyPolicy: EgressPolicy = {
    ...egressPolicy,
    resolveDestination: (host, port) =>
      offlineTurn
        ? refuseAllPolicy.resolveDestination(host, port)
        : egressPolicy.resolveDestination(host, port),
  };
  /** The proxy offline contexts are given (multi-process): it refuses every connection. */
  let offlineProxy: Promise<EgressProxy> | undefined;
  /** Single-process renders take turns on this renderer's browser (session.ts). */
  const takeTurn = createTurnQueue();
  let proxy: Promise<EgressProxy> | undefined;
  /** The browser being launched or in use; undefined when the next render must launch one. */
  let current: Promise<WarmBrowser> | undefined;
  /** Every browser still running (the current one and retired ones): close ends them all. */
  const running = new Set<WarmBrowser>();
  /** The process model this renderer runs in, once a browser has proved it (or it was configured). */
  let decided: ProcessModel | undefined;
  /** Which launch produced a browser, so that dropping a dead one never drops its successor. */
  const launchOf = new WeakMap<WarmBrowser, Promise<WarmBrowser>>();
  let spareSessions: 0 | 1 = options.spareSessions ?? 0;
  /** The next render's session, opening or open; undefined when there is none. */
  let spare: Promise<RenderSession | undefined> | undefined;

  const getProxy = (): Promise<EgressProxy> => {
    proxy ??= startEgressProxy(proxyPolicy).catch((e: unknown) => {
      proxy = undefined;
      throw e;
    });
    return proxy;
  };

  const getOfflineProxy = (): Promise<EgressProxy> => {
    offlineProxy ??= startEgressProxy(refuseAllPolicy).catch((e: unknown) => {
      offlineProxy = undefined;
      throw e;
    });
    return offlineProxy;
  };

  /** How an offline session is opened: its proxy (multi-process) and, single-process, the turn's switch. */
  const sessionOptions = async (offline: boolean): Promise<SessionOptions> =>
    offline ? { offline: { offlineProxyUrl: (await getOfflineProxy()).url } } : {};

  /**
   * Single-process: the turn's proxy setting, taken when the turn starts and undone when it ends.
   * An offline turn starts with no connection open through the proxy (a tunnel an earlier page
   * opened would otherwise carry its requests past the check).
   */
  const startTurn = async (release: () => void, offline: boolean): Promise<() => void> => {
    offlineTurn = offline;
    if (offline) (await getProxy()).closeConnections();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      offlineTurn = false;
      release();
    };
  };

  /** The fonts generation each browser was launched at (BrowserHostOptions.fetchedFonts). */
  const fontsAtLaunch = new WeakMap<WarmBrowser, number>();
  const fontsGeneration = (): number => options.fetchedFonts?.generation() ?? 0;

  const launchIn = async (model: ProcessModel): Promise<WarmBrowser> => {
    // Read together: the fontconfig file lists exactly the families of this generation.
    const generation = fontsGeneration();
    const fontconfigFile = options.fetchedFonts?.fontconfigFile() ?? config.fontconfigFile;
    const [{ url }, { executablePath, libraryPath }] = await Promise.all([
      getProxy(),
      chromiumBinary(config),
    ]);
    const started = performance.now();
    const launchOnce = (): Promise<WarmBrowser> =>
      launchBrowser({
        model,
        executablePath,
        baseArgs: chromium.args,
        proxyUrl: url,
        policy: egressPolicy,
        fontconfigFile,
        libraryPath,
        onRetired: (warm) => {
          if (current !== undefined && launchOf.get(warm) === current) current = undefined;
        },
      });
    let warm: WarmBrowser;
    try {
      warm = await launchOnce();
    } catch (e) {
      // A first launch can meet another process still inflating Chromium into /tmp (text file busy).
      log('WARN', 'browser-launch-retry', { error: (e as Error).message, processModel: model });
      await new Promise((r) => setTimeout(r, 1000));
      warm = await launchOnce();
    }
    running.add(warm);
    fontsAtLaunch.set(warm, generation);
    warm.browser.once('disconnected', () => running.delete(warm));
    log('INFO', 'browser-launched', {
      ms: Math.round(performance.now() - started),
      pid: warm.pid,
      processModel: model,
    });
    return warm;
  };

  /**
   * The proof: an isolated page opened (a context of its own, or the wiped default context) and a
   * PDF printed, as a render would, within PROBE_TIMEOUT_MS.
   */
  const prove = async (warm: WarmBrowser): Promise<void> => {
    const release = warm.model === 'single' ? await takeTurn() : undefined;
    const proof = (async () => {
      const session = await openSession(warm, config.maxPageRequests, release);
      try {
        await session.page.setContent('<p>process model probe</p>', { timeout: PROBE_TIMEOUT_MS });
        await session.page.pdf({ timeout: PROBE_TIMEOUT_MS });
      } finally {
        await session.close(false);
      }
    })();
    const outcome = await within(
      proof.then(
        () => undefined,
        (e: unknown) => e as Error,
      ),
      PROBE_TIMEOUT_MS,
    );
    if (outcome === undefined) return;
    release?.();
    warm.kill('it failed the process model probe');
    throw timedOut(outcome) ? new Error(`no PDF within ${PROBE_TIMEOUT_MS} ms`) : outcome;
  };

  /**
   * The first spare session opens while the proof runs (each in a context of its own), instead of
   * after it: on a cold start the first render waited for both, one after the other. It becomes the
   * spare only once the proof has passed; a failed proof kills the browser, and the session with it.
   */
  const spareBesideProof = (multi: WarmBrowser, proof: Promise<void>): void => {
    if (spareSessions === 0 || spare) return;
    const opening = openSession(multi, config.maxPageRequests).catch(() => undefined);
    spare = proof.then(
      () => opening,
      () => undefined,
    );
  };

  /** Reports the process model renders run in: a log line and a metric, once per decision. */
  const report = (model: ProcessModel, detail: Record<string, unknown>): void => {
    decided = model;
    log('INFO', 'browser-process-model', { processModel: model, setting: config.processModel, ...detail });
    countWith('BrowserProcessModel', { ProcessModel: model });
  };

  /**
   * `auto`'s first launch: multi-process if it proves itself, else single-process (which must prove
   * itself too). Either way the choice holds for the life of the process. Logged with probeMs (the
   * proof's time, or the time it took to fail) and decidedInMs (from the start, Chromium's
   * inflation into /tmp on a cold start included).
   */
  const launchAuto = async (): Promise<WarmBrowser> => {
    const started = performance.now();
    const since = (t: number): number => Math.round(performance.now() - t);
    let probing = started;
    try {
      const multi = await launchIn('multi');
      probing = performance.now();
      const proof = prove(multi);
      spareBesideProof(multi, proof);
      await proof;
      report('multi', { probeMs: since(probing), decidedInMs: since(started) });
      return multi;
    } catch (e) {
      const reason = (e as Error).message;
      log('WARN', 'browser-multi-process-failed', { error: reason, probeMs: since(probing) });
      const single = await launchIn('single');
      probing = performance.now();
      await prove(single);
      report('single', { probeMs: since(probing), decidedInMs: since(started), fallbackReason: reason });
      return single;
    }
  };

  const launchDecided = async (): Promise<WarmBrowser> => {
    if (decided !== undefined) return launchIn(decided);
    if (config.processModel === 'auto') return launchAuto();
    const warm = await launchIn(config.processModel);
    report(config.processModel, {});
    return warm;
  };

  /** The warm browser, launching it when there is none or the last one died or was retired. */
  const getWarmBrowser = async (): Promise<WarmBrowser> => {
    for (let attempt = 0; ; attempt++) {
      let pending = current;
      if (!pending) {
        const launching = launchDecided();
        current = pending = launching;
        launching.then(
          (warm) => {
            launchOf.set(warm, launching);
            if (!warm.usable && current === launching) current = undefined;
          },
          () => {
            if (current === launching) current = undefined;
          },
        );
      }
      const warm = await pending;
      if (warm.usable) return warm;
      // Died before its 'disconnected' event was handled; the next turn launches (or joins) anew.
      if (current === pending) current = undefined;
      if (attempt >= 1) throw new Error('the browser disconnected right after launching');
    }
  };

  /** A fresh session on the warm browser; one retry when that browser died under it. */
  const openFreshSession = async (offline = false): Promise<RenderSession> => {
    // Single-process renders take their turn before choosing a browser: the one before may kill it.
    const release = decided === 'single' ? await startTurn(await takeTurn(), offline) : undefined;
    try {
      const options = await sessionOptions(offline);
      for (let attempt = 0; ; attempt++) {
        const warm = await getWarmBrowser();
        if (warm.model === 'single' && release === undefined) {
          // auto decided on single-process while this render waited: take the turn after all.
          return await openFreshSession(offline);
        }
        try {
          return await openSession(warm, config.maxPageRequests, release, options);
        } catch (e) {
          if (warm.usable || e instanceof OpenTimeoutError || attempt >= 1) throw e;
        }
      }
    } catch (e) {
      release?.();
      throw e;
    }
  };

  const refreshFonts = async (): Promise<void> => {
    const pending = current;
    if (!pending) return;
    const warm = await pending.catch(() => undefined);
    if (!warm || (fontsAtLaunch.get(warm) ?? 0) >= fontsGeneration()) return;
    warm.retire('fetched fonts landed: a relaunched browser sees them');
    if (current === pending) current = undefined;
    dropSpare();
  };

  /** Whether renders get a context and page opened ahead of them (0: each render opens its own). */
  const setSpareSessions = (count: 0 | 1): void => {
    spareSessions = count;
    if (count === 0) dropSpare();
  };

  const dropSpare = (): void => {
    const dropped = spare;
    spare = undefined;
    dropped?.then((s) => s?.close(false)).catch(() => {});
  };

  /**
   * Opens the next render's session in the background, on the running browser (never launching
   * one), when it is multi-process. A failure is forgotten: the next render then opens its own.
   */
  const prepareSpare = (): void => {
    if (spareSessions === 0 || spare) return;
    const launching = current;
    if (!launching) return;
    spare = launching
      .then((warm) =>
        warm.usable && warm.model === 'multi' ? openSession(warm, config.maxPageRequests) : undefined,
      )
      .catch(() => undefined);
  };

  /**
   * Launches the browser (and opens the spare session, when on) ahead of the first render, so that
   * a cold start overlaps the launch with the rest of its start. A failed launch is logged; the
   * first render tries again.
   */
  const prewarm = (): void => {
    getWarmBrowser().then(prepareSpare, (e: unknown) =>
      log('WARN', 'browser-prewarm-failed', { error: (e as Error).message }),
    );
  };

  /**
   * Whether a spare's page still answers, one round trip: its renderer process may have died while
   * it waited (killed, out of memory) without the crash reported yet (measured: a spare whose
   * renderer was killed as its render came failed that render with 502). A page that does not
   * answer in time is not handed out either: the render opens its own.
   */
  const responds = async (session: RenderSession): Promise<boolean> => {
    const answered = await within(
      session.cdp.send('Runtime.evaluate', { expression: '0' }).then(
        () => true,
        () => false,
      ),
      SPARE_PROBE_TIMEOUT_MS,
    );
    return answered === true && usable(session);
  };

  /**
   * A fresh session for one render: the spare when there is a usable one (waiting for it if it is
   * still opening), else a new one (openFreshSession).
   */
  const takeSession = async ({ offline = false }: TakeSessionOptions = {}): Promise<RenderSession> => {
    // The spare is not offline: it stays for the next render, and this one opens its own.
    if (offline) return openFreshSession(true);
    const waiting = spare;
    spare = undefined;
    if (waiting) {
      const session = await within(waiting, OPEN_TIMEOUT_MS);
      if (timedOut(session)) {
        waiting.then((s) => s?.close(true)).catch(() => {});
      } else if (session) {
        if (usable(session) && (await responds(session))) return session;
        session.close(true).catch(() => {});
      }
    }
    return openFreshSession();
  };

  /**
   * Hands back a session that no content ever reached (its render failed in templating): it becomes
   * the spare when spares are on and there is none (still never used), else it is closed.
   */
  const releaseUnused = (session: RenderSession): void => {
    if (spareSessions > 0 && !spare && !session.offline && usable(session) && session.context !== undefined) {
      spare = Promise.resolve(session);
      return;
    }
    session.close(false).catch(() => {});
  };

  /** Closes every browser and the egress proxy (local stack shutdown, tests). Renders may follow. */
  const closeBrowser = async (): Promise<void> => {
    const pending = current;
    current = undefined;
    spare = undefined; // its context closes with the browser
    await pending?.catch(() => undefined);
    await Promise.all(
      [...running].map(async (warm) => {
        running.delete(warm);
        if (!warm.browser.connected) return;
        const closed = await within(
          warm.browser.close().then(() => true),
          3_000,
        ).catch(() => false);
        if (closed !== true) warm.kill('closing the browser failed');
      }),
    );
    const closing = [proxy, offlineProxy];
    proxy = undefined;
    offlineProxy = undefined;
    await Promise.all(closing.map(async (p) => (await p?.catch(() => undefined))?.close()));
  };

  return {
    getWarmBrowser,
    getBrowser: async () => (await getWarmBrowser()).browser,
    processModel: () => decided,
    takeSession,
    releaseUnused,
    prepareSpare,
    prewarm,
    setSpareSessions,
    refreshFonts,
    close: closeBrowser,
  };
};

export { WarmBrowser };
