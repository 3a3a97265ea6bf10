/**
 * Reading what a freshly printed Chromium (Skia) PDF says about its named destinations, and
 * appending objects to it by an incremental update (PDF 1.7, 7.5.6), as pdf-metadata.ts does.
 *
 * Blink writes a named destination for every element whose id some link in the document points
 * to (a link in a `display: none` element is enough, and draws no link annotation: measured on
 * Chromium 143), as the catalog's /Dests dictionary: `/name [pageRef /XYZ x y 0]`. That is how a
 * render learns which page an element was printed on (paged-media.ts) and where a heading is
 * (outline.ts), without parsing the page content.
 *
 * Like pdf-pages.ts this reads only what it needs, through the xref offsets (never by searching,
 * so the document's text cannot pose as objects), and only Skia's own output: one classic xref
 * section, no object streams. Anything else answers undefined and the caller leaves the PDF alone.
 */
import { objectOffset, text } from '../pdf-pages.js';

export interface PdfTrailer {
  readonly size: number;
  readonly root: number;
  readonly info: number | undefined;
  readonly startxref: number;
}

/** Skia's dictionaries are small; a /Dests of 10,000 destinations is ~400 KiB. */
const MAX_OBJECT_BYTES = 8 * 1024 * 1024;

export const readTrailer = (pdf: Uint8Array): PdfTrailer | undefined => {
  const tail = text(pdf, Math.max(0, pdf.length - 1024), pdf.length);
  const startxref = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(tail);
  const at = tail.lastIndexOf('trailer');
  if (!startxref || at < 0) return undefined;
  const trailer = tail.slice(at, tail.lastIndexOf('startxref'));
  // An update or a hybrid file is not Skia's fresh output; encrypted strings are beyond this.
  if (/\/(Encrypt|XRefStm|Prev)\b/.test(trailer)) return undefined;
  const size = /\/Size\s+(\d+)/.exec(trailer);
  const root = /\/Root\s+(\d+)\s+0\s+R/.exec(trailer);
  const info = /\/Info\s+(\d+)\s+0\s+R/.exec(trailer);
  if (!size || !root) return undefined;
  return {
    size: Number(size[1]),
    root: Number(root[1]),
    info: info ? Number(info[1]) : undefined,
    startxref: Number(startxref[1]),
  };
};

/** The text of object `num` between `num 0 obj` and `endobj`, or undefined. */
export const objectBody = (pdf: Uint8Array, trailer: PdfTrailer, num: number): string | undefined => {
  const at = objectOffset(pdf, trailer.startxref, num);
  if (at === undefined) return undefined;
  const head = new RegExp(`^${num}\\s+0\\s+obj\\s*`).exec(text(pdf, at, at + 32));
  if (!head) return undefined;
  const start = at + head[0].length;
  // Found by a bounded forward search: a string holding "endobj" would cut a dictionary short,
  // and Skia writes none in the objects read here (catalog, page tree, destinations).
  const body = text(pdf, start, start + MAX_OBJECT_BYTES);
  const end = body.indexOf('endobj');
  return end < 0 ? undefined : body.slice(0, end).trim();
};

/** A PDF name's characters (after its slash), `#xx` escapes decoded, read as UTF-8. */
export const decodeName = (raw: string): string =>
  Buffer.from(
    raw.replace(/#([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
    'latin1',
  ).toString('utf8');

/**
 * The element id a destination is named after: Blink names it with the id as a URL fragment
 * serializes it (percent-encoded: "größe (2)" is written gr%C3%B6%C3%9Fe%20(2), measured).
 */
const elementId = (name: string): string => {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
};

/** The page objects in page order (1-based page number by object number). */
const pageNumbers = (pdf: Uint8Array, trailer: PdfTrailer, pagesRoot: number): Map<number, number> => {
  const numbers = new Map<number, number>();
  const visit = (num: number, depth: number): void => {
    if (depth > 32) return;
    const body = objectBody(pdf, trailer, num);
    if (!body) return;
    if (/\/Type\s*\/Pages\b/.test(body)) {
      const kids = /\/Kids\s*\[([^\]]*)\]/.exec(body)?.[1] ?? '';
      for (const kid of kids.matchAll(/(\d+)\s+0\s+R/g)) visit(Number(kid[1]), depth + 1);
    } else if (/\/Type\s*\/Page\b/.test(body)) {
      numbers.set(num, numbers.size + 1);
    }
  };
  visit(pagesRoot, 0);
  return numbers;
};

