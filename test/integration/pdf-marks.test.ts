/**
 * `watermark` and `stamp` (issue 34) over HTTP against the real local stack, read back with real
 * readers: pdftotext finds each mark's text (templated with the render's variables) on the pages
 * asked and not on the others; pdftoppm's page image shows a watermark hidden under an opaque box
 * and a stamp over it; pdffonts shows the text embedded in the service's fonts for each script.
 * Bad input answers 422 naming the field with nothing created; a page past the document's last
 * fails the job (422 INVALID_PDF_OPTIONS naming the field) and gives its unit back.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, useLocalStack } from '../helpers/local-stack.js';
import { onPdf, pageImage, pdfText } from '../helpers/pdf-readers.js';
import { pngDataUri, solidPng } from '../helpers/png.js';
import { newAccount, type TestAccount } from '../helpers/template-fixtures.js';

const local = useLocalStack();

let account: TestAccount;
beforeAll(async () => {
  account = await newAccount(local, 'marks');
});

const render = (body: Record<string, unknown>, token = account.session) =>
  local.api('/v1/pdf', { method: 'POST', token, body });

const pdfOf = async (res: ApiResponse): Promise<Uint8Array> => {
  expect(res.status, res.text).toBe(201);
  return new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer());
};

const pageText = async (pdf: Uint8Array, page: number): Promise<string> => {
  const out = await pdfText(pdf, { first: page, last: page });
  expect(out.ok, out.stderr).toBe(true);
  return out.stdout;
};

const THREE_PAGES =
  '<p>Sheet one</p><p style="break-before: page">Sheet two</p><p style="break-before: page">Sheet three</p>';

/** A 4 in black square centred on the page (A4, equal margins). */
const BOX =
  '<div style="position:absolute; left:50%; top:50%; width:4in; height:4in; margin:-2in 0 0 -2in; background:#000"></div>';
const RED = pngDataUri(solidPng(8, 8, [255, 0, 0]));

