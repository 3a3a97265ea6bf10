/**
 * Reading a PDF in tests, with pdfjs-dist (its legacy build runs on Node 20):
 *
 *   const pdf = await readPdf(bytes);
 *   expect(pdf.pageCount).toBe(1);
 *   expect(pdf.pages[0]?.widthPt).toBeCloseTo(PAPER_SIZES_PT.A4.widthPt, 0); // 595 x 842 pt
 *   expect(pdf.text).toContain('Invoice');
 *
 * Sizes are in PDF points (1/72 inch) as the page is shown, so landscape pages are wider than tall.
 */
import { getDocument, OPS, type PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { PaperFormat } from '../../functions/renderer/contract.js';

export interface PdfPageInfo {
  readonly widthPt: number;
  readonly heightPt: number;
  /** The page's text: lines separated by newlines, runs of spaces collapsed to one. */
  readonly text: string;
}

export interface PdfInfo {
  readonly pageCount: number;
  readonly pages: readonly PdfPageInfo[];
  /** All pages' text, joined with newlines. */
  readonly text: string;
}

/** Portrait paper sizes in points, as Chromium prints them (within 1 pt). */
export const PAPER_SIZES_PT: Readonly<
  Record<PaperFormat, { readonly widthPt: number; readonly heightPt: number }>
> = {
  A3: { widthPt: 842, heightPt: 1191 },
  A4: { widthPt: 595, heightPt: 842 },
  A5: { widthPt: 420, heightPt: 595 },
  LETTER: { widthPt: 612, heightPt: 792 },
  LEGAL: { widthPt: 612, heightPt: 1008 },
};

const open = (bytes: Uint8Array | ArrayBuffer): Promise<PDFDocumentProxy> =>
  // pdfjs takes ownership of (detaches) the buffer it is given: hand it a copy.
  getDocument({
    data: new Uint8Array(bytes).slice(),
    verbosity: 0,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
  }).promise;

/** Page count, page sizes and text of a PDF. Throws when the bytes are not a readable PDF. */
export const readPdf = async (bytes: Uint8Array | ArrayBuffer): Promise<PdfInfo> => {
  const doc = await open(bytes);
  try {
    const pages: PdfPageInfo[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const { width, height } = page.getViewport({ scale: 1 });
      const content = await page.getTextContent();
      const text = content.items
        .map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : ''))
        .join('')
        .replace(/[ \t\u00a0]+/g, ' ')
        .replace(/ ?\n ?/g, '\n')
        .trim();
      pages.push({ widthPt: width, heightPt: height, text });
    }
    return { pageCount: doc.numPages, pages, text: pages.map((p) => p.text).join('\n') };
  } finally {
    await doc.destroy();
  }
};

/**
 * The fill colours (`#rrggbb`, lower case) that page `pageNumber` (1-based) paints with, for
 * checks like "the background was printed".
 */
export const readFillColors = async (bytes: Uint8Array | ArrayBuffer, pageNumber = 1): Promise<string[]> => {
  const doc = await open(bytes);
  try {
    const ops = await (await doc.getPage(pageNumber)).getOperatorList();
    const colors = new Set<string>();
    ops.fnArray.forEach((fn, i) => {
      if (fn !== OPS.setFillRGBColor) return;
      const rgb = Array.from(ops.argsArray[i] as ArrayLike<number>);
      colors.add(`#${rgb.map((c) => c.toString(16).padStart(2, '0')).join('')}`);
    });
    return [...colors];
  } finally {
    await doc.destroy();
  }
};
