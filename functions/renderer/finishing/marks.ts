/**
 * Watermarks and stamps (issue 34; domain/renders/marks.ts): text or an image drawn on the pages
 * asked, under the page's content (a watermark's content stream goes first) or over it (a stamp's
 * goes last, after Chromium's content is wrapped in q/Q so that what it leaves in the graphics
 * state cannot move the stamp). Added by an incremental update with a classic cross-reference
 * section, so Chromium's own objects are kept byte for byte and the steps after it (the document
 * information's incremental update) read the file as before.
 *
 * Text is real text: each run of characters in the first of the service's own fonts (the Noto
 * faces the Chromium layer ships, found beside FONTCONFIG_FILE) that has all of them, embedded as
 * a subset through fontkit. @cantoo/pdf-lib over pdf-lib 1.17 (measured, issue 34): the same
 * output, 38-62 ms against 81-175 ms on the one-page invoice with a Noto Sans subset (2 busy
 * cores), encryption in the same library, and 442 KiB gzipped in the bundle against 580 KiB.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fontkit from '@cantoo/fontkit';
import {
  degrees,
  PDFDict,
  PDFDocument,
  type PDFFont,
  type PDFImage,
  PDFName,
  type PDFPage,
  PDFRef,
  rgb,
} from '@cantoo/pdf-lib';
import { decodeHTML } from 'entities';
import { pagesOf } from '../../domain/renders/marks.js';
import type { PdfMark } from '../contract.js';
import type { FinishingContext, StepOutcome } from './step.js';

/** Half an inch between a mark placed at an edge and the paper's edge. */
const EDGE_POINTS = 36;

/** The service's regular faces, in the order they are tried: Latin, Greek, Cyrillic first. */
const FACES = [
  'NotoSans',
  'NotoSansArabic',
  'NotoSansHebrew',
  'NotoSansDevanagari',
  'NotoSansBengali',
  'NotoSansTamil',
  'NotoSansThai',
  'NotoSansSC',
  'NotoSansJP',
  'NotoSansKR',
  'NotoSansTC',
];

interface Face {
  readonly bytes: Uint8Array;
  readonly has: (codePoint: number) => boolean;
}

/** Faces by file, read once per process (the Lambda keeps them across warm renders). */
const faceByPath = new Map<string, Face>();

const faceAt = (path: string): Face => {
  const known = faceByPath.get(path);
  if (known) return known;
  const bytes = readFileSync(path);
  const font = fontkit.create(bytes) as { hasGlyphForCodePoint(cp: number): boolean };
  const face: Face = { bytes, has: (cp) => font.hasGlyphForCodePoint(cp) };
  faceByPath.set(path, face);
  return face;
};

/**
 * FACES in order, each from the first directory that has it: the layer's fonts, then those
 * fetched on first need (fetched-fonts.ts: the CJK fonts the layer leaves out), listed on each
 * call as they land.
 */
const facesIn = (dirs: readonly string[]): readonly Face[] => {
  const listed = dirs.map((dir) => ({ dir, files: new Set(existsSync(dir) ? readdirSync(dir) : []) }));
  return FACES.map((f) => `${f}_400Regular.ttf`).flatMap((file) => {
    const found = listed.find((l) => l.files.has(file));
    return found ? [faceAt(join(found.dir, file))] : [];
  });
};

/** The text cut into runs, each in the first face that has all its characters (spaces join any run). */
const runsOf = (text: string, faces: readonly Face[]): { face: Face; text: string }[] => {
  const runs: { face: Face; text: string }[] = [];
  for (const char of text) {
    const cp = char.codePointAt(0) ?? 0;
    const last = runs.at(-1);
    if (last && (/\s/u.test(char) || last.face.has(cp))) {
      last.text += char;
      continue;
    }
    const face = faces.find((f) => f.has(cp)) ?? (faces[0] as Face);
    runs.push({ face, text: char });
  }
  return runs;
};

