/**
 * Documents that navigate (issue 26), rendered by the in-process renderer against the real
 * Chromium and read back with pdf.js as a viewer reads them: page references in the body
 * (`pagedMedia`), bookmarks (`outline`) and tagged PDFs (`tagged`); and a render without them
 * exactly as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RenderRequest } from '../../functions/renderer/contract.js';
import type { RendererInstance } from '../../functions/renderer/renderer.js';
import {
  NAVIGATED_REPORT_PAGES,
  type NavigatedHeading,
  navigatedReport,
  TAGGED_DOCUMENT,
} from '../fixtures/navigated-report.js';
import { readPdf } from '../helpers/pdf.js';
import { flattenOutline, readNavigation, structNodes } from '../helpers/pdf-navigation.js';
import { startUploadSink, type UploadSink } from '../helpers/render-fixtures.js';

let sink: UploadSink;
let renderer: RendererInstance;

beforeAll(async () => {
  sink = await startUploadSink();
  const inProcess = await import('../../functions/renderer/in-process.js');
  renderer = inProcess.createInProcessRenderer();
});

afterAll(async () => {
  await renderer?.close();
  sink?.close();
});

let uploadCount = 0;

const request = (html: string, pdf: Partial<RenderRequest['pdf']> = {}): RenderRequest => ({
  jobId: 'job_navigation_test',
  template: { source: `{% raw %}${html}{% endraw %}`, variables: {} },
  pdf: {
    format: 'A4',
    landscape: false,
    printBackground: true,
    margins: { top: 0.4, right: 0.4, bottom: 0.4, left: 0.4 },
    ...pdf,
  },
  pageLoad: { waitUntil: 'load', timeoutMs: 30_000, waitForSelector: null },
  upload: { url: `${sink.baseUrl}/bucket/nav-${++uploadCount}.pdf`, headers: {} },
  limits: { maxPdfBytes: 50 * 1024 * 1024, maxPages: 1000, maxHtmlBytes: 10 * 1024 * 1024 },
});

/** Renders, expects success, and answers the PDF that was PUT. */
const renderPdf = async (html: string, pdf: Partial<RenderRequest['pdf']> = {}): Promise<Buffer> => {
  const req = request(html, pdf);
  const result = await renderer.render(req);
  expect(result).toMatchObject({ ok: true });
  const bytes = sink.uploadOf(req.upload.url)?.body;
  if (!bytes) throw new Error('the PDF was not uploaded');
  return bytes;
};

/** The page each heading is printed on, from the PDF's text (contents page excluded). */
const printedOn = (pages: readonly { text: string }[], headings: readonly NavigatedHeading[]) =>
  new Map(
    headings.map((h) => {
      const index = pages.findIndex(
        (p, i) => (h.level === 1 ? i === 0 : i > 0) && p.text.split('\n').includes(h.title),
      );
      return [h.title, index + 1];
    }),
  );

const report = navigatedReport();

/** The PDF's creation and modification dates, which differ between two prints. */
const withoutDates = (pdf: Buffer): string => pdf.toString('latin1').replace(/\(D:\d{14}[^)]*\)/g, '(D:)');

