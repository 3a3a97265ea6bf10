/**
 * The renderer's fonts, through HTTP against the local stack (which uses the Chromium layer's
 * fonts and fonts.conf, linked from node_modules: lib/layer-fonts.ts): a page in every script the
 * service covers prints every character with a real glyph of the font meant for its script, and
 * the common web families print in their metric-compatible stand-ins. Read back from the PDF's
 * drawing operators (test/helpers/pdf-fonts.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { LAYER_FONTS } from '../../lib/layer-fonts.js';
import { METRIC_SAMPLES, metricsHtml, multilingualHtml, SCRIPT_SAMPLES } from '../fixtures/multilingual.js';
import { useLocalStack } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';
import { glyphsAfterLabels, isMissingGlyph, type PdfGlyph, readGlyphs } from '../helpers/pdf-fonts.js';

const local = useLocalStack();

const renderPdf = async (html: string): Promise<Uint8Array> => {
  const token = await local.sessionToken();
  const res = await local.api('/v1/pdf', { method: 'POST', token, body: { html } });
  expect(res.status, res.text).toBe(201);
  const download = await fetch(res.json.download_url);
  expect(download.status).toBe(200);
  return new Uint8Array(await download.arrayBuffer());
};

/** The PostScript names of the shipped fonts: the family without spaces, then the style. */
const SHIPPED = new RegExp(
  `^(${LAYER_FONTS.map((f) => f.family.replace(/ /g, '')).join('|')})(-(Regular|Bold|Italic|BoldItalic))?$`,
);

const fontsOf = (glyphs: readonly PdfGlyph[]): string[] => [...new Set(glyphs.map((g) => g.font))].sort();

describe('a page in the world’s scripts, rendered over HTTP', () => {
  let glyphs: PdfGlyph[];
  let bytes: Uint8Array;

  beforeAll(async () => {
    bytes = await renderPdf(multilingualHtml());
    glyphs = await readGlyphs(bytes);
  });

  it('prints one page with no empty boxes: every glyph is a real glyph of a shipped font', async () => {
    expect((await readPdf(bytes)).pageCount).toBe(1);
    expect(glyphs.length).toBeGreaterThan(200);
    expect(glyphs.filter(isMissingGlyph).map((g) => `${g.font} ${JSON.stringify(g.unicode)}`)).toEqual([]);
    for (const font of fontsOf(glyphs)) expect(font).toMatch(SHIPPED);
  });

  it.each(SCRIPT_SAMPLES.map((s) => [s.key, s] as const))('draws %s with its font', (key, sample) => {
    const line = glyphsAfterLabels(glyphs, [...SCRIPT_SAMPLES.map((s) => s.key)]).get(key);
    expect(line?.length, `glyphs after the ${key} label`).toBeGreaterThan(0);
    expect(fontsOf(line ?? []), sample.text).toEqual([expect.stringMatching(sample.font)]);
    expect(line?.some(isMissingGlyph)).toBe(false);
  });

  it('prints emoji in color: bitmap glyphs, one per emoji (sequences, flags and skin tones included)', () => {
    const emoji =
      glyphsAfterLabels(
        glyphs,
        SCRIPT_SAMPLES.map((s) => s.key),
      ).get('emoji') ?? [];
    expect(emoji.every((g) => g.type3)).toBe(true);
    // 😀 🎉 👍🏽 🇯🇵 ❤️ 👩‍💻: six emoji, each one glyph (the last three are sequences of code points).
    expect(emoji).toHaveLength(6);
  });

  it('keeps the text: the scripts drawn a glyph per character read back from the PDF', async () => {
    // pdfjs maps glyphs back through the PDF's ToUnicode maps: compare after NFKC, which folds the
    // compatibility forms some fonts list first (⽇ for 日). Shaped scripts (Arabic, the Indic
    // scripts, Thai) draw ligatures, conjuncts and positioned marks that map back to no single
    // character, so their text cannot read back whole.
    const text = (await readPdf(bytes)).text.normalize('NFKC');
    const whole = ['latin', 'greek', 'cyrillic', 'ja', 'zh-cn', 'zh-tw', 'ko', 'he'];
    for (const sample of SCRIPT_SAMPLES.filter((s) => whole.includes(s.key))) {
      expect(text, sample.key).toContain(sample.text.normalize('NFKC'));
    }
  });
});

describe('the common web families', () => {
  it('print in metric-compatible fonts with the named fonts’ widths', async () => {
    const glyphs = await readGlyphs(await renderPdf(metricsHtml()));
    expect(glyphs.filter(isMissingGlyph)).toEqual([]);
    const lines = glyphsAfterLabels(
      glyphs,
      METRIC_SAMPLES.map((s) => s.key),
    );
    for (const sample of METRIC_SAMPLES) {
      const line = lines.get(sample.key) ?? [];
      expect(line.map((g) => g.unicode).join(''), sample.key).toBe('Hello');
      expect(fontsOf(line), sample.key).toEqual([expect.stringMatching(sample.font)]);
      if (sample.widths) {
        expect(
          line.map((g) => Math.round(g.width)),
          sample.key,
        ).toEqual(sample.widths);
      }
    }
  });
});
