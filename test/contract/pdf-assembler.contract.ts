/**
 * The PdfAssembler port's contract (domain/merges/merges.ts): parts' PDFs put together into one,
 * stored at the merge's key; a failure is a result, and stores nothing. The same cases for the
 * memory assembler on the memory bucket (functions/adapters/memory/pdf-assembly.ts) and the S3
 * one on s3rver (functions/adapters/s3/pdf-assembly.ts). What is stored is read with poppler and
 * qpdf (test/helpers/pdf-readers.ts).
 */
import { readFile } from 'node:fs/promises';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PdfAssembler } from '../../functions/domain/merges/merges.js';
import { pdfinfo, pdfText, qpdfCheck, withPdfFile } from '../helpers/pdf-readers.js';
import { unique } from './stores.js';

/** A bucket's objects as the contract puts and reads them, beside the port under test. */
export interface ObjectsUnderTest<P> {
  readonly port: P;
  put(objectKey: string, body: Uint8Array): Promise<void>;
  /** The object's bytes; undefined when there is none. */
  get(objectKey: string): Promise<Uint8Array | undefined>;
}

export interface ObjectsBackend<P> {
  readonly name: string;
  /** The port on a bucket; `onFault` is told of what it logs and carries on from. */
  create(onFault: (message: string, error: unknown) => void): Promise<ObjectsUnderTest<P>>;
}

/** A one-page PDF whose page reads `text`, made with pdf-lib (the readers are poppler's). */
export const onePagePdf = async (text: string, title?: string): Promise<Uint8Array> => {
  const doc = await PDFDocument.create();
  if (title) doc.setTitle(title);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([300, 200]).drawText(text, { x: 20, y: 100, size: 14, font });
  return doc.save();
};

const outlineTitles = async (pdf: Uint8Array): Promise<string[]> => {
  const { stdout } = await withPdfFile(pdf, 'qpdf', ['--json=2', '--json-key=outlines', '{}']);
  const titles: string[] = [];
  const walk = (items: { title: string; kids: unknown[] }[]) => {
    for (const item of items) {
      titles.push(item.title);
      walk(item.kids as { title: string; kids: unknown[] }[]);
    }
  };
  walk((JSON.parse(stdout) as { outlines: { title: string; kids: unknown[] }[] }).outlines);
  return titles;
};

