/**
 * Printing a document that navigates: page references in its body (`pagedMedia`), bookmarks
 * (`outline`) and tags (`tagged`), each opt-in per render. A render without them prints once, as
 * it always did: nothing here runs but the choice of Chromium's `tagged` flag.
 *
 * Page references are filled by printing twice, not by Paged.js (pagedjs 0.4.3, the reference
 * polyfill, injected from disk; test/bench/pagedjs.ts). Measured on 2 busy cores, the same HTML:
 *   invoice (1 page):    plain print 79-93 ms;  Paged.js 244-260 ms (its 500 KB script parsed on
 *                        every render, then 22-32 ms of layout); text identical.
 *   report (30 pages):   plain print 0.9-1.1 s; Paged.js 1.9-3.2 s (1.1-1.8 s of its own layout);
 *                        same page count, but the table's repeated header row is gone from pages
 *                        2-30 (it paginates with its own fragmentation, not Chromium's), so 29 of
 *                        30 pages differ.
 * A second print costs one print again, only for documents that use the counters, and lays the
 * document out with Chromium's own pagination, exactly as a render without them. Two-pass:
 *   1. every element whose page is needed gets a named destination (page-script.ts), and the page
 *      is printed with 0 for every number;
 *   2. the page of each is read from the PDF's destinations (pdf-destinations.ts), the numbers
 *      filled in, and the page printed again;
 *   3. if the numbers moved anything to another page (a "9" that became "10" and wrapped), once
 *      more. MAX_PRINTS bounds it; what is filled is what the print before the last measured.
 * Measured with test/bench/navigation.ts (p50 of 7 interleaved renders, 2 cores under a load of
 * ~19, so ±20 % is noise): the navigated report (contents page, "Page N of M" on all 30 pages)
 * 306 ms plain, 428 ms with pagedMedia (two prints; 80 KB instead of 77 KB, the destinations);
 * a document that uses no counters prints once, the same PDF as without the option but for its
 * dates (the invoice, the 30-page table report: within the noise).
 *
 * Tagged (Chromium's structure tree, with /Lang from <html lang> and DisplayDocTitle, which
 * Chromium writes itself): invoice 67.7 KB instead of 40.2 KB, time within the noise; navigated
 * report 119 KB instead of 77 KB; the 30-page table report 3.66 MB instead of 206 KB and twice
 * the time (4.4 s against 2.3 s in the bench; 1.2-1.6 s against 0.6 s printing alone on a quieter
 * machine): a tag per table cell.
 */
import type { CDPSession } from 'puppeteer-core';
import type { NavigationOptions } from '../contract.js';
import { log, rendererLogger } from '../log.js';
import { withOutline } from './outline.js';
import { FILL, MAX_MARKS, PREPARE, type Prepared } from './page-script.js';
import { type PdfDestinations, readDestinations } from './pdf-destinations.js';

/** Prints at most this many times: the second fills the numbers, a third settles a reflow. */
export const MAX_PRINTS = 3;

/** Chromium's printToPDF flags for a render's options. */
export const chromiumPrintFlags = (
  options: NavigationOptions,
  taggedByDefault: boolean,
): { readonly tagged: boolean; readonly outline: boolean } => {
  const tagged = options.tagged ?? taggedByDefault;
  // Chromium's outline comes from the structure tree: only where the PDF is tagged anyway.
  return { tagged, outline: tagged && options.outline === true };
};

type Until = <T>(promise: Promise<T>) => Promise<T>;

/** Runs `script(argument)` in the render's own isolated world; its value, by value. */
const inWorld = async (
  cdp: CDPSession,
  contextId: number,
  script: string,
  argument: unknown,
): Promise<unknown> => {
  const { result, exceptionDetails } = await cdp.send('Runtime.evaluate', {
    expression: `${script}(${JSON.stringify(argument)})`,
    contextId,
    returnByValue: true,
  });
  if (exceptionDetails) throw new Error(`navigation script failed: ${exceptionDetails.text}`);
  return result.value;
};

const openWorld = async (cdp: CDPSession): Promise<number> => {
  const { frameTree } = await cdp.send('Page.getFrameTree');
  const { executionContextId } = await cdp.send('Page.createIsolatedWorld', {
    frameId: frameTree.frame.id,
    worldName: 'render-navigation',
  });
  return executionContextId;
};

interface Numbers {
  readonly pages: number;
  readonly byId: Record<string, number>;
}

/** Pages as the whole document counts them: a part printed at its place in a merge (page-numbering.ts). */
const numbersOf = (
  destinations: PdfDestinations,
  prepared: Prepared,
  numbering: NavigationOptions['pageNumbering'],
): Numbers => {
  const before = numbering ? numbering.first - 1 : 0;
  const byId: Record<string, number> = {};
  for (const { own, targets } of prepared.references) {
    for (const id of [own, ...Object.values(targets)]) {
      const page = id === null ? undefined : destinations.byName.get(id)?.page;
      if (id !== null && page !== undefined) byId[id] = page + before;
    }
  }
  return { pages: numbering ? numbering.total : destinations.pageCount, byId };
};

const sameNumbers = (a: Numbers | undefined, b: Numbers): boolean =>
  a !== undefined &&
  a.pages === b.pages &&
  Object.keys(b.byId).length === Object.keys(a.byId).length &&
  Object.entries(b.byId).every(([id, page]) => a.byId[id] === page);

/**
 * Prints with `print` as often as the options need (once when they need nothing), and returns the
 * last print with the outline added when the render asked for one Chromium does not write. A
 * failed print is returned as it is.
 */
export const printNavigated = async <P extends { readonly pdf: Uint8Array }, F>(
  cdp: CDPSession,
  options: NavigationOptions,
  taggedByDefault: boolean,
  print: () => Promise<P | F>,
  until: Until,
): Promise<P | F> => {
  const references = options.pagedMedia === true;
  const ownOutline = options.outline === true && !chromiumPrintFlags(options, taggedByDefault).outline;
  if (!references && !ownOutline) return print();

  const world = await until(openWorld(cdp));
  const prepared = (await until(
    inWorld(cdp, world, PREPARE, { references, headings: ownOutline, max: MAX_MARKS }),
  )) as Prepared;
  if (prepared.truncated) log('WARN', 'navigation-truncated', { max: MAX_MARKS });

  let printed = await print();
  let prints = 1;
  const isPrint = (p: P | F): p is P => typeof p === 'object' && p !== null && 'pdf' in p;
  if (references && prepared.references.length > 0) {
    let filled: Numbers | undefined;
    for (; isPrint(printed); prints++) {
      const destinations = readDestinations(printed.pdf);
      if (!destinations) break;
      const numbers = numbersOf(destinations, prepared, options.pageNumbering);
      // What was filled is what this print measured: the numbers are right.
      if (sameNumbers(filled, numbers)) break;
      if (prints >= MAX_PRINTS) {
        log('WARN', 'page-references-unsettled', { prints });
        break;
      }
      await until(inWorld(cdp, world, FILL, numbers));
      filled = numbers;
      printed = await print();
    }
  }
  rendererLogger.debug('navigation-printed', {
    prints,
    references: prepared.references.length,
    headings: prepared.headings.length,
  });
  if (!ownOutline || prepared.headings.length === 0 || !isPrint(printed)) return printed;
  const destinations = readDestinations(printed.pdf);
  const outlined = destinations && withOutline(printed.pdf, destinations, prepared.headings);
  if (!outlined) {
    log('WARN', 'pdf-outline-skipped', { reason: 'no destinations for the headings in the PDF' });
    return printed;
  }
  return { ...printed, pdf: outlined };
};
