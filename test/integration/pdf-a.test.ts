/**
 * `pdf_a` over HTTP against the real local stack: each structural requirement of PDF/A-2b and -3b
 * (ISO 19005-2/-3) that this service meets, checked one by one on the downloaded file with real
 * readers (poppler's pdfinfo and pdffonts, qpdf's --check and --json). No veraPDF runs here: what
 * is checked is what is listed, not full conformance.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, useLocalStack } from '../helpers/local-stack.js';
import {
  pdffonts,
  pdfinfo,
  pdfinfoMeta,
  type QpdfJson,
  qpdfCheck,
  qpdfDict,
  qpdfJson,
} from '../helpers/pdf-readers.js';
import { newAccount, type TestAccount } from '../helpers/template-fixtures.js';

const local = useLocalStack();

let account: TestAccount;
beforeAll(async () => {
  account = await newAccount(local, 'pdfa');
});

const render = (body: Record<string, unknown>) =>
  local.api('/v1/pdf', { method: 'POST', token: account.session, body });

const download = async (res: ApiResponse): Promise<Uint8Array> => {
  expect(res.status, res.text).toBe(201);
  const bytes = new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer());
  expect(bytes.length).toBe(res.json.file_size_bytes);
  return bytes;
};

const DOCUMENT = `<html lang="en"><head><title>Archive {{ n }}</title></head><body>
<h1>Annual report {{ n }}</h1><p>See <a href="https://example.com/terms">the terms</a> and <a href="#part-2">part 2</a>. Ünïcödé € — 日本</p>
<h2>Part 1</h2><table><tr><th>Item</th><th>Price</th></tr><tr><td>Pens</td><td>3.50</td></tr></table>
<h2 id="part-2" style="break-before: page">Part 2</h2><p><b>Bold</b> and <i>italic</i> text.</p>
</body></html>`;

/** Every annotation dictionary of every page. */
const annotationsOf = (json: QpdfJson): Record<string, unknown>[] =>
  Object.values(json.objects)
    .map((o) => (o.value ?? o.stream?.dict) as Record<string, unknown> | undefined)
    .filter((d): d is Record<string, unknown> => d?.['/Type'] === '/Annot' || d?.['/Subtype'] === '/Link');

const catalogOf = (json: QpdfJson) => qpdfDict(json, json.trailer['/Root']);

