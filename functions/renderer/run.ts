/**
 * A batch run (issue 43): the items of one run of one batch, rendered one after another on one
 * page of one browser context of the run's own (session.ts, createRunPage), wiped between items.
 * The run's context is opened for it (or is the spare, never used before, or the page the last run
 * of the same batch left, wiped: PARK_MS) and closed in the background when the run ends, unless
 * kept for its batch's next run: no other batch, account or single render ever has it. An item
 * that spoils the page (timed out, crashed, over its budget) ends the context; the next item opens
 * a fresh one.
 *
 * Items go through the renderer's admission as single renders do, and take the page one at a
 * time; an item starts once the one before is done with the page, so two of a run hold admission
 * slots while the one before checks and uploads its PDF. After `sliceMs` no further item starts:
 * those come back unrendered (null) and their consumer puts them back on the queue, so that a run
 * holds a consumer no longer than its slice and one item's own budget.
 */
import type { RenderRun, RunResults } from '../domain/common/ports.js';
import type { Admission } from './admission.js';
import type { RenderResult } from './contract.js';
import { log } from './log.js';
import { type RenderParts, render, type SessionSource } from './render.js';
import { createRunPage, OPEN_TIMEOUT_MS, type RunPage, within } from './session.js';

/** The renderer's own record of the contexts items rendered in (tests read it; the newest kept). */
export interface ContextRecord {
  readonly jobId: string;
  /** The browser context the item's page was in; undefined in a single-process browser. */
  readonly contextId: string | undefined;
  /** The run it was part of (each run has its own). */
  readonly run: number;
}

/** How many entries the record keeps. */
const RECORD_SIZE = 5_000;

let runs = 0;

/**
 * How long a run's context, wiped, waits for the next run of its batch before it is closed. A
 * batch's runs follow each other (the slice ends a run; its items come back at once): kept, the
 * next run on this renderer pays no context (~75 ms of Chromium's CPU to open and close one).
 */
const PARK_MS = 2_000;

interface Parked {
  readonly batch: string;
  readonly page: RunPage;
}

/** How many run pages a browser keeps at once (as many as runs may go side by side: two consumers). */
const PARKED_MAX = 2;

/** Per browser: the run pages kept, each for its own batch's next run (never given to another batch). */
const parkedBy = new WeakMap<object, Parked[]>();

/** A page kept for `batch`'s next run, taken (no one else gets it), if any. */
const unpark = (browser: object, batch: string | undefined): RunPage | undefined => {
  const parked = parkedBy.get(browser) ?? [];
  const found = batch === undefined ? undefined : parked.find((p) => p.batch === batch);
  if (!found) return undefined;
  parked.splice(parked.indexOf(found), 1);
  return found.page;
};

/** Keeps `page` for `batch`'s next run for PARK_MS, then closes it; closes it now if enough are kept. */
const park = (browser: object, batch: string, page: RunPage, runId: number): Promise<void> => {
  const kept = parkedBy.get(browser) ?? [];
  parkedBy.set(browser, kept);
  if (kept.length >= PARKED_MAX) return page.close();
  const parked: Parked = { batch, page };
  kept.push(parked);
  setTimeout(() => {
    const at = kept.indexOf(parked);
    if (at < 0) return;
    kept.splice(at, 1);
    page
      .close()
      .catch((e: unknown) => log('WARN', 'batch-run-close-failed', { run: runId, error: String(e) }));
  }, PARK_MS).unref();
  return Promise.resolve();
};

/**
 * Whether a run's items may print in the fonts the layer leaves out (fetched-fonts.ts): read from
 * their templates, variables and marks as given, before templating. Such a run's items are
 * rendered each on its own (render.ts fetches the fonts and relaunches the browser to see them),
 * not on a run's page: a Korean item of a run printed without Noto Sans KR in the Lambda-like
 * sandbox (single-process), though its font had been fetched and the browser relaunched.
 */
const wantsFetchedFonts = ({ fetchedFonts }: RenderParts, run: RenderRun): boolean => {
  if (!fetchedFonts) return false;
  const text = run.requests
    .map(({ template: t, watermark, stamp }) =>
      [
        t.source,
        t.header ?? '',
        t.footer ?? '',
        typeof t.variables === 'string' ? t.variables : JSON.stringify(t.variables),
        watermark?.text ?? '',
        stamp?.text ?? '',
      ].join('\n'),
    )
    .join('\n');
  return fetchedFonts.wantedBy(text).length > 0;
};

/** A run's items each rendered on its own, one after another within the run's slice. */
const oneByOne = async (
  parts: RenderParts,
  run: RenderRun,
  admission: Admission,
  started: number,
): Promise<RunResults> => {
  const results: (RenderResult | null)[] = [];
  for (const [i, request] of run.requests.entries()) {
    if (i > 0 && performance.now() - started >= run.sliceMs) {
      results.push(null);
      continue;
    }
    const outcome = await admission.run(() => render(parts, request));
    if (!outcome.admitted) {
      results.push(...run.requests.slice(i).map(() => null));
      break;
    }
    results.push(outcome.value);
  }
  return results;
};

/** How long the run's end waits for its last session to be handed back: opened, then wiped. */
const HAND_BACK_TIMEOUT_MS = OPEN_TIMEOUT_MS + 5_000;

