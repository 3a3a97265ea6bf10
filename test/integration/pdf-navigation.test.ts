/**
 * Documents that navigate through POST /v1/pdf (issue 26): `paged_media`, `outline` and `tagged`
 * over HTTP against the real local stack, read back from the stored PDF as a viewer reads it.
 * The renderer's side is test/integration/navigation.test.ts.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { NAVIGATED_REPORT_PAGES, navigatedReport } from '../fixtures/navigated-report.js';
import { type ApiResponse, useLocalStack } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';
import { flattenOutline, readNavigation } from '../helpers/pdf-navigation.js';
import { newAccount, type TestAccount } from '../helpers/template-fixtures.js';

const local = useLocalStack();

let account: TestAccount;
beforeAll(async () => {
  account = await newAccount(local, 'nav');
});

const render = (body: Record<string, unknown>) =>
  local.api('/v1/pdf', { method: 'POST', token: account.key, body });

const pdfBytes = async (res: ApiResponse): Promise<Uint8Array> => {
  expect(res.status, res.text).toBe(201);
  return new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer());
};

const report = navigatedReport();
// The fixture is plain HTML: raw, so that Jinja2 leaves it as it is.
const reportHtml = `{% raw %}${report.html}{% endraw %}`;

describe('POST /v1/pdf with paged_media and outline', () => {
  it('prints the 30-page report with its contents, "Page N of M" and one bookmark per heading', async () => {
    const bytes = await pdfBytes(await render({ html: reportHtml, paged_media: true, outline: true }));
    const pdf = await readPdf(bytes);
    expect(pdf.pageCount).toBe(NAVIGATED_REPORT_PAGES);
    pdf.pages.forEach((page, i) => {
      expect(page.text.split('\n')[0]).toBe(`Page ${i + 1} of ${NAVIGATED_REPORT_PAGES}`);
    });
    // Each contents entry's number is the page its heading is printed on.
    const printedOn = (title: string) =>
      pdf.pages.findIndex((p, i) => i > 0 && p.text.split('\n').includes(title)) + 1;
    const entries = [...(pdf.pages[0]?.text ?? '').matchAll(/^(.+) \.\.\.\. p\. (\d+)$/gm)].map(
      ([, title = '', page]) => ({ title, page: Number(page) }),
    );
    const listed = report.headings.filter((h) => h.level > 1);
    expect(entries.map((e) => e.title)).toEqual(listed.map((h) => h.title));
    for (const entry of entries) expect(entry).toEqual({ title: entry.title, page: printedOn(entry.title) });

    const outline = flattenOutline((await readNavigation(bytes)).outline);
    expect(outline.map((e) => e.title)).toEqual(report.headings.map((h) => h.title));
    for (const entry of outline.slice(1)) expect(entry.page).toBe(printedOn(entry.title));
  });

  it('prints the numbers as 0 and no bookmarks without them (both off by default)', async () => {
    const bytes = await pdfBytes(await render({ html: reportHtml }));
    const pdf = await readPdf(bytes);
    expect(pdf.pages[0]?.text).not.toMatch(/Page 1 of 30/);
    expect((await readNavigation(bytes)).outline).toEqual([]);
  });

  it('tags the PDF when tagged is true', async () => {
    const html = '<html lang="en"><title>Tagged</title><h1>Heading</h1><p>Text</p></html>';
    const tagged = await readNavigation(await pdfBytes(await render({ html, tagged: true })));
    expect(tagged.marked).toBe(true);
    expect(tagged.language).toBe('en');
    const untagged = await readNavigation(await pdfBytes(await render({ html, tagged: false })));
    expect(untagged.marked).toBe(false);
  });

  it("prints the API guide's navigated report as the guide says", async () => {
    const readme = readFileSync(new URL('../../docs/api/pdf.md', import.meta.url), 'utf8');
    const body = /-d '(\{"html": "<html lang=[^\n]*"outline": true\})'/.exec(readme)?.[1];
    if (!body) throw new Error("docs/api/pdf.md's navigated report example is missing");
    const bytes = await pdfBytes(await render(JSON.parse(body)));
    const pdf = await readPdf(bytes);
    expect(pdf.pageCount).toBe(6);
    const contents = pdf.pages[0]?.text ?? '';
    for (const entry of ['Summary … page 2', 'Sales … page 3', 'Operations … page 6']) {
      expect(contents).toContain(entry);
    }
    expect(pdf.pages[1]?.text.split('\n')[0]).toBe('Page 2 of 6');
    expect(pdf.pages[5]?.text.split('\n')[0]).toBe('Page 6 of 6');
    const outline = flattenOutline((await readNavigation(bytes)).outline).map((e) => e.title);
    expect(outline).toEqual(['Annual report 2026', 'Summary', 'Sales', 'Operations']);
  });

  it.each(['paged_media', 'outline', 'tagged'])('refuses a %s that is not a boolean', async (field) => {
    const res = await render({ html: '<p>x</p>', [field]: 'yes' });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('INVALID_PDF_OPTIONS');
    expect(res.json.error.details).toEqual([{ field, issue: 'must be true or false' }]);
  });
});