const colorOf = (hex: string) =>
  rgb(
    Number.parseInt(hex.slice(1, 3), 16) / 255,
    Number.parseInt(hex.slice(3, 5), 16) / 255,
    Number.parseInt(hex.slice(5, 7), 16) / 255,
  );

/** What is drawn: a box of `width` x `height` points, drawn from its own bottom-left corner. */
interface Drawing {
  readonly width: number;
  readonly height: number;
  readonly draw: (page: PDFPage, at: { x: number; y: number }, rotation: number) => void;
}

const textDrawing = async (
  document: PDFDocument,
  mark: PdfMark,
  text: string,
  faces: readonly Face[],
): Promise<Drawing> => {
  const embedded = new Map<Face, PDFFont>();
  const runs: { font: PDFFont; text: string; width: number }[] = [];
  for (const run of runsOf(text, faces)) {
    let font = embedded.get(run.face);
    if (!font) {
      font = await document.embedFont(run.face.bytes, { subset: true });
      embedded.set(run.face, font);
    }
    runs.push({ font, text: run.text, width: font.widthOfTextAtSize(run.text, mark.fontSize) });
  }
  const size = mark.fontSize;
  const color = colorOf(mark.color);
  // The baseline sits under the box's middle by about a third of the size (Noto's x-height).
  const baseline = size * 0.3;
  return {
    width: runs.reduce((sum, r) => sum + r.width, 0),
    height: size,
    draw: (page, at, rotation) => {
      const cos = Math.cos(rotation);
      const sin = Math.sin(rotation);
      let advance = 0;
      for (const run of runs) {
        const dx = advance;
        const dy = size / 2 - baseline;
        page.drawText(run.text, {
          x: at.x + dx * cos - dy * sin,
          y: at.y + dx * sin + dy * cos,
          size,
          font: run.font,
          color,
          opacity: mark.opacity,
          rotate: degrees((rotation * 180) / Math.PI),
        });
        advance += run.width;
      }
    },
  };
};

const imageDrawing = async (
  document: PDFDocument,
  page: PDFPage,
  uri: string,
  mark: PdfMark,
): Promise<Drawing> => {
  const [head, data = ''] = uri.split(',', 2);
  const bytes = Buffer.from(data, 'base64');
  const image: PDFImage = head?.startsWith('data:image/png')
    ? await document.embedPng(bytes)
    : await document.embedJpg(bytes);
  // 72 dpi, shrunk to fit the page inside its edges.
  const room = Math.min(
    1,
    (page.getWidth() - 2 * EDGE_POINTS) / image.width,
    (page.getHeight() - 2 * EDGE_POINTS) / image.height,
  );
  const width = image.width * room;
  const height = image.height * room;
  return {
    width,
    height,
    draw: (p, at, rotation) =>
      p.drawImage(image, {
        x: at.x,
        y: at.y,
        width,
        height,
        opacity: mark.opacity,
        rotate: degrees((rotation * 180) / Math.PI),
      }),
  };
};

/** The bottom-left corner (before rotation) that puts the rotated box where `position` says. */
const origin = (page: PDFPage, mark: PdfMark, box: Drawing, rotation: number) => {
  const cos = Math.cos(rotation);
  const sin = Math.sin(rotation);
  const halfX = (Math.abs(box.width * cos) + Math.abs(box.height * sin)) / 2;
  const halfY = (Math.abs(box.width * sin) + Math.abs(box.height * cos)) / 2;
  const { width, height } = page.getSize();
  const p = mark.position;
  const cx = p.endsWith('left')
    ? EDGE_POINTS + halfX
    : p.endsWith('right')
      ? width - EDGE_POINTS - halfX
      : width / 2;
  const cy = p.startsWith('top')
    ? height - EDGE_POINTS - halfY
    : p.startsWith('bottom')
      ? EDGE_POINTS + halfY
      : height / 2;
  // The box's centre is (w/2, h/2) from its corner, turned by the rotation.
  return {
    x: cx - ((box.width / 2) * cos - (box.height / 2) * sin),
    y: cy - ((box.width / 2) * sin + (box.height / 2) * cos),
  };
};