describe('pdf_a', () => {
  let pdf: Uint8Array;
  beforeAll(async () => {
    pdf = await download(
      await render({
        html: DOCUMENT,
        variables: { n: 2026 },
        pdf_a: '2b',
        tagged: true,
        outline: true,
        metadata: { author: 'Ada Lovelace', subject: 'Annual report', keywords: ['archive', 'report'] },
      }),
    );
  });

  it('identifies the file as PDF/A-2b in its XMP metadata, mirroring the document information', async () => {
    const xmp = await pdfinfoMeta(pdf);
    expect(xmp).toMatch(/<pdfaid:part>2<\/pdfaid:part>/);
    expect(xmp).toMatch(/<pdfaid:conformance>B<\/pdfaid:conformance>/);
    const info = await pdfinfo(pdf);
    expect(info.Title).toBe('Archive 2026');
    expect(info.Author).toBe('Ada Lovelace');
    expect(xmp).toContain('<rdf:li xml:lang="x-default">Archive 2026</rdf:li>');
    expect(xmp).toContain('<rdf:li>Ada Lovelace</rdf:li>');
    expect(xmp).toContain('<rdf:li xml:lang="x-default">Annual report</rdf:li>');
    expect(xmp).toContain('<pdf:Keywords>archive, report</pdf:Keywords>');
    expect(xmp).toContain(`<pdf:Producer>${info.Producer}</pdf:Producer>`);
    expect(xmp).toContain(`<xmp:CreatorTool>${info.Creator}</xmp:CreatorTool>`);
    expect(xmp).toMatch(/<xmp:CreateDate>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z<\/xmp:CreateDate>/);
  });

  it('embeds every font, is not encrypted, has no JavaScript, and qpdf finds no errors', async () => {
    const fonts = await pdffonts(pdf);
    expect(fonts.length).toBeGreaterThan(0);
    expect(fonts.filter((f) => !f.embedded)).toEqual([]);
    const info = await pdfinfo(pdf);
    expect(info.Encrypted).toBe('no');
    expect(info.JavaScript).toBe('no');
    const check = await qpdfCheck(pdf);
    expect(check.code, check.output).toBe(0);
    expect(check.output).toContain('No syntax or stream encoding errors');
  });

  it('has an sRGB output intent with an ICC profile, and a trailer ID', async () => {
    const json = await qpdfJson(pdf);
    const intents = catalogOf(json)['/OutputIntents'] as string[];
    expect(intents).toHaveLength(1);
    const intent = qpdfDict(json, intents[0]);
    expect(intent['/S']).toBe('/GTS_PDFA1');
    expect(String(intent['/OutputConditionIdentifier'])).toContain('sRGB IEC61966-2.1');
    const profile = qpdfDict(json, intent['/DestOutputProfile']);
    expect(profile['/N']).toBe(3);
    const id = json.trailer['/ID'] as string[];
    expect(id).toHaveLength(2);
    expect(id[0]).toMatch(/^b:[0-9a-f]{32}$/);
  });

  it('prints every annotation (links included) and hides none', async () => {
    const annotations = annotationsOf(await qpdfJson(pdf));
    expect(annotations.length).toBeGreaterThanOrEqual(2); // the external link and the internal one
    for (const annotation of annotations) {
      const flags = annotation['/F'] as number;
      expect(flags & 4, JSON.stringify(annotation)).toBe(4);
      expect(flags & (1 | 2 | 32)).toBe(0);
    }
  });

  it('keeps Chromium’s tags and outline', async () => {
    expect((await pdfinfo(pdf)).Tagged).toBe('yes');
    const catalog = catalogOf(await qpdfJson(pdf));
    expect(catalog['/StructTreeRoot']).toBeDefined();
    expect(catalog['/MarkInfo']).toBeDefined();
    expect(catalog['/Outlines']).toBeDefined();
  });

  it('writes pdfaid:part 3 for "3b"', async () => {
    const res = await render({ html: '<p>three</p>', pdf_a: '3b' });
    const xmp = await pdfinfoMeta(await download(res));
    expect(xmp).toMatch(/<pdfaid:part>3<\/pdfaid:part>/);
    expect(xmp).toMatch(/<pdfaid:conformance>B<\/pdfaid:conformance>/);
  });

  it('is saved with a template’s pdf_options and applies to its renders', async () => {
    const saved = await local.api('/v1/templates', {
      method: 'POST',
      token: account.session,
      body: { name: 'Archived', html: '<title>T</title><p>{{ x }}</p>', pdf_options: { pdf_a: '2b' } },
    });
    expect(saved.status, saved.text).toBe(201);
    const xmp = await pdfinfoMeta(
      await download(await render({ template_id: saved.json.id, variables: { x: 1 } })),
    );
    expect(xmp).toMatch(/<pdfaid:part>2<\/pdfaid:part>/);
  });

  it('leaves a render without pdf_a as printed: no XMP, no output intent', async () => {
    const plain = await download(await render({ html: '<p>plain</p>' }));
    expect((await pdfinfoMeta(plain)).trim()).toBe('');
    expect(catalogOf(await qpdfJson(plain))['/OutputIntents']).toBeUndefined();
  });

  it.each([
    ['an unknown level', '1b'],
    ['a boolean', true],
  ])('refuses %s: 422 INVALID_PDF_OPTIONS naming pdf_a', async (_, value) => {
    const res = await render({ html: '<p>x</p>', pdf_a: value });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('INVALID_PDF_OPTIONS');
    expect(res.json.error.details).toEqual([expect.objectContaining({ field: 'pdf_a' })]);
  });
});
