/**
 * The page limit, as early as it can be known (issue 37): a 2,000-page document printed fully
 * (15.9 s, 2.5 GB, more on a loaded machine) before PDF_TOO_MANY_PAGES. Chromium lays a document
 * out twice: for the screen when it loads, and again for print inside Page.printToPDF, and says
 * nothing of the count until the whole print is done. So, before printing, the loaded document's
 * height is read from its screen layout, already computed, and a document certainly longer than
 * the limit is refused without printing.
 *
 * "Certainly": the screen layout is a lower bound of the print's only when the print is no wider
 * than the screen (narrower text wraps onto more lines, page breaks only add pages) and print styles
 * cannot hide content, so the estimate is used only then (no `print` media rule or stylesheet, no
 * stylesheet it cannot read, a printable width within the page's), and only past ESTIMATE_MARGIN
 * times the limit. Otherwise (and for documents near the limit) the print itself is capped at one
 * page past the limit (render.ts's pageRanges), which saves the painting of the pages beyond it but
 * not the print's layout. Measured (2 cores, heavily loaded): a 300-page table-per-page document
 * printed in 47.2 s and was refused by the capped print in 34.1 s.
 */
import type { CDPSession } from 'puppeteer-core';
import { PAPER_INCHES } from '../domain/renders/render-options.js';
import type { RenderRequest } from './contract.js';

/** How much longer than the limit an estimated document must be to be refused on its estimate. */
export const ESTIMATE_MARGIN = 1.25;

/** CSS pixels per inch. */
const PX_PER_INCH = 96;

/** Runs in the page (a string: the renderer's code is not typed against the DOM). */
const MEASURE = `(() => {
  const root = document.documentElement;
  const height = Math.max(root ? root.scrollHeight : 0, document.body ? document.body.scrollHeight : 0);
  let printStyles = false;
  const visit = (rules) => {
    for (const rule of rules) {
      if (printStyles) return;
      if (rule.media && /print/i.test(rule.media.mediaText)) printStyles = true;
      else if (rule.cssRules) visit(rule.cssRules);
    }
  };
  for (const sheet of document.styleSheets) {
    try {
      if (sheet.media && /print/i.test(sheet.media.mediaText)) printStyles = true;
      else visit(sheet.cssRules);
    } catch {
      printStyles = true;
    }
    if (printStyles) break;
  }
  return { height, width: window.innerWidth, printStyles };
})()`;

interface Measured {
  readonly height: number;
  readonly width: number;
  readonly printStyles: boolean;
}

/**
 * The fewest pages the loaded document can print on, from its screen layout; undefined when that
 * layout says nothing certain about the print (see the module's comment).
 */
export const estimatePages = async (
  cdp: CDPSession,
  pdf: RenderRequest['pdf'],
): Promise<number | undefined> => {
  const { result, exceptionDetails } = await cdp.send('Runtime.evaluate', {
    expression: MEASURE,
    returnByValue: true,
  });
  if (exceptionDetails) return undefined;
  const measured = result.value as Measured | undefined;
  if (!measured || measured.printStyles) return undefined;
  const [portraitWidth, portraitHeight] = PAPER_INCHES[pdf.format];
  const [width, height] = pdf.landscape ? [portraitHeight, portraitWidth] : [portraitWidth, portraitHeight];
  const printableWidth = (width - pdf.margins.left - pdf.margins.right) * PX_PER_INCH;
  const printableHeight = (height - pdf.margins.top - pdf.margins.bottom) * PX_PER_INCH;
  if (printableWidth > measured.width || printableHeight <= 0) return undefined;
  return Math.floor(measured.height / printableHeight);
};