export const pdfAssemblerContract = (backend: ObjectsBackend<PdfAssembler>): void => {
  describe(`PdfAssembler (${backend.name})`, () => {
    let chromium: Uint8Array;
    let second: Uint8Array;
    beforeAll(async () => {
      // Two pages Chromium printed, tagged, titled "Links", with internal and external links.
      chromium = new Uint8Array(await readFile(new URL('../fixtures/pdf/links.pdf', import.meta.url)));
      second = await onePagePdf('The second part');
    });

    const setup = async () => {
      const faults: string[] = [];
      const under = await backend.create((message) => faults.push(message));
      const prefix = unique('pdf/assembly');
      const keys = { a: `${prefix}/a.pdf`, b: `${prefix}/b.pdf`, out: `${prefix}/merged.pdf` };
      await under.put(keys.a, chromium);
      await under.put(keys.b, second);
      const request = {
        parts: [
          { objectKey: keys.a, title: null },
          { objectKey: keys.b, title: 'Appendix' },
          { objectKey: keys.a, title: 'Again' },
        ],
        objectKey: keys.out,
        outline: true,
        metadata: undefined,
        maxPdfBytes: 10_000_000,
        maxPages: 50,
      };
      return { ...under, faults, keys, request };
    };

    it('stores every page of every part in order, with one outline entry per part', async () => {
      const { port, get, keys, request } = await setup();
      const result = await port.assemble(request);
      const stored = await get(keys.out);
      expect(stored).toBeDefined();
      const pdf = stored as Uint8Array;
      expect(result).toMatchObject({ ok: true, pageCount: 5, fileSizeBytes: pdf.byteLength });
      expect((await pdfinfo(pdf)).Pages).toBe('5');
      expect((await qpdfCheck(pdf)).code).not.toBe(2);
      expect((await pdfText(pdf, { first: 1, last: 1 })).stdout).toContain('in-document');
      expect((await pdfText(pdf, { first: 3, last: 3 })).stdout).toContain('The second part');
      expect((await pdfText(pdf, { first: 5, last: 5 })).stdout).toContain('file on page 2');
      // The first part's own title, then the titles given.
      expect(await outlineTitles(pdf)).toEqual(['Links', 'Appendix', 'Again']);
    });

    it("keeps the structure tree when every part is tagged: one Document, a Part per part, each link its page's own; untagged when a part is not", async () => {
      const { port, get, keys, request } = await setup();
      const [a] = request.parts;
      const both = await port.assemble({ ...request, parts: [a, a] as typeof request.parts });
      expect(both.ok).toBe(true);
      const pdf = (await get(keys.out)) as Uint8Array;
      expect((await pdfinfo(pdf)).Tagged).toBe('yes');
      const struct = await withPdfFile(pdf, 'pdfinfo', ['-struct', '{}']);
      const once = await withPdfFile(chromium, 'pdfinfo', ['-struct', '{}']);
      const lines = struct.stdout.split('\n').filter(Boolean);
      // One Document; each part's own tree, one level down, under a Part of its own.
      expect(lines[0]).toBe('Document');
      expect(lines.filter((l) => l === '  Part')).toHaveLength(2);
      const own = once.stdout.split('\n').filter(Boolean).length;
      expect(lines).toHaveLength(1 + 2 * own);
      expect(struct.stderr).not.toMatch(/more than one child/);
      // Each link's structure entry (OBJR) names an annotation of the merged pages, none a copy.
      const objects = [...struct.stdout.matchAll(/Object (\d+) 0/g)].map((m) => Number(m[1]));
      const pages = (await withPdfFile(pdf, 'qpdf', ['--json=2', '--json-key=pages', '{}'])).stdout;
      const annotations: number[] = [];
      const json = JSON.parse(pages) as { pages: { object: string }[] };
      for (const page of json.pages) {
        const shown = await withPdfFile(pdf, 'qpdf', [`--show-object=${page.object.split(' ')[0]}`, '{}']);
        const annots = /\/Annots \[([^\]]*)\]/.exec(shown.stdout)?.[1] ?? '';
        annotations.push(...[...annots.matchAll(/(\d+) 0 R/g)].map((m) => Number(m[1])));
      }
      expect(objects.length).toBeGreaterThan(0);
      expect(objects.every((o) => annotations.includes(o))).toBe(true);
      expect((await qpdfCheck(pdf)).code).toBe(0);
      // The first request mixes a tagged part with an untagged one: untagged, as assistive technology then reads it in order.
      expect((await port.assemble(request)).ok).toBe(true);
      expect((await pdfinfo((await get(keys.out)) as Uint8Array)).Tagged).toBe('no');
    });

    it('names the merged document with the metadata given, and leaves out the outline when asked', async () => {
      const { port, get, keys, request } = await setup();
      const result = await port.assemble({
        ...request,
        outline: false,
        metadata: { title: 'Quarterly pack', author: 'Accounts' },
      });
      expect(result.ok).toBe(true);
      const pdf = (await get(keys.out)) as Uint8Array;
      const info = await pdfinfo(pdf);
      expect(info.Title).toBe('Quarterly pack');
      expect(info.Author).toBe('Accounts');
      expect(await outlineTitles(pdf)).toEqual([]);
    });

    it('refuses a document over the page limit, and stores nothing', async () => {
      const { port, get, keys, request } = await setup();
      const result = await port.assemble({ ...request, maxPages: 4 });
      expect(result).toMatchObject({ ok: false, code: 'PDF_TOO_MANY_PAGES' });
      expect(result.ok === false && result.message).toContain('5 pages');
      expect(await get(keys.out)).toBeUndefined();
    });

    it('refuses a document over the size limit, and stores nothing', async () => {
      const { port, get, keys, request } = await setup();
      const result = await port.assemble({ ...request, maxPdfBytes: 10_000 });
      expect(result).toMatchObject({ ok: false, code: 'PDF_TOO_LARGE' });
      expect(await get(keys.out)).toBeUndefined();
    });

    it('answers PDF_RENDERING_FAILED for a part that is no PDF, logs it, and stores nothing', async () => {
      const { port, put, get, keys, request, faults } = await setup();
      const junk = `${keys.out}.junk`;
      await put(junk, new TextEncoder().encode('not a PDF at all'));
      const result = await port.assemble({
        ...request,
        parts: [...request.parts, { objectKey: junk, title: null }],
      });
      expect(result).toMatchObject({ ok: false, code: 'PDF_RENDERING_FAILED' });
      expect(faults).toEqual(['merging PDFs failed']);
      expect(await get(keys.out)).toBeUndefined();
    });

    it('rejects when a part is missing (a fault, not a failed merge), and stores nothing', async () => {
      const { port, get, keys, request } = await setup();
      await expect(
        port.assemble({
          ...request,
          parts: [...request.parts, { objectKey: `${keys.out}.gone`, title: null }],
        }),
      ).rejects.toThrow();
      expect(await get(keys.out)).toBeUndefined();
    });
  });
};
