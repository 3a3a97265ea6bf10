/**
 * The pdf_a step on what Chromium never writes but PDF/A forbids, in PDFs made here with
 * @cantoo/pdf-lib: JavaScript (a document open action, a link's action, page additional actions)
 * is removed, hidden annotations are shown and printed, and a font without its program is refused
 * with a message naming it. Checked with poppler's pdfinfo and qpdf, not with pdf-lib.
 */
import { PDFDocument, PDFName, PDFString } from '@cantoo/pdf-lib';
import { describe, expect, it } from 'vitest';
import { pdfA } from '../../functions/renderer/finishing/pdf-a.js';
import type { FinishingContext } from '../../functions/renderer/finishing/step.js';
import { pdfinfo, qpdfCheck, qpdfDict, qpdfJson } from '../helpers/pdf-readers.js';

const context = {
  request: { pdf_a: '2b' },
  log: { debug() {}, info() {}, warn() {}, error() {} },
  now: new Date('2026-11-28T12:00:00Z'),
} as unknown as FinishingContext;

/** A one-page PDF with JavaScript wherever an action may sit, and a hidden, unprintable link. */
const withJavaScript = async (): Promise<Uint8Array> => {
  const doc = await PDFDocument.create();
  const page = doc.addPage([200, 200]);
  const js = (code: string) => doc.context.obj({ S: 'JavaScript', JS: PDFString.of(code) });
  doc.catalog.set(PDFName.of('OpenAction'), js('app.alert(1)'));
  page.node.set(PDFName.of('AA'), doc.context.obj({ O: js('app.alert(2)') }));
  const link = doc.context.register(
    doc.context.obj({ Type: 'Annot', Subtype: 'Link', Rect: [0, 0, 50, 50], F: 2, A: js('app.alert(3)') }),
  );
  page.node.set(PDFName.of('Annots'), doc.context.obj([link]));
  return doc.save({ useObjectStreams: false });
};

describe('pdf_a on what PDF/A forbids', () => {
  it('removes JavaScript and shows and prints every annotation', async () => {
    const before = await withJavaScript();
    expect((await pdfinfo(before)).JavaScript).toBe('yes');
    const outcome = await pdfA(before, '2b', context);
    if (!outcome.ok) throw new Error(outcome.message);
    expect((await pdfinfo(outcome.pdf)).JavaScript).toBe('no');
    expect((await qpdfCheck(outcome.pdf)).code).toBe(0);
    const json = await qpdfJson(outcome.pdf);
    const catalog = qpdfDict(json, json.trailer['/Root']);
    expect(catalog['/OpenAction']).toBeUndefined();
    const page = qpdfDict(json, (qpdfDict(json, catalog['/Pages'])['/Kids'] as string[])[0]);
    expect(page['/AA']).toBeUndefined();
    const link = qpdfDict(json, (page['/Annots'] as string[])[0]);
    expect(link['/A']).toBeUndefined();
    expect(link['/F']).toBe(4);
  });

  it('refuses a font that is not embedded, naming it', async () => {
    const doc = await PDFDocument.create();
    const page = doc.addPage([200, 200]);
    // A TrueType font used by the page whose descriptor has no program (no FontFile2).
    const descriptor = doc.context.register(
      doc.context.obj({ Type: 'FontDescriptor', FontName: 'Arial', Flags: 32, ItalicAngle: 0 }),
    );
    const font = doc.context.register(
      doc.context.obj({ Type: 'Font', Subtype: 'TrueType', BaseFont: 'Arial', FontDescriptor: descriptor }),
    );
    page.node.set(PDFName.of('Resources'), doc.context.obj({ Font: { F1: font } }));
    const outcome = await pdfA(await doc.save({ useObjectStreams: false }), '2b', context);
    expect(outcome).toEqual({
      ok: false,
      code: 'PDF_RENDERING_FAILED',
      message: 'pdf_a: the font Arial is not embedded, which PDF/A forbids',
    });
  });
});
