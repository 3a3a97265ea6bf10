/**
 * The Renderer port's contract (domain/ports.ts): a render executes its template with its
 * variables, prints a PDF on the requested paper, uploads it through the presigned PUT and
 * answers with a result; a failure is a result with its code, never a rejection. The same cases
 * for the memory renderer (functions/adapters/memory/renderer.ts) and the Chromium renderer
 * (functions/renderer), each uploading to a storage of its backend; every PDF is read back with
 * pdf.js.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { PdfStorage, Renderer, RenderRequest } from '../../functions/domain/common/ports.js';
import { PAPER_SIZES_PT, readPdf } from '../helpers/pdf.js';

export interface RendererUnderTest {
  readonly renderer: Renderer;
  /** Where its PDFs go: the upload links come from here, and the PDFs are read back from here. */
  readonly storage: PdfStorage;
  close(): Promise<void>;
}

export interface RendererBackend {
  readonly name: string;
  create(): Promise<RendererUnderTest>;
}

let made = 0;

export const rendererContract = (backend: RendererBackend): void => {
  let underTest: Promise<RendererUnderTest> | undefined;
  const parts = () => {
    underTest ??= backend.create();
    return underTest;
  };
  afterAll(async () => {
    await (await underTest)?.close();
  });

  const request = async (over: Partial<RenderRequest> & { key?: string } = {}): Promise<RenderRequest> => {
    const { storage } = await parts();
    const { key = `pdf/contract/job_${++made}_${Date.now()}.pdf`, ...rest } = over;
    return {
      jobId: `job_contract_${made}`,
      template: { source: '<p>Hello {{ name }}</p>', variables: '{"name":"Ada"}' },
      pdf: {
        format: 'A4',
        landscape: false,
        printBackground: false,
        margins: { top: 0.4, right: 0.4, bottom: 0.4, left: 0.4 },
      },
      pageLoad: { waitUntil: 'load', timeoutMs: 30_000, waitForSelector: null },
      upload: await storage.uploadTarget(key),
      limits: { maxPdfBytes: 10 * 1024 * 1024, maxPages: 50, maxHtmlBytes: 1024 * 1024 },
      ...rest,
    };
  };

  /** The stored PDF, fetched back through a download link. */
  const stored = async (req: RenderRequest) => {
    const { storage } = await parts();
    const key = decodeURIComponent(new URL(req.upload.url).pathname).split('/').slice(-3).join('/');
    const answer = await fetch(await storage.downloadUrl(key, 'contract.pdf'));
    return { status: answer.status, bytes: new Uint8Array(await answer.arrayBuffer()) };
  };

  describe(`the renderer port on ${backend.name}`, () => {
    it('executes the template with its variables and uploads the PDF it reports', async () => {
      const { renderer } = await parts();
      const req = await request();
      const result = await renderer.render(req);
      expect(result).toMatchObject({ ok: true, pageCount: 1 });
      if (!result.ok) return;
      const { status, bytes } = await stored(req);
      expect(status).toBe(200);
      expect(bytes.byteLength).toBe(result.fileSizeBytes);
      const pdf = await readPdf(bytes);
      expect(pdf.pageCount).toBe(1);
      expect(pdf.text).toContain('Hello Ada');
      expect(pdf.pages[0]?.widthPt).toBeCloseTo(PAPER_SIZES_PT.A4.widthPt, -1);
      expect(pdf.pages[0]?.heightPt).toBeCloseTo(PAPER_SIZES_PT.A4.heightPt, -1);
      expect(result.renderDurationMs).toBeGreaterThanOrEqual(0);
    });

    it('prints on the paper asked for, turned for landscape, a page for each page break', async () => {
      const { renderer } = await parts();
      const req = await request({
        template: {
          source:
            '{% for n in pages %}<div style="break-after: page">Page {{ n }}</div>{% endfor %}<p>last</p>',
          variables: { pages: [1, 2] },
        },
        pdf: {
          format: 'LETTER',
          landscape: true,
          printBackground: false,
          margins: { top: 0.4, right: 0.4, bottom: 0.4, left: 0.4 },
        },
      });
      const result = await renderer.render(req);
      expect(result).toMatchObject({ ok: true, pageCount: 3 });
      const pdf = await readPdf((await stored(req)).bytes);
      expect(pdf.pageCount).toBe(3);
      expect(pdf.pages[0]?.widthPt).toBeCloseTo(PAPER_SIZES_PT.LETTER.heightPt, -1);
      expect(pdf.pages[0]?.heightPt).toBeCloseTo(PAPER_SIZES_PT.LETTER.widthPt, -1);
      expect(pdf.pages.map((p) => p.text.trim())).toEqual(['Page 1', 'Page 2', 'last']);
    });

    it('answers INVALID_HTML_TEMPLATE with the line and the variable, and stores nothing', async () => {
      const { renderer } = await parts();
      const req = await request({
        template: { source: '<p>ok</p>\n<p>{{ missing.field }}</p>', variables: '{}' },
      });
      const result = await renderer.render(req);
      expect(result).toMatchObject({
        ok: false,
        code: 'INVALID_HTML_TEMPLATE',
        details: { line: 2, name: 'missing' },
      });
      expect((await stored(req)).status).toBe(404);
      const syntax = await renderer.render(
        await request({ template: { source: '<p>{% if %}</p>', variables: '{}' } }),
      );
      expect(syntax).toMatchObject({ ok: false, code: 'INVALID_HTML_TEMPLATE', details: { line: 1 } });
    });

    it('names the header or footer whose template fails', async () => {
      const { renderer } = await parts();
      const result = await renderer.render(
        await request({ template: { source: '<p>ok</p>', variables: '{}', footer: '{{ nope }}' } }),
      );
      expect(result).toMatchObject({
        ok: false,
        code: 'INVALID_HTML_TEMPLATE',
        details: { part: 'footer', name: 'nope' },
      });
    });

    it('answers HTML_CONTENT_TOO_LARGE, PDF_TOO_MANY_PAGES and PDF_TOO_LARGE at their limits, storing nothing', async () => {
      const { renderer } = await parts();
      const html = await request({
        template: { source: '<p>{% for i in range(200) %}xxxxxxxxxx{% endfor %}</p>', variables: '{}' },
        limits: { maxPdfBytes: 10 * 1024 * 1024, maxPages: 50, maxHtmlBytes: 1000 },
      });
      expect(await renderer.render(html)).toMatchObject({ ok: false, code: 'HTML_CONTENT_TOO_LARGE' });
      const pages = await request({
        template: {
          source: '{% for n in range(3) %}<div style="break-after: page">{{ n }}</div>{% endfor %}',
          variables: '{}',
        },
        limits: { maxPdfBytes: 10 * 1024 * 1024, maxPages: 2, maxHtmlBytes: 1024 * 1024 },
      });
      expect(await renderer.render(pages)).toMatchObject({ ok: false, code: 'PDF_TOO_MANY_PAGES' });
      const bytes = await request({ limits: { maxPdfBytes: 200, maxPages: 50, maxHtmlBytes: 1024 * 1024 } });
      expect(await renderer.render(bytes)).toMatchObject({ ok: false, code: 'PDF_TOO_LARGE' });
      for (const req of [html, pages, bytes]) expect((await stored(req)).status).toBe(404);
    });

    it('writes the document information it is given', async () => {
      const { renderer } = await parts();
      const req = await request({
        metadata: { title: 'Rechnung Nr. 7 – März', author: 'Ada', keywords: ['a', 'b'] },
      });
      expect(await renderer.render(req)).toMatchObject({ ok: true });
      const { getDocument } = await import('pdfjs-dist/legacy/build/pdf.mjs');
      const doc = await getDocument({ data: (await stored(req)).bytes, verbosity: 0 }).promise;
      const info = (await doc.getMetadata()).info as unknown as Record<string, unknown>;
      expect(info).toMatchObject({ Title: 'Rechnung Nr. 7 – März', Author: 'Ada', Keywords: 'a, b' });
      await doc.destroy();
    });

    it('answers PDF_STORAGE_FAILED, as a result, when the upload is refused or cannot connect', async () => {
      const { renderer } = await parts();
      const refused = await request();
      const gone = new URL(refused.upload.url);
      gone.pathname = '/no-such-bucket-here/x.pdf';
      gone.search = '';
      const r1 = await renderer.render({
        ...refused,
        upload: { url: gone.toString(), headers: refused.upload.headers },
      });
      expect(r1).toMatchObject({ ok: false, code: 'PDF_STORAGE_FAILED' });
      const r2 = await renderer.render({
        ...refused,
        upload: { url: 'http://127.0.0.1:1/x.pdf', headers: {} },
      });
      expect(r2).toMatchObject({
        ok: false,
        code: 'PDF_STORAGE_FAILED',
        message: 'Storing the PDF failed: the storage service could not be reached.',
      });
    });
  });
};
