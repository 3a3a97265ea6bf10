/**
 * A document printed as pages `first`..`first + pages - 1` of a longer one (a merge's part laid out
 * again with its place in the whole, functions/domain/merges/): Chromium numbers a header's and
 * footer's `pageNumber` and `totalPages` by the pages it lays out, and has no option to start
 * elsewhere. So the page is given `first - 1` empty pages before its content and enough after it
 * to make `total`, and only its own pages are printed (`pageRanges`): every number it prints, in
 * the margins and (with paged_media) in the body, is then the whole document's.
 *
 * Measured with pdftotext on a 2-page part at first = 4 of 9: "Page 4 of 9", "Page 5 of 9" (a
 * `pageRanges` print keeps the laid-out document's `totalPages`). The empty pages are laid out but
 * never drawn; printing the same 2-page part with "Page N of M" on 2 busy cores (warm page): as
 * itself 49 ms, as pages 150-151 of 300 142 ms, as pages 1000-1001 of 2000 456 ms, the PDF the
 * same size. So a merge's cost of continuous numbers grows with the pages before and after each
 * part that prints them (test/integration/merges.test.ts checks every page's number).
 *
 * What is lost: `@page :first` rules and `:blank` see the empty pages, and the body's top margin,
 * which an unforced break would have kept on the content's first page, is kept by a spacer of the
 * same height.
 */
import type { Page } from 'puppeteer-core';
import type { PageNumbering } from '../contract.js';

/** Chromium's `pageRanges` for the document's own pages. */
export const pageRangesOf = (numbering: PageNumbering): string =>
  `${numbering.first}-${numbering.first + numbering.pages - 1}`;

/** Empty pages after the document's own to make `total`; never fewer than none. */
export const pagesAfter = (numbering: PageNumbering): number =>
  Math.max(0, numbering.total - (numbering.first - 1) - numbering.pages);

/** Runs in the page (a string: the renderer's code is not typed against the DOM): the empty pages. */
const PAD = `(({ before, after }) => {
  const body = document.body;
  if (!body) return;
  const style = getComputedStyle(body);
  const blank = (css) => {
    const div = document.createElement('div');
    div.setAttribute('aria-hidden', 'true');
    div.style.cssText = css + ';height:1px;margin:0;padding:0;border:0';
    return div;
  };
  const head = document.createDocumentFragment();
  for (let i = 0; i < before; i++) head.appendChild(blank('break-after:page'));
  if (before > 0) {
    const spacer = blank('');
    spacer.style.height = (parseFloat(style.marginTop) + parseFloat(style.paddingTop)) + 'px';
    head.appendChild(spacer);
  }
  body.insertBefore(head, body.firstChild);
  for (let i = 0; i < after; i++) body.appendChild(blank('break-before:page'));
})`;

/** The empty pages around the document, once, before its first print. */
export const padForNumbering = async (page: Page, numbering: PageNumbering): Promise<void> => {
  const argument = JSON.stringify({ before: numbering.first - 1, after: pagesAfter(numbering) });
  await page.evaluate(`${PAD}(${argument})`);
};
