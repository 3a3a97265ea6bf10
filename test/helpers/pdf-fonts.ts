/**
 * Which font drew which glyph of a PDF, read with pdfjs-dist from the pages' drawing operators:
 *
 *   const glyphs = await readGlyphs(bytes);
 *   const missing = glyphs.filter(isMissingGlyph); // the empty boxes: .notdef drawn for a character no font had
 *   const byLine = glyphsAfterLabels(glyphs, ['ja', 'ko']); // test/fixtures/multilingual.ts's labels
 *
 * Chromium embeds TrueType fonts as CID fonts whose character codes are the font's glyph ids
 * (subset with the ids kept), so a code of 0 is glyph 0, .notdef: the box a font draws for a
 * character it does not have. Color emoji come as Type 3 fonts of bitmaps.
 */
import { getDocument, OPS } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { labelOf } from '../fixtures/multilingual.js';

export interface PdfGlyph {
  /** What the PDF maps the glyph to (its ToUnicode), normalised by pdfjs; may be empty. */
  readonly unicode: string;
  /** The character code: the glyph id, for Chromium's CID fonts. */
  readonly code: number;
  /** The embedded font's PostScript name, without the subset tag (`Tinos-Regular`). */
  readonly font: string;
  readonly type3: boolean;
  /** Advance width, 1/1000 em. */
  readonly width: number;
  readonly isSpace: boolean;
}

interface PdfjsGlyph {
  readonly unicode: string;
  readonly originalCharCode: number;
  readonly width: number;
  readonly isSpace: boolean;
}

interface PdfjsFont {
  readonly name?: string;
  readonly isType3Font?: boolean;
}

/** Every glyph the pages draw, in drawing order. */
export const readGlyphs = async (bytes: Uint8Array): Promise<PdfGlyph[]> => {
  const doc = await getDocument({
    data: new Uint8Array(bytes).slice(),
    verbosity: 0,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    fontExtraProperties: true,
  }).promise;
  try {
    const glyphs: PdfGlyph[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const ops = await page.getOperatorList();
      let font: PdfjsFont | undefined;
      ops.fnArray.forEach((fn, i) => {
        const args = ops.argsArray[i] as unknown[];
        if (fn === OPS.setFont) font = page.commonObjs.get(args[0] as string) as PdfjsFont;
        if (fn !== OPS.showText) return;
        for (const g of args[0] as unknown[]) {
          // Numbers in the array are spacing adjustments, not glyphs.
          if (typeof g !== 'object' || g === null) continue;
          const glyph = g as PdfjsGlyph;
          glyphs.push({
            unicode: glyph.unicode,
            code: glyph.originalCharCode,
            font: (font?.name ?? '').replace(/^[A-Z]{6}\+/, ''),
            type3: font?.isType3Font === true,
            width: glyph.width,
            isSpace: glyph.isSpace || glyph.unicode.trim() === '',
          });
        }
      });
    }
    return glyphs;
  } finally {
    await doc.destroy();
  }
};

/** A .notdef glyph of an outline font: a character no font had, printed as an empty box. */
export const isMissingGlyph = (g: PdfGlyph): boolean => !g.type3 && g.code === 0;

/**
 * The glyphs after each `@@key@@` label up to the next label, by key (spaces left out). Labels
 * are ASCII, drawn in one font, so they read back as written.
 */
export const glyphsAfterLabels = (
  glyphs: readonly PdfGlyph[],
  keys: readonly string[],
): Map<string, PdfGlyph[]> => {
  // The page's text, and for each of its characters the glyph it came from.
  let text = '';
  const glyphAt: number[] = [];
  glyphs.forEach((g, i) => {
    text += g.unicode;
    for (let c = 0; c < g.unicode.length; c++) glyphAt.push(i);
  });
  const found = keys.flatMap((key) => {
    const at = text.indexOf(labelOf(key));
    if (at < 0) return [];
    const last = glyphAt[at + labelOf(key).length - 1] as number;
    return [{ key, first: glyphAt[at] as number, after: last + 1 }];
  });
  found.sort((a, b) => a.first - b.first);
  return new Map(
    found.map((f, i) => [
      f.key,
      glyphs.slice(f.after, found[i + 1]?.first ?? glyphs.length).filter((g) => !g.isSpace),
    ]),
  );
};
