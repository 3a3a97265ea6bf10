/**
 * A small, valid PDF from HTML's text, for the memory renderer (renderer.ts): one Helvetica text
 * stream a page, on the paper the request names, with the request's document information. It
 * draws no layout: it keeps the text, the page size and the page breaks the HTML asks for
 * (`break-before: page`, `break-after: page` or their `page-break-*: always` forms), which is what
 * the domain and a test can see of a PDF. Poppler and pdf.js read it.
 */
import type { PaperFormat, PdfMetadata } from '../../domain/common/ports.js';

/** Portrait sizes in points, as Chromium prints them (within 1 pt). */
const PAPER_PT: Readonly<Record<PaperFormat, readonly [number, number]>> = {
  A3: [842, 1191],
  A4: [595, 842],
  A5: [420, 595],
  LETTER: [612, 792],
  LEGAL: [612, 1008],
};

const LINE_CHARS = 90;
const LINES_PER_PAGE = 60;
const BLOCK =
  /<\/?(?:p|div|h[1-6]|li|tr|br|table|section|article|header|footer|ul|ol|pre|blockquote)\b[^>]*>/gi;
const BREAK_BEFORE = /<[a-z][^>]*(?:break-before\s*:\s*page|page-break-before\s*:\s*always)[^>]*>/gi;
const BREAK_AFTER =
  /<[a-z][^>]*(?:break-after\s*:\s*page|page-break-after\s*:\s*always)[^>]*>[^<]*(?:<\/[a-z0-9]+\s*>)?/gi;
const ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
};

/** The HTML's visible text, its blocks on lines of their own. */
export const htmlText = (html: string): string[] =>
  html
    .replace(/<(script|style|head|title)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, '')
    .replace(BLOCK, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name: string) => {
      if (name[0] === '#') {
        const code =
          name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
        return Number.isFinite(code) ? String.fromCodePoint(code) : whole;
      }
      return ENTITIES[name.toLowerCase()] ?? whole;
    })
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter((line) => line.length > 0);

/** The HTML cut where it asks for a page break. */
const pagesOf = (html: string): string[] =>
  html
    .replace(BREAK_AFTER, (m) => `${m}\f`)
    .replace(BREAK_BEFORE, (m) => `\f${m}`)
    .split('\f');

const wrap = (line: string): string[] => {
  const out: string[] = [];
  for (let rest = line; rest.length > 0; rest = rest.slice(LINE_CHARS)) out.push(rest.slice(0, LINE_CHARS));
  return out;
};

/** A PDF literal string in WinAnsi (Latin-1 here); what it cannot hold becomes '?'. */
const literal = (text: string): string =>
  `(${[...text]
    .map((c) => (c.charCodeAt(0) > 0xff || c.length > 1 ? '?' : c))
    .join('')
    .replace(/[\\()]/g, (c) => `\\${c}`)
    .replace(/[\r\n]/g, ' ')})`;

/** A PDF text string: UTF-16BE with its byte order mark, in hex. */
const textString = (text: string): string => {
  let hex = 'FEFF';
  for (let i = 0; i < text.length; i++) hex += text.charCodeAt(i).toString(16).padStart(4, '0');
  return `<${hex.toUpperCase()}>`;
};

const pdfDate = (at: Date): string => `D:${at.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;

export interface PdfDocumentOptions {
  readonly format: PaperFormat;
  readonly landscape: boolean;
  readonly metadata?: PdfMetadata;
  readonly createdAt: Date;
}

/** The PDF of `html`'s text, a page for each page it asks for (and more where its text is long). */
export const pdfDocument = (html: string, options: PdfDocumentOptions): Uint8Array => {
  const [w, h] = PAPER_PT[options.format];
  const [width, height] = options.landscape ? [h, w] : [w, h];
  const pages: string[][] = [];
  for (const part of pagesOf(html)) {
    const lines = htmlText(part).flatMap(wrap);
    if (lines.length === 0) pages.push([]);
    for (let i = 0; i < lines.length; i += LINES_PER_PAGE) pages.push(lines.slice(i, i + LINES_PER_PAGE));
  }
  if (pages.length === 0) pages.push([]);

  // Objects: 1 catalog, 2 pages, 3 font, 4 info, then a page and its content per page.
  const objects: string[] = [];
  const pageIds = pages.map((_, i) => 5 + 2 * i);
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>';
  const m = options.metadata ?? {};
  const info: string[] = [
    `/Producer ${literal('memory renderer')}`,
    `/CreationDate (${pdfDate(options.createdAt)})`,
  ];
  if (m.title !== undefined) info.push(`/Title ${textString(m.title)}`);
  if (m.author !== undefined) info.push(`/Author ${textString(m.author)}`);
  if (m.subject !== undefined) info.push(`/Subject ${textString(m.subject)}`);
  if (m.keywords !== undefined && m.keywords.length > 0)
    info.push(`/Keywords ${textString(m.keywords.join(', '))}`);
  objects[4] = `<< ${info.join(' ')} >>`;
  pages.forEach((lines, i) => {
    const id = pageIds[i] as number;
    const text = lines
      .map((line, n) => `1 0 0 1 36 ${height - 48 - 12 * n} Tm ${literal(line)} Tj`)
      .join('\n');
    const stream = `BT /F1 10 Tf\n${text}\nET`;
    objects[id] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${width} ${height}] ` +
      `/Resources << /Font << /F1 3 0 R >> >> /Contents ${id + 1} 0 R >>`;
    objects[id + 1] = `<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`;
  });

  let out = '%PDF-1.7\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = Buffer.byteLength(out, 'latin1');
    out += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++) out += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R /Info 4 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(out, 'latin1'));
};