/** The page's Contents as an array, q before and Q after what it had: its state cannot leak into a stamp. */
const isolateContent = (document: PDFDocument, page: PDFPage): void => {
  page.node.normalize();
  const context = document.context;
  const q = context.register(context.flateStream('q\n'));
  const Q = context.register(context.flateStream('\nQ\n'));
  page.node.wrapContentStreams(q, Q);
};

/** The last content stream of the page (the mark just drawn) moved first: under everything else. */
const sendToBack = (page: PDFPage): void => {
  const contents = page.node.Contents();
  if (!contents || !('insert' in contents)) return;
  const last = contents.size() - 1;
  const mark = contents.get(last);
  contents.remove(last);
  contents.insert(0, mark);
  page.node.set(PDFName.of('Contents'), contents);
};

/** Draws `mark` (`layer`: under or over the content) on the pages it names. */
export const drawMark = async (
  pdf: Uint8Array,
  mark: PdfMark,
  field: 'watermark' | 'stamp',
  context: FinishingContext,
): Promise<StepOutcome> => {
  // Not loaded `forIncrementalUpdate`: there every change looks its object up among all the
  // document's (measured on the bench's 3.5 MiB report: 4.9 s to draw on its 28 pages, 43 ms this
  // way). The increment is the pages drawn on and the objects made, marked here.
  const document = await PDFDocument.load(pdf, { updateMetadata: false });
  const increment = document.takeSnapshot();
  document.registerFontkit(fontkit);
  const pages = document.getPages();
  const chosen = pagesOf(mark.pages, pages.length);
  if ('beyond' in chosen) {
    return {
      ok: false,
      code: 'INVALID_PDF_OPTIONS',
      message: `${field}.pages names page ${chosen.beyond}, but the PDF has ${pages.length} page${pages.length === 1 ? '' : 's'}.`,
    };
  }
  const first = pages[0];
  if (!first) return { ok: true, pdf };
  let drawing: Drawing;
  if (mark.image !== null) drawing = await imageDrawing(document, first, mark.image, mark);
  else {
    if (!context.fontsDir) {
      return { ok: false, code: 'PDF_RENDERING_FAILED', message: `The ${field} has no font to be drawn in.` };
    }
    // The text as templated (autoescaped, as HTML): back to the plain text it is.
    const text = decodeHTML(context.templated[field] ?? mark.text ?? '');
    drawing = await textDrawing(
      document,
      mark,
      text,
      facesIn([context.fontsDir, ...(context.fetchedFontsDirs ?? [])]),
    );
  }
  const rotation = (mark.rotationDeg * Math.PI) / 180;
  for (const [i, page] of pages.entries()) {
    if (!chosen.pages.has(i + 1)) continue;
    if (field === 'stamp') isolateContent(document, page);
    drawing.draw(page, origin(page, mark, drawing, rotation), rotation);
    if (field === 'watermark') sendToBack(page);
    markDrawnOn(increment, page);
  }
  const appended = await document.saveIncremental(increment, { useObjectStreams: false });
  const finished = new Uint8Array(pdf.byteLength + appended.byteLength);
  finished.set(pdf);
  finished.set(appended, pdf.byteLength);
  return { ok: true, pdf: finished };
};

/** The page and what drawing may have changed of its resources, when they are objects of their own. */
const markDrawnOn = (increment: ReturnType<PDFDocument['takeSnapshot']>, page: PDFPage): void => {
  increment.markRefForSave(page.ref);
  const resources = page.node.get(PDFName.of('Resources'));
  if (resources instanceof PDFRef) increment.markRefForSave(resources);
  const dict = page.node.Resources();
  if (!(dict instanceof PDFDict)) return;
  for (const kind of ['Font', 'XObject', 'ExtGState']) {
    const entry = dict.get(PDFName.of(kind));
    if (entry instanceof PDFRef) increment.markRefForSave(entry);
  }
};
