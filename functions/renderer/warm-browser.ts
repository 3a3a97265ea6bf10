/**
 * One launched Chromium and what the renderer keeps with it: its process model, its request
 * interception, and how many sessions (renders, the spare) are open on it. A browser that a
 * render could not clean up after is retired, not killed on the spot: the renders still running
 * on it finish, new ones go to a new browser, and it is killed when its last session is gone.
 * Killing it at once failed a concurrent render of another account (measured: a flooded page's
 * context would not close, the browser was killed, and the other render answered 502).
 */
import type { Writable } from 'node:stream';
import type { Browser, Target } from 'puppeteer-core';
import puppeteer from 'puppeteer-core';
import { lambdaEnvironment } from '../core/config.js';
import { INTEGER_SETTINGS } from '../settings.js';
import type { EgressPolicy } from './egress.js';
import { type Interceptor, interceptRequests } from './interception.js';
import { log } from './log.js';

/**
 * `multi`: one browser context per render on a multi-process browser. `single`: Chromium's
 * --single-process, renders take turns in the default context (see session.ts).
 */
export type ProcessModel = 'multi' | 'single';

const LAUNCH_TIMEOUT_MS = 30_000;
/**
 * A retired browser is killed when its last session is gone; every render ends by its deadline
 * (120 s at most, the contract's largest timeout_ms), so this only guards against a session that
 * is never handed back.
 */
const RETIRED_AT_MOST_MS = 150_000;

/**
 * @sparticuz/chromium's flags minus those that weaken isolation or that we replace:
 * --disable-web-security (same-origin policy off), --allow-running-insecure-content,
 * --disable-site-isolation-trials and the disabled IsolateOrigins/site-per-process features,
 * --enable-features=SharedArrayBuffer (high-resolution timers for any page), and its --headless
 * spelling (puppeteer passes its own). --no-sandbox stays: Chromium's sandbox cannot start in
 * Lambda; the browser is isolated by the Lambda (one render at a time, nothing secret in the
 * process) instead.
 *
 * Multi-process drops --single-process and --no-zygote: a second browser context kills a
 * single-process browser (measured: Target.createTarget in a new context fails with "Target
 * closed" and the browser is gone 15 ms later), and from the zygote a page's renderer process is
 * a fork instead of a fresh exec of the binary (measured: 92 instead of 110 ms of Chromium CPU
 * and 76 instead of 88 ms per one-page render with a fresh context). Single-process keeps both,
 * as @sparticuz/chromium sets them for Lambda.
 */
const DROPPED_FLAGS = new Set([
  '--disable-web-security',
  '--allow-running-insecure-content',
  '--disable-site-isolation-trials',
]);
const MULTI_PROCESS_DROPPED_FLAGS = new Set(['--single-process', '--no-zygote']);
const DROPPED_FEATURES = new Set(['IsolateOrigins', 'site-per-process', 'SharedArrayBuffer']);

export const chromiumArgs = (
  base: readonly string[],
  proxyUrl: string,
  model: ProcessModel = 'multi',
): string[] => [
  ...base.flatMap((arg) => {
    if (DROPPED_FLAGS.has(arg) || arg.startsWith('--headless')) return [];
    if (model === 'multi' && MULTI_PROCESS_DROPPED_FLAGS.has(arg)) return [];
    const features = /^--(disable|enable)-features=(.*)$/.exec(arg);
    if (!features) return [arg];
    const kept = (features[2] ?? '').split(',').filter((f) => f !== '' && !DROPPED_FEATURES.has(f));
    return kept.length > 0 ? [`--${features[1]}-features=${kept.join(',')}`] : [];
  }),
  ...(model === 'single' && !base.includes('--single-process') ? ['--single-process', '--no-zygote'] : []),
  // Every connection goes through the egress proxy, loopback included (Chromium bypasses proxies
  // for loopback unless told otherwise).
  `--proxy-server=${proxyUrl}`,
  '--proxy-bypass-list=<-loopback>',
  // window.open and target=_blank get nothing (headless has no popup blocker of its own).
  '--block-new-web-contents',
  // WebRTC could send UDP (STUN) around the proxy.
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  // Chromium never needs a name resolved: every connection goes to the proxy by its address, and
  // the proxy resolves. So no lookup of its own (DNS prefetch, preconnect, WebRTC) leaves a trace
  // of a page's host names at a resolver, offline renders' included.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
  // No traffic of Chromium's own (updates, metrics, safe browsing lists).
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-notifications',
];