describe('page references in the body (pagedMedia)', () => {
  it('prints the table of contents with the page each heading is printed on, and "Page N of M" on every page', async () => {
    const pdf = await readPdf(await renderPdf(report.html, { pagedMedia: true }));
    expect(pdf.pageCount).toBe(NAVIGATED_REPORT_PAGES);
    pdf.pages.forEach((page, i) => {
      expect(page.text.split('\n')[0]).toBe(`Page ${i + 1} of ${NAVIGATED_REPORT_PAGES}`);
    });
    const onPage = printedOn(pdf.pages, report.headings);
    const entries = [...(pdf.pages[0]?.text ?? '').matchAll(/^(.+) \.\.\.\. p\. (\d+)$/gm)].map(
      ([, title = '', page]) => [title, Number(page)] as const,
    );
    const listed = report.headings.filter((h) => h.level > 1);
    expect(entries.map(([title]) => title)).toEqual(listed.map((h) => h.title));
    for (const [title, page] of entries) expect({ title, page }).toEqual({ title, page: onPage.get(title) });
    // The headings are spread unevenly: the numbers are not simply the entries' order.
    expect(new Set(entries.map(([, page]) => page)).size).toBeLessThan(entries.length);
  });

  it('formats the numbers in the counter style asked for, and prints nothing for a target that is not there', async () => {
    const html = `<style>
      a::after { content: " (page " target-counter(attr(href), page, upper-roman) ")"; }
      .folio::after { content: counter(page, lower-alpha) "/" counter(pages); }
    </style>
    <p><a href="#third">to the third</a> <a href="#nowhere">to nowhere</a> <a href="#gr%C3%B6%C3%9Fe%20(2)">to Größe</a></p>
    <p class="folio" style="break-after: page"></p><p style="break-after: page">second</p>
    <h2 id="third">Third</h2><p class="folio"></p><p id="größe (2)">Größe</p>`;
    const pdf = await readPdf(await renderPdf(html, { pagedMedia: true }));
    expect(pdf.pageCount).toBe(3);
    expect(pdf.pages[0]?.text).toContain('to the third (page III)');
    expect(pdf.pages[0]?.text).toContain('to nowhere (page )');
    // An id that is not ASCII, with a space and parentheses: a PDF name escaped, read back.
    expect(pdf.pages[0]?.text).toContain('to Größe (page III)');
    expect(pdf.pages[0]?.text).toContain('a/3');
    expect(pdf.pages[2]?.text).toContain('c/3');
  });

  it('prints a third time when the numbers filled in move their own target to another page', async () => {
    // One 100 px line per digit: "0" (the first print) is one line and leaves the target at the
    // bottom of page 10; "10" is two, which pushes it to page 11; "11" keeps it there.
    const html = `<style>
      body { margin: 0; font: 10px monospace; }
      .n { font: 100px/100px monospace; width: 0.7em; word-break: break-all; }
      .n a::after { content: target-counter(attr(href), page); }
    </style>
    <div class="n"><a href="#target"></a></div>
    <div style="height: 10300px"></div>
    <p id="target" style="margin: 0">TARGET</p>`;
    const pdf = await readPdf(await renderPdf(html, { pagedMedia: true }));
    const targetPage = pdf.pages.findIndex((p) => p.text.includes('TARGET')) + 1;
    expect(targetPage).toBe(11);
    expect(pdf.pages[0]?.text.replace(/\s/g, '')).toBe('11');
  });

  it('is not needed for running page numbers in @page margin boxes: Chromium prints those itself', async () => {
    const html = `<style>@page { @bottom-right { content: "Page " counter(page) " of " counter(pages); } }</style>
      <p style="break-after: page">one</p><p>two</p>`;
    const pdf = await readPdf(await renderPdf(html));
    expect(pdf.pages.map((p) => p.text)).toEqual(['Page 1 of 2\none', 'Page 2 of 2\ntwo']);
  });

  it('prints once, exactly as without it, a document that uses no page counters', async () => {
    const html = '<h1>Plain</h1><p>No counters here.</p>';
    const plain = await renderPdf(html);
    const paged = await renderPdf(html, { pagedMedia: true });
    expect(withoutDates(paged)).toBe(withoutDates(plain));
  });
});

