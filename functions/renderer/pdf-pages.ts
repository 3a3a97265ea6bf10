/**
 * Counting the pages of a PDF that Chromium (Skia) just wrote, without parsing it: Skia writes a
 * classic cross-reference table, so the trailer names the catalog, the catalog names the root of
 * the page tree, and that node's /Count is the page count. Three small reads near known offsets,
 * whatever the size of the file. Objects are found through the xref offsets, never by searching,
 * so text or link targets in the document cannot pose as them.
 */

export const text = (pdf: Uint8Array, start: number, end: number): string =>
  Buffer.from(pdf.buffer, pdf.byteOffset + start, Math.max(0, Math.min(end, pdf.length) - start)).toString(
    'latin1',
  );

/** Byte offset of object `num` from a classic xref table at `xrefOffset`. */
export const objectOffset = (pdf: Uint8Array, xrefOffset: number, num: number): number | undefined => {
  let pos = xrefOffset;
  const head = /^xref\s*/.exec(text(pdf, pos, pos + 16));
  if (!head) return undefined;
  pos += head[0].length;
  for (let section = 0; section < 10_000; section++) {
    const sub = /^(\d+) (\d+)\s*?\r?\n/.exec(text(pdf, pos, pos + 40));
    if (!sub) return undefined; // "trailer": not in the table
    const first = Number(sub[1]);
    const count = Number(sub[2]);
    pos += sub[0].length;
    if (num >= first && num < first + count) {
      // Entries are exactly 20 bytes: "oooooooooo ggggg n\r\n".
      const entry = /^(\d{10}) (\d{5}) n/.exec(
        text(pdf, pos + (num - first) * 20, pos + (num - first) * 20 + 20),
      );
      return entry ? Number(entry[1]) : undefined;
    }
    pos += count * 20;
  }
  return undefined;
};

/** The dictionary text of object `num` (its first 4 KiB). */
const objectText = (pdf: Uint8Array, xrefOffset: number, num: number): string | undefined => {
  const at = objectOffset(pdf, xrefOffset, num);
  if (at === undefined) return undefined;
  const body = text(pdf, at, at + 4096);
  if (!new RegExp(`^${num}\\s+\\d+\\s+obj\\b`).test(body)) return undefined;
  const end = body.indexOf('endobj');
  return end < 0 ? body : body.slice(0, end);
};

const pageTreeCount = (pdf: Uint8Array): number | undefined => {
  const tail = text(pdf, Math.max(0, pdf.length - 1024), pdf.length);
  const startxref = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(tail);
  const trailer = tail.lastIndexOf('trailer');
  if (!startxref || trailer < 0) return undefined;
  const root = /\/Root\s+(\d+)\s+\d+\s+R/.exec(tail.slice(trailer));
  if (!root) return undefined;
  const xrefOffset = Number(startxref[1]);
  const catalog = objectText(pdf, xrefOffset, Number(root[1]));
  const pagesRef = catalog && /\/Pages\s+(\d+)\s+\d+\s+R/.exec(catalog);
  if (!pagesRef) return undefined;
  const pages = objectText(pdf, xrefOffset, Number(pagesRef[1]));
  const count = pages && /\/Type\s*\/Pages\b/.test(pages) ? /\/Count\s+(\d+)/.exec(pages) : undefined;
  return count ? Number(count[1]) : undefined;
};

/**
 * The page count of a PDF. Falls back to counting page objects when the file has no classic
 * trailer (other producers, xref streams); that fallback reads the whole file.
 */
export const countPdfPages = (pdf: Uint8Array): number =>
  pageTreeCount(pdf) ?? (text(pdf, 0, pdf.length).match(/\/Type\s*\/Page(?![A-Za-z])/g)?.length || 0);