export interface LaunchOptions {
  readonly model: ProcessModel;
  readonly executablePath: string;
  /** @sparticuz/chromium's flags, filtered by chromiumArgs. */
  readonly baseArgs: readonly string[];
  readonly proxyUrl: string;
  readonly policy: EgressPolicy;
  /** FONTCONFIG_FILE for Chromium (the fonts it prints with); unset: what its environment has. */
  readonly fontconfigFile?: string | undefined;
  /** Put first on Chromium's LD_LIBRARY_PATH (the layer's Chromium pack); unset: its environment's. */
  readonly libraryPath?: string | undefined;
  /** Called once when the browser is retired or dies: it must not get new sessions. */
  readonly onRetired: (warm: WarmBrowser) => void;
}

export class WarmBrowser {
  /** Sessions open on it: renders in progress and the spare. */
  #sessions = 0;
  #retired = false;
  #killed = false;
  #killTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly browser: Browser,
    readonly model: ProcessModel,
    readonly interceptor: Interceptor,
    private readonly onRetired: (warm: WarmBrowser) => void,
  ) {
    browser.once('disconnected', () => {
      clearTimeout(this.#killTimer);
      this.#retire();
    });
  }

  get pid(): number | undefined {
    return this.browser.process()?.pid;
  }

  /** Still taking new sessions: connected and not retired. */
  get usable(): boolean {
    return this.browser.connected && !this.#retired;
  }

  get sessions(): number {
    return this.#sessions;
  }

  addSession(): void {
    this.#sessions++;
  }

  /** A session is closed (or given up on); a retired browser with none left is killed. */
  removeSession(): void {
    this.#sessions = Math.max(0, this.#sessions - 1);
    if (this.#retired && this.#sessions === 0) this.kill('retired, its last session closed');
  }

  /** No new sessions; killed once the open ones are closed (at once when there are none). */
  retire(reason: string): void {
    if (this.#retired) return;
    log('WARN', 'browser-retired', { reason, pid: this.pid, sessions: this.#sessions });
    this.#retire();
    if (this.#sessions === 0) {
      this.kill(reason);
      return;
    }
    this.#killTimer = setTimeout(() => this.kill('retired too long'), RETIRED_AT_MOST_MS);
    this.#killTimer.unref();
  }

  #retire(): void {
    if (this.#retired) return;
    this.#retired = true;
    this.onRetired(this);
  }

  /** Kills the browser process now; its sessions fail, the next render launches anew. */
  kill(reason: string): void {
    clearTimeout(this.#killTimer);
    this.#retire();
    const child = this.browser.process();
    if (this.#killed || !child || child.exitCode !== null || child.signalCode !== null) return;
    this.#killed = true;
    log('WARN', 'browser-killed', { reason, pid: this.pid });
    child.kill('SIGKILL');
  }
}

const WORKER_TARGETS = new Set(['worker', 'shared_worker', 'service_worker']);

/**
 * The target's DevTools type: puppeteer's Target.type() calls a dedicated worker, and a frame,
 * "other"; its target info says which.
 */
const targetType = (target: Target): string => {
  const info = (target as { _getTargetInfo?: () => { type?: string } })._getTargetInfo?.();
  return info?.type ?? target.type();
};

/** Chromium's environment: the fonts it prints with, and the pack's libraries first. */
const chromiumEnvironment = (options: LaunchOptions): Record<string, string | undefined> => {
  const env = { ...lambdaEnvironment() };
  if (options.fontconfigFile !== undefined) env.FONTCONFIG_FILE = options.fontconfigFile;
  if (options.libraryPath !== undefined) {
    // First: Lambda's own order has /lib64 before /opt/lib, and a host's /lib64 may hold another NSS.
    env.LD_LIBRARY_PATH = [options.libraryPath, env.LD_LIBRARY_PATH].filter(Boolean).join(':');
  }
  return env;
};

/**
 * DevTools messages written in one tick go to Chromium in one system call. Puppeteer writes each
 * message and then its terminating NUL on the pipe, two writes a message, and a render sends
 * many side by side (a batch item about 29): each write was a system call that woke Chromium's
 * reader, 2.2 s of the stack's 24.5 s of busy CPU in a profile of 400 batch invoices (issue 43).
 * Corked until the next tick, they leave as one writev; nothing is reordered or held longer than
 * the tick.
 */
const coalesceWrites = (pipe: Writable | null | undefined): void => {
  if (!pipe) return;
  const write = pipe.write.bind(pipe) as (...args: unknown[]) => boolean;
  let corked = false;
  const uncork = () => {
    corked = false;
    pipe.uncork();
  };
  pipe.write = ((...args: unknown[]) => {
    if (!corked) {
      corked = true;
      pipe.cork();
      process.nextTick(uncork);
    }
    return write(...args);
  }) as Writable['write'];
};

/** Launches Chromium in the given process model with request interception on. */
export const launchBrowser = async (options: LaunchOptions): Promise<WarmBrowser> => {
  const browser = await puppeteer.launch({
    executablePath: options.executablePath,
    args: chromiumArgs(options.baseArgs, options.proxyUrl, options.model),
    // Popups stay blocked (puppeteer's defaults would allow them).
    ignoreDefaultArgs: ['--disable-popup-blocking'],
    headless: 'shell',
    ...(options.fontconfigFile === undefined && options.libraryPath === undefined
      ? {}
      : { env: chromiumEnvironment(options) }),
    // DevTools over a pipe: no debugging port for a page (or anyone else) to reach.
    pipe: true,
    timeout: LAUNCH_TIMEOUT_MS,
    // A DevTools call may take as long as the longest render's budget (an async render's, issue
    // 37): puppeteer's default of 180 s failed a long print with a protocol error (2,000 pages on
    // a loaded machine) where the render's own deadline (render.ts) should decide, and name it.
    protocolTimeout: INTEGER_SETTINGS.asyncRenderBudgetMs.max + 60_000,
    // The launch ends when DevTools answers; the first page is the process model's proof (probe),
    // with a deadline of its own: a browser whose renderers cannot start never shows one
    // (measured: launch waited its whole 30 s for it).
    waitForInitialPage: false,
    // No Network domain on pages: puppeteer tracks each page's requests in flight with one
    // subscription per request that every network event walks, so a page with 1,024 requests in
    // flight cost the Node process a full core (measured: 80 blocked requests answered a second
    // instead of 3,500, and a context close that took 14 s). The renderer needs none of it:
    // interception is browser-wide (interception.ts), and the load states are lifecycle events.
    networkEnabled: false,
    // Workers are not attached to: attached, puppeteer enables the Runtime domain in each, and a
    // worker's every console call becomes an event on the connection all renders share (measured:
    // a worker's 50,000 console.log calls made another account's render take 17.8 s instead of
    // 0.6 s). Nothing of the renderer's reads a worker; interception is browser-wide.
    targetFilter: (target) => !WORKER_TARGETS.has(targetType(target)),
    // The local stack shuts down by calling closeBrowser(); puppeteer must not exit the process.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  // The pipe puppeteer writes DevTools messages to (its PipeTransport's, launched with `pipe`).
  coalesceWrites(browser.process()?.stdio[3] as Writable | null | undefined);
  try {
    const interceptor = await interceptRequests(browser, options.policy, {
      recordOrigins: options.model === 'single',
    });
    return new WarmBrowser(browser, options.model, interceptor, options.onRetired);
  } catch (e) {
    browser.process()?.kill('SIGKILL');
    throw e;
  }
};