describe('bookmarks (outline)', () => {
  const expectOutline = async (bytes: Buffer): Promise<void> => {
    const [navigation, pdf] = await Promise.all([readNavigation(bytes), readPdf(bytes)]);
    const onPage = printedOn(pdf.pages, report.headings);
    expect(flattenOutline(navigation.outline)).toEqual(
      report.headings.map((h) => ({ title: h.title, page: onPage.get(h.title), depth: h.level - 1 })),
    );
  };

  it('gives an untagged PDF an outline with one entry per heading, nested by level, opened on the page of each', async () => {
    const bytes = await renderPdf(report.html, { outline: true });
    await expectOutline(bytes);
    const navigation = await readNavigation(bytes);
    expect(navigation.pageMode).toBe('UseOutlines');
    // Built from the headings' destinations: the PDF stays untagged (and small).
    expect(navigation.marked).toBe(false);
    // The document information survives the update: Chromium's title is still there.
    expect(navigation.title).toBe('Operations report, fiscal year 2026');
  });

  it("uses Chromium's own outline in a tagged PDF", async () => {
    const bytes = await renderPdf(report.html, { outline: true, tagged: true });
    await expectOutline(bytes);
    expect((await readNavigation(bytes)).marked).toBe(true);
  });

  it('combines with page references and the document information', async () => {
    const req = request(report.html, { outline: true, pagedMedia: true });
    const result = await renderer.render({ ...req, metadata: { author: 'Ops' } });
    expect(result).toMatchObject({ ok: true, pageCount: NAVIGATED_REPORT_PAGES });
    const bytes = sink.uploadOf(req.upload.url)?.body ?? Buffer.alloc(0);
    await expectOutline(bytes);
    const pdf = await readPdf(bytes);
    expect(pdf.pages[29]?.text).toContain(`Page 30 of ${NAVIGATED_REPORT_PAGES}`);
    // The document information is updated after the outline: the <title> is kept, the author added.
    const navigation = await readNavigation(bytes);
    expect(navigation).toMatchObject({ title: 'Operations report, fiscal year 2026', author: 'Ops' });
  });

  it('leaves out headings that are not printed, and writes none for a document without headings', async () => {
    const hidden = await readNavigation(
      await renderPdf(
        '<h1>Shown</h1><h2 style="display:none">Hidden</h2><div hidden><h2>Also hidden</h2></div><h2>Also shown</h2>',
        {
          outline: true,
        },
      ),
    );
    expect(flattenOutline(hidden.outline)).toEqual([
      { title: 'Shown', page: 1, depth: 0 },
      { title: 'Also shown', page: 1, depth: 1 },
    ]);
    const none = await readNavigation(await renderPdf('<p>No headings.</p>', { outline: true }));
    expect(none.outline).toEqual([]);
  });
});

describe('tagged PDFs (tagged)', () => {
  it('holds the headings, paragraphs, table cells and figure alternative text, with the language and the title shown', async () => {
    const navigation = await readNavigation(await renderPdf(TAGGED_DOCUMENT, { tagged: true }));
    expect(navigation.marked).toBe(true);
    expect(navigation.language).toBe('de');
    expect(navigation.displayDocTitle).toBe(true);
    const nodes = structNodes(navigation.structTrees);
    const roles = nodes.map((n) => n.role);
    for (const role of ['H1', 'H2', 'P', 'Table', 'TR', 'TH', 'TD', 'Figure']) expect(roles).toContain(role);
    expect(roles.filter((r) => r === 'TD')).toHaveLength(4);
    expect(roles.filter((r) => r === 'TH')).toHaveLength(2);
    expect(nodes.find((n) => n.role === 'Figure')?.alt).toBe('Firmenlogo der Beispiel GmbH');
  });

  it('is off unless asked for (the renderer default), and can be turned off explicitly', async () => {
    for (const options of [{}, { tagged: false }]) {
      const navigation = await readNavigation(await renderPdf(TAGGED_DOCUMENT, options));
      expect(navigation.marked).toBe(false);
      expect(structNodes(navigation.structTrees)).toEqual([]);
    }
  });
});

describe('a render without these options', () => {
  it('is the same PDF as with every option off', async () => {
    const plain = await renderPdf(report.html);
    const off = await renderPdf(report.html, { pagedMedia: false, outline: false, tagged: false });
    expect(withoutDates(off)).toBe(withoutDates(plain));
    const [pdf, navigation] = await Promise.all([readPdf(plain), readNavigation(plain)]);
    expect(pdf.pageCount).toBe(NAVIGATED_REPORT_PAGES);
    // Chromium prints 0 for counter(page) and drops a declaration with target-counter(): the
    // document's own CSS, untouched.
    expect(pdf.pages[3]?.text.split('\n')[0]).toBe('Page 0 of 0');
    expect(pdf.pages[0]?.text).not.toContain('.... p.');
    expect(navigation.outline).toEqual([]);
    expect(navigation.marked).toBe(false);
  });
});
