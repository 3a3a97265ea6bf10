/**
 * The document information update (functions/renderer/pdf-metadata.ts) on hand-made PDFs written
 * as Chromium writes them (a classic cross-reference table, the Info dictionary in object 1),
 * read back with pdfjs-dist as a PDF reader would.
 */
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { describe, expect, it } from 'vitest';
import { pdfDate, stringToken, textString, withDocumentInfo } from '../../functions/renderer/pdf-metadata.js';
import { countPdfPages } from '../../functions/renderer/pdf-pages.js';

/** A one-page PDF whose Info dictionary is `info` (object 1). */
const chromiumLikePdf = (info = '<</Creator (Chromium)\n/Producer (Skia/PDF m143)>>'): Uint8Array => {
  const objects = [
    info,
    '<</Type /Catalog\n/Pages 3 0 R>>',
    '<</Type /Pages\n/Kids [4 0 R]\n/Count 1>>',
    '<</Type /Page\n/Parent 3 0 R\n/MediaBox [0 0 200 200]>>',
  ];
  let body = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f\r\n`;
  for (const at of offsets) body += `${String(at).padStart(10, '0')} 00000 n\r\n`;
  body += `trailer\n<</Size ${objects.length + 1}\n/Root 2 0 R\n/Info 1 0 R>>\nstartxref\n${xref}\n%%EOF`;
  return Buffer.from(body, 'latin1');
};

const infoOf = async (pdf: Uint8Array): Promise<Record<string, unknown>> => {
  const doc = await getDocument({ data: new Uint8Array(pdf).slice(), verbosity: 0, isEvalSupported: false })
    .promise;
  try {
    return (await doc.getMetadata()).info as Record<string, unknown>;
  } finally {
    await doc.destroy();
  }
};

const at = new Date('2026-11-21T10:15:07.849Z');

describe('withDocumentInfo', () => {
  it('sets title, author, subject, keywords and dates, and keeps the creator and producer', async () => {
    const pdf = withDocumentInfo(chromiumLikePdf(), {
      title: 'Quarterly report',
      author: 'Ada Lovelace',
      subject: 'Sales',
      keywords: ['sales', 'q3 2026'],
      creationDate: at,
    });
    expect(pdf).toBeDefined();
    expect(await infoOf(pdf as Uint8Array)).toMatchObject({
      Title: 'Quarterly report',
      Author: 'Ada Lovelace',
      Subject: 'Sales',
      Keywords: 'sales, q3 2026',
      Creator: 'Chromium',
      Producer: 'Skia/PDF m143',
      CreationDate: "D:20261121101507+00'00'",
      ModDate: "D:20261121101507+00'00'",
    });
  });

  it('appends to the file (an incremental update): the printed bytes stay as they were', () => {
    const original = chromiumLikePdf();
    const pdf = withDocumentInfo(original, { author: 'A', creationDate: at }) as Uint8Array;
    expect(Buffer.from(pdf.subarray(0, original.length)).equals(Buffer.from(original))).toBe(true);
    expect(pdf.length - original.length).toBeLessThan(1000);
    // The page tree is still found (through the fallback: the new section names only the Info).
    expect(countPdfPages(pdf)).toBe(1);
  });

  it('keeps the title Chromium took from <title> unless one is given, escapes and all', async () => {
    const original = chromiumLikePdf('<</Title (A \\(nested \\) (title\\)) \\\\ end)\n/Creator (Chromium)>>');
    expect((await infoOf(original)).Title).toBe('A (nested ) (title)) \\ end');
    const kept = withDocumentInfo(original, { author: 'A', creationDate: at }) as Uint8Array;
    expect((await infoOf(kept)).Title).toBe('A (nested ) (title)) \\ end');
    const replaced = withDocumentInfo(original, { title: 'New', creationDate: at }) as Uint8Array;
    expect((await infoOf(replaced)).Title).toBe('New');
  });

  it('writes any Unicode: accents, CJK, emoji, and characters PDF syntax would otherwise need escaped', async () => {
    const title = 'Rapport été 2026 — 報告書 📈 (draft) \\ <x> /y';
    const pdf = withDocumentInfo(chromiumLikePdf(), { title, creationDate: at }) as Uint8Array;
    expect((await infoOf(pdf)).Title).toBe(title);
  });

  it('leaves alone a file it cannot read: no classic trailer, or encrypted', () => {
    const noTrailer = Buffer.from('%PDF-1.5\n1 0 obj\n<</Type /XRef>>\nendobj\nstartxref\n9\n%%EOF');
    expect(withDocumentInfo(noTrailer, { creationDate: at })).toBeUndefined();
    const encrypted = Buffer.from(
      Buffer.from(chromiumLikePdf()).toString('latin1').replace('/Info 1 0 R', '/Info 1 0 R\n/Encrypt 9 0 R'),
      'latin1',
    );
    expect(withDocumentInfo(encrypted, { creationDate: at })).toBeUndefined();
  });
});

describe('PDF syntax helpers', () => {
  it('reads string tokens with nesting, escapes and hex', () => {
    expect(stringToken('(a (b) c) rest', 0)).toBe('(a (b) c)');
    expect(stringToken('(a \\) b) rest', 0)).toBe('(a \\) b)');
    expect(stringToken('<FEFF0041> rest', 0)).toBe('<FEFF0041>');
    expect(stringToken('(unterminated', 0)).toBeUndefined();
    expect(stringToken('/Name', 0)).toBeUndefined();
  });

  it('writes UTF-16BE text strings and UTC dates', () => {
    expect(textString('Aé')).toBe('<FEFF004100E9>');
    expect(textString('😀')).toBe('<FEFFD83DDE00>');
    expect(pdfDate(new Date('2026-01-02T03:04:05Z'))).toBe("(D:20260102030405+00'00')");
  });
});