export const renderRun = async (
  parts: RenderParts,
  run: RenderRun,
  admission: Admission,
  maxRequests: number,
  record: ContextRecord[],
): Promise<RunResults> => {
  const started = performance.now();
  const runId = ++runs;
  if (wantsFetchedFonts(parts, run)) return oneByOne(parts, run, admission, started);
  const page = unpark(parts.browser, run.batch) ?? createRunPage();
  const contextsBefore = page.contexts.length;
  /** The context each item's page was in (the record), by the item's place in the run. */
  const contextIds: (string | undefined)[] = [];
  /**
   * Resolves once the session last handed out is handed back (closed, and its page wiped or
   * dropped). An item's session is taken only then: one item at a time has the run's page. A
   * render hands back a session it never used (its templating failed, it timed out opening) when
   * the session opens, after its answer: without this wait the next item took the same page
   * meanwhile, and the wipe of the unused session blanked the next item's document before it
   * was printed (a page printed without its item's content, issue 43).
   */
  let handedBack: Promise<void> = Promise.resolve();
  /** Set once a hand-back timed out: the run's page is not taken again. */
  let lost = false;
  /** Item `i`'s sessions; `pageDone` is told once it is done with the page (it closes its session). */
  const sessionsOf = (i: number, pageDone: () => void): SessionSource => ({
    takeSession: async ({ offline = false } = {}) => {
      const before = handedBack;
      let back: () => void = () => {};
      handedBack = new Promise<void>((resolve) => {
        back = resolve;
      });
      try {
        // Bounded: a hand-back that never comes (a wipe or an open stuck past its own bounds)
        // costs the next item the run's page, not the run its slice: it renders in a fresh
        // context of its own, as a single render does, and the page is not used again.
        const timedOut = (await within(before, HAND_BACK_TIMEOUT_MS)) !== undefined;
        if (timedOut) {
          log('WARN', 'batch-run-hand-back-timeout', { run: runId });
          lost = true;
        }
        const session = lost
          ? await parts.browser.takeSession({ offline })
          : ((await page.take(maxRequests, offline)) ??
            page.keep(await parts.browser.takeSession({ offline })));
        contextIds[i] = session.context?.id;
        let closing: Promise<void> | undefined;
        const close = (spoiled: boolean): Promise<void> => {
          pageDone();
          closing ??= session.close(spoiled).finally(back);
          return closing;
        };
        return { ...session, close };
      } catch (e) {
        back();
        pageDone();
        throw e;
      }
    },
    // A session no content reached is wiped and kept all the same (a kept page), or closed.
    releaseUnused: (session) => {
      session.close(false).catch(() => {});
    },
    // The spare is opened once the run ends, not between its items.
    prepareSpare: () => {},
  });
  const results: (RenderResult | null)[] = run.requests.map(() => null);
  /**
   * The items under way. The next item starts once the one before is done with the page (its
   * session closed: printed, or failed), not once it has answered: its PDF's checks and upload go
   * on beside the next item's templating and loading (measured at a load of 11: ~47 ms of an
   * item's ~140, the page idle). The page is still one item's at a time: the next item's session
   * is taken once the one before is handed back (wiped), as before.
   */
  const underWay: Promise<void>[] = [];
  let refused = false;
  try {
    for (const [i, request] of run.requests.entries()) {
      if (i > 0 && performance.now() - started >= run.sliceMs) break;
      let pageDone: () => void = () => {};
      const donePage = new Promise<void>((resolve) => {
        pageDone = resolve;
      });
      const item = admission
        .run(() => render({ ...parts, sessions: sessionsOf(i, pageDone) }, request))
        .then((outcome) => {
          if (!outcome.admitted) {
            // Busy: this item and the rest go back to the queue unrendered.
            refused = true;
            return;
          }
          results[i] = outcome.value;
          record.push({ jobId: request.jobId, contextId: contextIds[i], run: runId });
          if (record.length > RECORD_SIZE) record.splice(0, record.length - RECORD_SIZE);
        });
      underWay.push(item);
      await Promise.race([item, donePage]);
      if (refused) break;
    }
    await Promise.all(underWay);
  } finally {
    // The run's context is closed in the background, as a single render's is: the run's answer
    // (and its consumer, and another account's work behind it) does not wait for Chromium to end
    // a renderer process. The last item's session is handed back first (an unused one may still
    // be opening), within its bound.
    // Kept, wiped, for the batch's next run (never for another batch's), unless its page was lost.
    void within(handedBack, HAND_BACK_TIMEOUT_MS)
      .then((back) =>
        back === undefined && !lost && run.batch !== undefined
          ? park(parts.browser, run.batch, page, runId)
          : page.close(),
      )
      .catch((e: unknown) => log('WARN', 'batch-run-close-failed', { run: runId, error: String(e) }))
      .finally(() => parts.browser.prepareSpare());
  }
  log('INFO', 'batch-run', {
    items: run.requests.length,
    rendered: results.filter((r) => r !== null).length,
    contexts: page.contexts.length - contextsBefore,
    kept: contextsBefore > 0,
    ms: Math.round(performance.now() - started),
  });
  return results;
};