describe('watermark and stamp', () => {
  it('draw templated text on the pages asked, and only there', async () => {
    const pdf = await pdfOf(
      await render({
        html: THREE_PAGES,
        variables: { paid_on: '2026-11-28' },
        stamp: { text: 'PAID {{ paid_on }} & settled', pages: '1,last', position: 'top-right' },
        watermark: { text: 'DRAFT COPY', pages: '2', rotation_deg: 0 },
      }),
    );
    const [one, two, three] = [await pageText(pdf, 1), await pageText(pdf, 2), await pageText(pdf, 3)];
    expect(one).toContain('PAID 2026-11-28 & settled');
    expect(three).toContain('PAID 2026-11-28 & settled');
    expect(two).not.toContain('PAID');
    expect(two).toContain('DRAFT COPY');
    expect(one + three).not.toContain('DRAFT');
    // The document's own text is all there.
    expect(one).toContain('Sheet one');
    expect(three).toContain('Sheet three');
  });

  it('draw text in any script the service prints, in its own fonts', async () => {
    const pdf = await pdfOf(
      await render({ html: '<p>Invoice</p>', stamp: { text: 'PAID Ωμέγα Привет 支払済 שולם' } }),
    );
    const text = await pageText(pdf, 1);
    for (const word of ['PAID', 'Ωμέγα', 'Привет', '支払済']) expect(text).toContain(word);
    const fonts = await onPdf(pdf, 'pdffonts', (f) => [f]);
    await fonts.cleanup();
    expect(fonts.stdout).toMatch(/NotoSans-Regular/);
    expect(fonts.stdout).toMatch(/NotoSansHebrew/);
    expect(fonts.stdout).toMatch(/NotoSans(SC|JP)/);
  });

  it('put a watermark under an opaque box and a stamp over it', async () => {
    const pdf = await pdfOf(
      await render({
        html: `<p>Boxed</p>${BOX}`,
        // Drawn at 72 dpi: 432 px is 6 in, over the 4 in box's edges; 72 px is 1 in, inside it.
        watermark: { image: pngDataUri(solidPng(432, 432, [255, 0, 0])), opacity: 1, rotation_deg: 0 },
        stamp: { image: pngDataUri(solidPng(72, 72, [0, 0, 255])), opacity: 1 },
      }),
    );
    const image = await pageImage(pdf, 1, 36);
    const cx = image.width / 2;
    const cy = image.height / 2;
    const inch = 36;
    // Centre: the stamp (blue) over the box.
    expect(image.at(cx, cy)).toEqual([0, 0, 255]);
    // Inside the box, outside the stamp: black, the watermark hidden under it.
    expect(image.at(cx + 1.5 * inch, cy)).toEqual([0, 0, 0]);
    // Outside the box, inside the 6 in watermark: red.
    expect(image.at(cx + 2.6 * inch, cy)).toEqual([255, 0, 0]);
    // Outside both: the paper.
    expect(image.at(cx + 3.5 * inch, cy)).toEqual([255, 255, 255]);
  });

  it('refuse bad marks with 422 naming the field, creating no job', async () => {
    const fresh = await newAccount(local, 'marks-bad');
    const cases: [Record<string, unknown>, string][] = [
      [{ watermark: { image: 'data:image/png;base64,aGVsbG8gd29ybGQ=' } }, 'watermark.image'],
      [{ watermark: { image: 'https://example.com/logo.png' } }, 'watermark.image'],
      [{ stamp: { text: 'x', pages: '3-1' } }, 'stamp.pages'],
      [{ stamp: { text: 'x', pages: '0' } }, 'stamp.pages'],
      [{ stamp: { text: 'x', image: RED } }, 'stamp.text'],
      [{ stamp: {} }, 'stamp.text'],
      [{ stamp: { text: 'x', opacity: 2 } }, 'stamp.opacity'],
      [{ stamp: { text: 'x', color: 'red' } }, 'stamp.color'],
      [{ stamp: { text: 'x', position: 'middle' } }, 'stamp.position'],
      [{ watermark: { text: 'x', rotation_deg: 720 } }, 'watermark.rotation_deg'],
    ];
    for (const [options, field] of cases) {
      const res = await render({ html: '<p>x</p>', ...options }, fresh.session);
      expect(res.status, `${JSON.stringify(options)}: ${res.text}`).toBe(422);
      expect(res.json.error.code).toBe('INVALID_PDF_OPTIONS');
      expect(res.json.error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    expect((await local.api('/v1/pdf', { token: fresh.session })).json).toEqual([]);
  });

  it('fail the job for a page past the document’s last, and give its unit back', async () => {
    const fresh = await newAccount(local, 'marks-pages');
    const res = await render(
      { html: '<p>One page</p>', stamp: { text: 'x', pages: '1,4-last' } },
      fresh.session,
    );
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('INVALID_PDF_OPTIONS');
    expect(res.json.error.message).toMatch(/stamp\.pages names page 4, but the PDF has 1 page/);
    expect((await local.api('/v1/usage', { token: fresh.session })).json.renders_used).toBe(0);
  });

  it('answer a template error in the text as the template’s, naming the mark', async () => {
    const res = await render({ html: '<p>x</p>', stamp: { text: 'PAID {{ paid_on }}' } });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('INVALID_HTML_TEMPLATE');
    expect(res.json.error.message).toMatch(/stamp\.text/);
  });

  it('are kept with a saved template and used by its renders', async () => {
    const saved = await local.api('/v1/templates', {
      method: 'POST',
      token: account.session,
      body: {
        name: 'stamped',
        html: '<p>Order {{ n }}</p>',
        pdf_options: { stamp: { text: 'COPY {{ n }}' } },
      },
    });
    expect(saved.status, saved.text).toBe(201);
    expect(saved.json.pdf_options.stamp).toEqual({ text: 'COPY {{ n }}' });
    const pdf = await pdfOf(await render({ template_id: saved.json.id, variables: { n: '77' } }));
    expect(await pageText(pdf, 1)).toContain('COPY 77');
  });
});
