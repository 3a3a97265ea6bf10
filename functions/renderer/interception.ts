/**
 * Request interception for the whole browser: one DevTools session on the browser target pauses
 * every network request of every context, page, frame and worker (the Fetch domain enabled at
 * browser level), and lets it go only when the egress policy allows it.
 *
 * Why not puppeteer's page.setRequestInterception: measured here, it left about one dedicated
 * worker request in three paused forever (the worker's fetch never settles), and it needs
 * setting up on every page. At browser level it is set up once per launch and costs the same
 * round trip per request.
 *
 * Main-frame navigations are always refused: a render's document is the HTML it was given, and a
 * navigation (location = …, meta refresh, form submit) would replace it. 'Aborted' cancels such a
 * navigation without committing an error page, so the content stays and is printed. A refused
 * frame gets its error page (BlockedByClient): aborted, it would never fire its load event, and a
 * page that waits for it would wait out its deadline.
 *
 * Each render's page has a guard (PageGuard) that its requests are charged to, because every
 * paused request is a round trip on this one session, shared by every render on the browser:
 * a page that fires 20,000 blocked requests held the session for longer than its own deadline
 * and made other renders' pages late. A page may make `maxRequests` requests and have
 * MAX_PAGE_FRAMES frames; past either, its render fails at once and nothing more is answered for
 * it. Once a render is over (printed, failed or past its deadline), its page's paused requests
 * are left unanswered: closing its context discards them, and answering them would only delay
 * the other renders.
 *
 * A request is charged by the frame that made it (Fetch.requestPaused's frameId): a page's main
 * frame and out-of-process frames are targets of the render's browser context; other frames are
 * reported by the page itself (Page.frameAttached, see addFrame); a dedicated worker's requests
 * carry the id of the frame that started it. A request no guard claims is charged to the only
 * render in progress when there is one (always, in Lambda), else answered uncharged.
 */
import type { Browser, Protocol } from 'puppeteer-core';
import { assetNameOf } from '../templating/assets.js';
import type { EgressPolicy, EgressVerdict } from './egress.js';

/** An account asset's bytes, as the page is answered with them. */
export interface ServedAsset {
  readonly body: Uint8Array;
  readonly contentType: string;
}

/** Loads the render's asset `name` from storage; undefined when the account has none such. */
export type AssetSource = (name: string) => Promise<ServedAsset | undefined>;

const noop = (): void => {};

/**
 * Frames one render's page may have. Each frame is work for the browser process, which every
 * render shares: 1,000 frames to a refused address (Chromium's own cap on a page) kept it busy for
 * 5-8 s, and another render's page took 2-4 s to open meanwhile (measured, 2 cores); 100 frames
 * cost well under a second. A document has a handful.
 */
export const MAX_PAGE_FRAMES = 100;

/** The page made more requests, or opened more frames, than a render may. */
export class RequestBudgetError extends Error {
  constructor(
    readonly limit: number,
    readonly what: 'requests' | 'frames',
  ) {
    super(`the page made more than ${limit} ${what}`);
    this.name = 'RequestBudgetError';
  }
}

/** The page's renderer process died (crash, killed, out of memory). */
export class PageCrashedError extends Error {
  constructor(status: string) {
    super(`the page's renderer process ended (${status})`);
    this.name = 'PageCrashedError';
  }
}

export interface PageGuard {
  /** Rejects when the page's renderer process dies or the page exceeds its request budget; never resolves. */
  readonly failed: Promise<never>;
  /** Requests charged to the page so far. */
  readonly requests: number;
  /** The render is offline: every request of its page is refused, whatever the policy says. */
  readonly offline: boolean;
  /** The page's main frame (its target id). */
  addMainFrame(frameId: string): void;
  /**
   * A frame of the page (as Page.frameAttached reports it), charged against MAX_PAGE_FRAMES; past
   * it the render fails.
   */
  addFrame(frameId: string): void;
  /** Fails the render at once (its page did what no render may); `failed` rejects with `e`. */
  fail(e: Error): void;
  /** The render is over: its page's requests are no longer answered, and its failures no longer reported. */
  end(): void;
  /**
   * Told of each request of the page that is refused (egress policy, or a navigation), with why.
   * Only requests known to come from this render's page are told: never another render's.
   */
  onBlocked(listener: (url: string, reason: string) => void): void;
  /**
   * Where the page's requests to the asset origin (templating/assets.ts) are answered from: the
   * rendering account's assets. Until set, and for a request no render surely made, they
   * answer 404: an asset is never served to a page that is not its account's render.
   */
  serveAssets(source: AssetSource): void;
  /** The origins this render's requests were let through to: where its page could have stored something. */
  readonly origins: ReadonlySet<string>;
}

