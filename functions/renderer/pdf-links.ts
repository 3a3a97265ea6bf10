/**
 * Links in a printed PDF are safe by allow-list: a link annotation stays live only when it goes
 * to an `http:`, `https:` or `mailto:` address or to a place in the document (a named or explicit
 * destination, a GoTo action). Any other annotation action (another scheme such as `javascript:`,
 * `file:` or `smb:`; Launch, JavaScript, GoToR; an action we cannot read) is removed from its
 * page, and its action is blanked where it stands, so that no viewer can follow it. The text of
 * the link stays.
 *
 * Why the PDF and not the HTML: what the viewer follows is what the PDF holds. A page can add a
 * link while it prints (a `beforeprint` handler, a shadow root, SVG's `<a>`), and Chromium decides
 * how an href is resolved; reading the annotations it wrote closes all of those at once.
 *
 * How: Chromium (Skia) writes a classic cross-reference table, pages with an inline `/Annots`
 * array of references, and one small dictionary per annotation. Objects are found through the
 * xref offsets (never by searching, so the document's own bytes cannot pose as them) and edited in
 * place with spaces of the same length, so every offset stays valid and nothing is appended.
 * Measured on the 30-page report: well under a millisecond; the cost is the page-tree walk.
 */
import { objectOffset, text } from './pdf-pages.js';

/** The schemes a link in a PDF may keep. */
const ALLOWED_SCHEMES = new Set(['http', 'https', 'mailto']);

/** What was removed: the link target as written (cut), for the render's diagnostics. */
export interface RemovedLink {
  readonly target: string;
  readonly page: number;
}

const MAX_OBJECT_BYTES = 1 << 20;
const MAX_PAGES = 100_000;
const SPACE = 0x20;

interface PdfObject {
  /** Byte offset of the object's first byte. */
  readonly at: number;
  /** From `N G obj` to just before `endobj`. */
  readonly body: string;
}

const readObject = (pdf: Uint8Array, xref: number, num: number): PdfObject | undefined => {
  const at = objectOffset(pdf, xref, num);
  if (at === undefined) return undefined;
  // Small objects first: annotation and page dictionaries are a few hundred bytes.
  for (let window = 4096; ; window *= 16) {
    const body = text(pdf, at, at + window);
    if (!new RegExp(`^${num}\\s+\\d+\\s+obj\\b`).test(body)) return undefined;
    const end = body.indexOf('endobj');
    if (end >= 0) return { at, body: body.slice(0, end) };
    if (window >= MAX_OBJECT_BYTES || at + window >= pdf.length) return undefined;
  }
};

/** The dictionary text of a PDF literal `( … )` or hex `< … >` string starting at `from`. */
const stringAt = (source: string, from: number): { raw: string; value: string } | undefined => {
  if (source[from] === '<') {
    const end = source.indexOf('>', from);
    if (end < 0) return undefined;
    const hex = source.slice(from + 1, end).replace(/\s+/g, '');
    if (!/^[0-9A-Fa-f]*$/.test(hex)) return undefined;
    const padded = hex.length % 2 ? `${hex}0` : hex;
    return { raw: source.slice(from, end + 1), value: Buffer.from(padded, 'hex').toString('latin1') };
  }
  if (source[from] !== '(') return undefined;
  let depth = 0;
  let value = '';
  for (let i = from; i < source.length; i++) {
    const c = source[i] as string;
    if (c === '\\') {
      const next = source[i + 1] ?? '';
      const octal = /^[0-7]{1,3}/.exec(source.slice(i + 1, i + 4));
      if (octal) {
        value += String.fromCharCode(Number.parseInt(octal[0], 8) & 0xff);
        i += octal[0].length;
      } else if (next === '\r' || next === '\n') {
        i += next === '\r' && source[i + 2] === '\n' ? 2 : 1; // a line continuation
      } else {
        value += { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f' }[next] ?? next;
        i += 1;
      }
      continue;
    }
    if (c === '(') {
      depth++;
      if (depth === 1) continue;
    } else if (c === ')') {
      depth--;
      if (depth === 0) return { raw: source.slice(from, i + 1), value };
    }
    value += c;
  }
  return undefined;
};

/**
 * The scheme of a URI as a viewer would read it: leading spaces and control characters are
 * skipped and tabs and newlines inside it dropped (as URL parsers do), lower-cased.
 */
export const uriScheme = (uri: string): string | undefined => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: C0 controls are what URL parsers strip
  const cleaned = uri.replace(/^[\x00-\x20]+/, '').replace(/[\t\n\r]/g, '');
  return /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(cleaned)?.[1]?.toLowerCase();
};

/** The balanced `<< … >>` dictionary that starts at `from`. */
const dictionaryEnd = (source: string, from: number): number | undefined => {
  let depth = 0;
  for (let i = from; i < source.length - 1; i++) {
    if (source[i] === '(') {
      const s = stringAt(source, i);
      if (!s) return undefined;
      i += s.raw.length - 1;
    } else if (source[i] === '<' && source[i + 1] === '<') {
      depth++;
      i++;
    } else if (source[i] === '>' && source[i + 1] === '>') {
      depth--;
      i++;
      if (depth === 0) return i + 1;
    }
  }
  return undefined;
};

type Verdict = { readonly safe: true } | { readonly safe: false; readonly target: string };