export interface Destination {
  /** 1-based. */
  readonly page: number;
  /** The destination array as Skia wrote it (`[12 0 R /XYZ x y 0]`), for an outline item's /Dest. */
  readonly array: string;
}

export interface PdfDestinations {
  readonly trailer: PdfTrailer;
  /** The catalog dictionary, `<<…>>`. */
  readonly catalog: string;
  readonly pageCount: number;
  /** By element id. */
  readonly byName: ReadonlyMap<string, Destination>;
}

/** The PDF's named destinations and page count; undefined when the file is not one this reads. */
export const readDestinations = (pdf: Uint8Array): PdfDestinations | undefined => {
  const trailer = readTrailer(pdf);
  if (!trailer) return undefined;
  const catalog = objectBody(pdf, trailer, trailer.root);
  const pagesRef = catalog && /\/Pages\s+(\d+)\s+0\s+R/.exec(catalog);
  if (!catalog || !pagesRef) return undefined;
  const pages = pageNumbers(pdf, trailer, Number(pagesRef[1]));
  const byName = new Map<string, Destination>();
  const destsRef = /\/Dests\s+(\d+)\s+0\s+R/.exec(catalog);
  const dests = destsRef ? objectBody(pdf, trailer, Number(destsRef[1])) : undefined;
  for (const entry of dests?.matchAll(/\/([^\s/[\]<>()]+)\s*(\[\s*(\d+)\s+0\s+R[^\]]*\])/g) ?? []) {
    const [, name = '', array = '', pageRef] = entry;
    const page = pages.get(Number(pageRef));
    if (page !== undefined) byName.set(elementId(decodeName(name)), { page, array });
  }
  return { trailer, catalog, pageCount: pages.size, byName };
};

/**
 * The PDF with `objects` appended as an incremental update whose trailer keeps the file's root and
 * Info. Its cross-reference section lists, besides the new objects, the Info dictionary and the
 * page tree root where they already are: readers that look only in the last section (pdf-pages.ts
 * and pdf-metadata.ts, which run after this) still find them.
 */
export const appendUpdate = (
  pdf: Uint8Array,
  trailer: PdfTrailer,
  objects: ReadonlyMap<number, string>,
  carried: readonly number[],
): Uint8Array => {
  const offsets = new Map<number, number>();
  for (const num of carried) {
    const at = objectOffset(pdf, trailer.startxref, num);
    if (at !== undefined && !objects.has(num)) offsets.set(num, at);
  }
  let body = '';
  let size = trailer.size;
  for (const [num, dictionary] of objects) {
    body += '\n';
    offsets.set(num, pdf.length + Buffer.byteLength(body, 'latin1'));
    body += `${num} 0 obj\n${dictionary}\nendobj`;
    size = Math.max(size, num + 1);
  }
  body += '\n';
  const xrefAt = pdf.length + Buffer.byteLength(body, 'latin1');
  // A subsection per run of consecutive numbers; entries are exactly 20 bytes.
  let xref = 'xref\n0 1\n0000000000 65535 f\r\n';
  const sorted = [...offsets].sort(([a], [b]) => a - b);
  for (let i = 0; i < sorted.length; ) {
    let end = i + 1;
    while (end < sorted.length && sorted[end]?.[0] === (sorted[end - 1]?.[0] ?? 0) + 1) end++;
    xref += `${sorted[i]?.[0]} ${end - i}\n`;
    for (const [, at] of sorted.slice(i, end)) xref += `${String(at).padStart(10, '0')} 00000 n\r\n`;
    i = end;
  }
  const info = trailer.info === undefined ? '' : `\n/Info ${trailer.info} 0 R`;
  const update = `${body}${xref}trailer\n<</Size ${size}\n/Root ${trailer.root} 0 R${info}\n/Prev ${trailer.startxref}>>\nstartxref\n${xrefAt}\n%%EOF\n`;
  // Every character written is ASCII, or a byte of the file's own copied as Latin-1.
  return Buffer.concat([pdf, Buffer.from(update, 'latin1')]);
};