export interface Interceptor {
  /**
   * Starts charging a page's requests to one render. `contextId` is the render's own browser
   * context (multi-process); without one (the default context), the page's frames must be added.
   */
  guard(contextId: string | undefined, maxRequests: number, offline?: boolean): PageGuard;
  /**
   * The origins pages were let through to since the last call: where a page could have stored
   * something (single process: what to wipe before the next render). Recorded only when asked
   * for at interceptRequests.
   */
  takeOrigins(): string[];
}

class Guard implements PageGuard {
  readonly failed: Promise<never>;
  requests = 0;
  subframes = 0;
  ended = false;
  readonly frames = new Set<string>();
  readonly origins = new Set<string>();
  #fail: (e: Error) => void = noop;
  #blocked: (url: string, reason: string) => void = noop;
  assets: AssetSource | undefined;

  constructor(
    readonly contextId: string | undefined,
    readonly maxRequests: number,
    readonly offline: boolean,
    private readonly onEnd: (guard: Guard) => void,
    private readonly onFrame: (guard: Guard, frameId: string) => void,
  ) {
    this.failed = new Promise<never>((_, reject) => {
      this.#fail = reject;
    });
    this.failed.catch(noop);
  }

  addMainFrame(frameId: string): void {
    this.frames.add(frameId);
    this.onFrame(this, frameId);
  }

  addFrame(frameId: string): void {
    this.addMainFrame(frameId);
    if (++this.subframes > MAX_PAGE_FRAMES) this.fail(new RequestBudgetError(MAX_PAGE_FRAMES, 'frames'));
  }

  /** Charges one request; false when the page is over its budget (or the render over). */
  charge(): boolean {
    if (this.ended) return false;
    this.requests++;
    if (this.requests <= this.maxRequests) return true;
    this.fail(new RequestBudgetError(this.maxRequests, 'requests'));
    return false;
  }

  onBlocked(listener: (url: string, reason: string) => void): void {
    this.#blocked = listener;
  }

  serveAssets(source: AssetSource): void {
    this.assets = source;
  }

  blocked(url: string, reason: string): void {
    if (!this.ended) this.#blocked(url, reason);
  }

  fail(e: Error): void {
    if (this.ended) return;
    this.#fail(e);
    this.end();
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd(this);
  }
}

interface TargetEntry {
  readonly type: string;
  readonly contextId: string | undefined;
}

export interface InterceptOptions {
  /** Record the origins requests were let through to (see Interceptor.takeOrigins). */
  readonly recordOrigins?: boolean;
}

const originOf = (url: string): string | undefined => {
  try {
    const { protocol, origin } = new URL(url);
    return protocol === 'http:' || protocol === 'https:' ? origin : undefined;
  } catch {
    return undefined;
  }
};