/** Whether an annotation's action (and additional actions) may stay. */
const judge = (annotation: string): Verdict => {
  if (/\/AA\b/.test(annotation)) return { safe: false, target: 'additional actions' };
  const action = /\/A\s*(<<|\d+\s+\d+\s+R)/.exec(annotation);
  if (!action) return { safe: true }; // no action: a /Dest link, or no link at all
  if (action[1] !== '<<') return { safe: false, target: 'indirect action' };
  const start = action.index + action[0].length - 2;
  const end = dictionaryEnd(annotation, start);
  if (end === undefined) return { safe: false, target: 'unreadable action' };
  const dict = annotation.slice(start, end);
  const kind = /\/S\s*\/([A-Za-z]+)/.exec(dict)?.[1];
  if (kind === 'GoTo' && !/\/Next\b/.test(dict)) return { safe: true };
  if (kind !== 'URI' || /\/Next\b/.test(dict)) return { safe: false, target: `${kind ?? 'unknown'} action` };
  const uri = /\/URI\s*(?=[(<])/.exec(dict);
  const value = uri ? stringAt(dict, uri.index + uri[0].length)?.value : undefined;
  if (value === undefined) return { safe: false, target: 'unreadable URI' };
  const scheme = uriScheme(value);
  return scheme !== undefined && ALLOWED_SCHEMES.has(scheme)
    ? { safe: true }
    : { safe: false, target: value.slice(0, 300) };
};

const blank = (pdf: Uint8Array, from: number, length: number): void => {
  pdf.fill(SPACE, from, from + length);
};

/** Blank the annotation's /A and /AA entries where they stand (defence in depth). */
const blankActions = (pdf: Uint8Array, annotation: PdfObject): void => {
  const { body, at } = annotation;
  for (const match of body.matchAll(/\/AA?\s*(?=<<|\d+\s+\d+\s+R)/g)) {
    const valueAt = match.index + match[0].length;
    const ref = /^\d+\s+\d+\s+R/.exec(body.slice(valueAt));
    const end = ref ? valueAt + ref[0].length : dictionaryEnd(body, valueAt);
    if (end !== undefined) blank(pdf, at + match.index, end - match.index);
  }
};

const trailerOf = (pdf: Uint8Array): { xref: number; root: number } | undefined => {
  const tail = text(pdf, Math.max(0, pdf.length - 1024), pdf.length);
  const startxref = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(tail);
  const trailer = tail.lastIndexOf('trailer');
  if (!startxref || trailer < 0 || /\/(Encrypt|XRefStm|Prev)\b/.test(tail.slice(trailer))) return undefined;
  const root = /\/Root\s+(\d+)\s+\d+\s+R/.exec(tail.slice(trailer));
  return root ? { xref: Number(startxref[1]), root: Number(root[1]) } : undefined;
};

/** The page objects in document order (page-tree leaves), or undefined when the tree is unreadable. */
const pagesOf = (pdf: Uint8Array, xref: number, root: number): PdfObject[] | undefined => {
  const catalog = readObject(pdf, xref, root);
  const pagesRef = catalog && /\/Pages\s+(\d+)\s+\d+\s+R/.exec(catalog.body);
  if (!pagesRef) return undefined;
  const pages: PdfObject[] = [];
  const seen = new Set<number>();
  const walk = (num: number): boolean => {
    if (seen.has(num) || seen.size > MAX_PAGES) return false;
    seen.add(num);
    const node = readObject(pdf, xref, num);
    if (!node) return false;
    if (/\/Type\s*\/Pages\b/.test(node.body)) {
      const kids = /\/Kids\s*\[([^\]]*)\]/.exec(node.body);
      if (!kids?.[1]) return false;
      return [...kids[1].matchAll(/(\d+)\s+\d+\s+R/g)].every((k) => walk(Number(k[1])));
    }
    if (!/\/Type\s*\/Page\b/.test(node.body)) return false;
    pages.push(node);
    return true;
  };
  return walk(Number(pagesRef[1])) ? pages : undefined;
};

/**
 * Removes every link annotation the allow-list refuses, editing `pdf` in place. Answers what was
 * removed, or undefined when the file is not one this reader can walk (not Skia's layout): the
 * caller must then refuse the PDF rather than pass it on unchecked.
 */
export const removeUnsafeLinks = (pdf: Uint8Array): RemovedLink[] | undefined => {
  const trailer = trailerOf(pdf);
  if (!trailer) return undefined;
  const pages = pagesOf(pdf, trailer.xref, trailer.root);
  if (!pages) return undefined;
  const removed: RemovedLink[] = [];
  for (const [index, page] of pages.entries()) {
    const annots = /\/Annots\s*(\[([^\]]*)\]|\d+\s+\d+\s+R)/.exec(page.body);
    if (!annots) continue;
    // Skia writes the array inline; an indirect one is not its layout, so it is not trusted.
    const [whole, value, list] = annots;
    if (list === undefined || value === undefined) return undefined;
    const listAt = annots.index + whole.length - value.length + 1;
    for (const ref of list.matchAll(/(\d+)\s+\d+\s+R/g)) {
      const annotation = readObject(pdf, trailer.xref, Number(ref[1]));
      const verdict: Verdict = annotation
        ? judge(annotation.body)
        : { safe: false, target: 'unreadable annotation' };
      if (verdict.safe) continue;
      blank(pdf, page.at + listAt + ref.index, ref[0].length);
      if (annotation) blankActions(pdf, annotation);
      removed.push({ target: verdict.target, page: index + 1 });
    }
  }
  return removed;
};