export const interceptRequests = async (
  browser: Browser,
  policy: EgressPolicy,
  options: InterceptOptions = {},
): Promise<Interceptor> => {
  const session = await browser.target().createCDPSession();
  const targets = new Map<string, TargetEntry>();
  /** Renders in progress, by their browser context when they have one. */
  const live = new Set<Guard>();
  const byContext = new Map<string, Guard>();
  /** Frames (and page targets) of renders, ended ones included until their page goes away. */
  const byFrame = new Map<string, Guard>();
  const origins = new Set<string>();

  const forget = (guard: Guard): void => {
    for (const frame of guard.frames) if (byFrame.get(frame) === guard) byFrame.delete(frame);
    if (guard.contextId !== undefined && byContext.get(guard.contextId) === guard)
      byContext.delete(guard.contextId);
  };

  /** Whether a page of the guard's render is still there (its requests may still arrive). */
  const pageAlive = (guard: Guard): boolean => {
    for (const [id, target] of targets) {
      if (target.type !== 'page') continue;
      if (guard.frames.has(id) || (guard.contextId !== undefined && target.contextId === guard.contextId))
        return true;
    }
    return false;
  };

  /**
   * The render a request is charged to, and whether it surely came from that render's page (its
   * frame or context is the render's): only then is the render told why it was refused, so that a
   * request charged by elimination never shows in the diagnostics of a render it may not be from.
   */
  const guardOf = (frameId: string): { guard: Guard | undefined; certain: boolean } => {
    const claimed = byFrame.get(frameId);
    if (claimed) return { guard: claimed, certain: true };
    const contextId = targets.get(frameId)?.contextId;
    const owner = contextId === undefined ? undefined : byContext.get(contextId);
    if (owner) return { guard: owner, certain: true };
    if (live.size === 1) return { guard: live.values().next().value, certain: false };
    return { guard: undefined, certain: false };
  };

  /**
   * Whether a request is refused for being offline: its render's is, or, when no render claims it,
   * any render in progress is (fail closed: it may be the offline page's). Never looked up, so an
   * offline page's host names reach no resolver.
   */
  const offlineFor = (guard: Guard | undefined): boolean => {
    if (guard) return guard.offline;
    for (const g of live) if (g.offline) return true;
    return false;
  };

  const track = ({ targetInfo }: { targetInfo: Protocol.Target.TargetInfo }): void => {
    targets.set(targetInfo.targetId, { type: targetInfo.type, contextId: targetInfo.browserContextId });
  };
  session.on('Target.targetCreated', track);
  session.on('Target.targetInfoChanged', track);
  session.on('Target.targetDestroyed', ({ targetId }: Protocol.Target.TargetDestroyedEvent) => {
    const target = targets.get(targetId);
    targets.delete(targetId);
    // A render's page is gone: nothing of it can make requests any more.
    const guard = byFrame.get(targetId) ?? (target?.contextId ? byContext.get(target.contextId) : undefined);
    if (guard?.ended && target?.type === 'page') forget(guard);
  });
  session.on('Target.targetCrashed', ({ targetId, status }: Protocol.Target.TargetCrashedEvent) => {
    const target = targets.get(targetId);
    if (target?.type !== 'page') return; // a crashed frame shows as a sad frame; the page prints
    const guard =
      byFrame.get(targetId) ?? (target.contextId === undefined ? undefined : byContext.get(target.contextId));
    guard?.fail(new PageCrashedError(status));
  });

  /**
   * A request to the asset origin: answered from the render's own assets (never the network),
   * with CORS open so that @font-face loads it; 404 for a name the account has not, or when the
   * request is not surely the render's.
   */
  const answerAsset = (requestId: string, url: string, name: string, guard: Guard | undefined): void => {
    const source = guard?.assets;
    const found = source ? source(name).catch(() => undefined) : Promise.resolve(undefined);
    found
      .then((asset) => {
        if (guard?.ended) return;
        if (!asset) guard?.blocked(url, `asset not found: ${name} is not one of the account's assets`);
        return session.send('Fetch.fulfillRequest', {
          requestId,
          responseCode: asset ? 200 : 404,
          responseHeaders: [
            { name: 'Content-Type', value: asset ? asset.contentType : 'text/plain' },
            { name: 'Access-Control-Allow-Origin', value: '*' },
            { name: 'Cache-Control', value: 'no-store' },
          ],
          body: Buffer.from(asset ? asset.body : new TextEncoder().encode('asset not found')).toString(
            'base64',
          ),
        });
      })
      .catch(noop);
  };

  session.on(
    'Fetch.requestPaused',
    ({ requestId, request, resourceType, frameId }: Protocol.Fetch.RequestPausedEvent) => {
      const { guard, certain } = guardOf(frameId);
      // Over budget or over: left paused, no round trip; the context's close discards it.
      if (guard && !guard.charge()) return;
      const navigation = resourceType === 'Document' && targets.get(frameId)?.type === 'page';
      const assetName = navigation ? undefined : assetNameOf(request.url);
      if (assetName !== undefined) {
        answerAsset(requestId, request.url, assetName, certain ? guard : undefined);
        return;
      }
      const verdict: Promise<EgressVerdict | { allowed: false; reason: 'navigation' }> = navigation
        ? Promise.resolve({ allowed: false, reason: 'navigation' })
        : offlineFor(guard)
          ? Promise.resolve({ allowed: false, reason: 'offline' })
          : policy.check(request.url);
      verdict
        .then((v) => {
          if (guard?.ended) return; // the render ended while the policy looked the host up
          const ok = v.allowed;
          if (ok) {
            const origin = originOf(request.url);
            if (origin && options.recordOrigins) origins.add(origin);
            if (origin) guard?.origins.add(origin);
          }
          if (!v.allowed && certain) guard?.blocked(request.url, `blocked: ${v.reason}`);
          return ok
            ? session.send('Fetch.continueRequest', { requestId })
            : session.send('Fetch.failRequest', {
                requestId,
                errorReason: navigation ? 'Aborted' : 'BlockedByClient',
              });
        })
        .catch(noop); // the page, or the browser, went away meanwhile
    },
  );
  await session.send('Target.setDiscoverTargets', { discover: true });
  await session.send('Fetch.enable', { patterns: [{ urlPattern: '*', requestStage: 'Request' }] });

  return {
    guard(contextId, maxRequests, offline = false) {
      const guard = new Guard(
        contextId,
        maxRequests,
        offline,
        (ended) => {
          live.delete(ended);
          if (!pageAlive(ended)) forget(ended);
        },
        (owner, frameId) => byFrame.set(frameId, owner),
      );
      live.add(guard);
      if (contextId !== undefined) byContext.set(contextId, guard);
      return guard;
    },
    takeOrigins() {
      const taken = [...origins];
      origins.clear();
      return taken;
    },
  };
};
