/**
 * Headers and footers over HTTP against the real local stack: `header_html` and `footer_html` are
 * Jinja2 templates executed with the render's variables and printed by Chromium on every page,
 * with its page number, page count, date and title filled in; the same checks as `html` (blank,
 * size, syntax, undefined variables, each naming its field); saved templates carry them,
 * versioned with the html; and a header loads nothing, not even from a host pages may reach.
 */
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { templateSchema } from '../../functions/templates/routes.js';
import { type ApiResponse, useLocalStack } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';
import { useReachableHost } from '../helpers/reachable-host.js';
import { newAccount, type TestAccount } from '../helpers/template-fixtures.js';

/** A host pages may reach, which records every request that reaches it. */
const seen: string[] = [];
const host = useReachableHost((req, res) => {
  seen.push(req.url ?? '');
  res.writeHead(200, { 'content-type': 'image/gif' });
  res.end(Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64'));
});

const local = useLocalStack({ env: host.env });

let account: TestAccount;
beforeAll(async () => {
  account = await newAccount(local, 'hf');
});

const render = (body: Record<string, unknown>, token = account.session) =>
  local.api('/v1/pdf', { method: 'POST', token, body });

const pdfOf = async (res: ApiResponse) => {
  expect(res.status, res.text).toBe(201);
  return readPdf(new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer()));
};

const expectError = (res: ApiResponse, status: number, code: string, detail: Record<string, unknown>) => {
  expect(res.status, res.text).toBe(status);
  expect(res.json.error.code).toBe(code);
  expect(res.json.error.details).toEqual([expect.objectContaining(detail)]);
};

/** The first page's text runs with their height on the page (points from the bottom). */
const linesOf = async (bytes: Uint8Array): Promise<{ text: string; y: number }[]> => {
  const doc = await getDocument({ data: bytes, verbosity: 0, isEvalSupported: false }).promise;
  try {
    const content = await (await doc.getPage(1)).getTextContent();
    return content.items.flatMap((item) =>
      'str' in item && item.str.trim() !== ''
        ? [{ text: item.str.trim(), y: item.transform[5] as number }]
        : [],
    );
  } finally {
    await doc.destroy();
  }
};

/** Three sections, each on a page of its own. */
const THREE_PAGES =
  '<style>section + section { break-before: page; }</style><section>First</section><section>Second</section><section>Third</section>';

const PAGE_N_OF_M =
  '<div style="font-size: 10px; width: 100%; text-align: center">Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>';

describe('header_html and footer_html on POST /v1/pdf', () => {
  it('prints "Page N of M" in the footer of every page, with the right numbers', async () => {
    const pdf = await pdfOf(await render({ html: THREE_PAGES, footer_html: PAGE_N_OF_M }));
    expect(pdf.pageCount).toBe(3);
    expect(pdf.pages.map((p) => p.text)).toEqual([
      'First\nPage 1 of 3',
      'Second\nPage 2 of 3',
      'Third\nPage 3 of 3',
    ]);
  });

  it('templates them with the render’s variables, autoescaped, and fills in the title and date', async () => {
    const res = await render({
      html: '<title>{{ title }}</title><p>Body for {{ customer }}</p>',
      header_html:
        '<div style="font-size: 9px">{{ customer }} · <span class="title"></span> · {% for t in tags %}[{{ t }}]{% endfor %}</div>',
      footer_html: '<div style="font-size: 9px">Printed <span class="date"></span></div>',
      variables: { customer: 'Ada & Co <Ltd>', title: 'Invoice 42', tags: ['a', 'b'] },
    });
    const pdf = await pdfOf(res);
    const [page] = pdf.pages;
    expect(page?.text).toContain('Body for Ada & Co <Ltd>');
    expect(page?.text).toContain('Ada & Co <Ltd> · Invoice 42 · [a][b]');
    // Chromium's date, in the renderer's locale (en-US) and time zone.
    expect(page?.text).toMatch(/Printed \d{1,2}\/\d{1,2}\/\d{2}, \d{1,2}:\d{2} [AP]M/);
  });

  it('prints a header alone (no default footer) inside the top margin, clear of the body', async () => {
    const res = await render({
      html: '<p style="margin: 0">Body</p>',
      header_html: '<div style="font-size: 10px">Only a header</div>',
      margins: { top: 1, bottom: 0.4, left: 0.4, right: 0.4 },
    });
    expect(res.status, res.text).toBe(201);
    const lines = await linesOf(new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer()));
    // Nothing but the two: Chromium's default footer (the URL and page numbers) is not printed.
    expect(lines.map((l) => l.text).sort()).toEqual(['Body', 'Only a header']);
    const top = 842; // A4, points
    const header = lines.find((l) => l.text === 'Only a header')?.y ?? 0;
    const body = lines.find((l) => l.text === 'Body')?.y ?? top;
    expect(header).toBeGreaterThan(top - 72); // inside the 1-inch top margin
    expect(body).toBeLessThan(top - 72);
  });

  describe('are checked as html is, each naming its field', () => {
    it.each([
      ['a blank header', { header_html: ' \n ' }, 'INVALID_HTML_CONTENT', { field: 'header_html' }],
      [
        'a footer that is not a string',
        { footer_html: ['x'] },
        'INVALID_HTML_CONTENT',
        { field: 'footer_html' },
      ],
      ['a NUL in a footer', { footer_html: 'a\u0000b' }, 'INVALID_HTML_CONTENT', { field: 'footer_html' }],
      [
        'a header over 1 MiB',
        { header_html: `<p>${'x'.repeat(1024 * 1024)}</p>` },
        'HTML_CONTENT_TOO_LARGE',
        { field: 'header_html' },
      ],
      [
        'a syntax error in a header, with its line',
        { header_html: '<div>\n{% if %}\n</div>' },
        'INVALID_HTML_TEMPLATE',
        { field: 'header_html', line: 2 },
      ],
      [
        'an undefined variable in a footer, named, with its line',
        { footer_html: '<div>\n\n{{ page_label }}</div>' },
        'INVALID_HTML_TEMPLATE',
        { field: 'footer_html', line: 3, name: 'page_label' },
      ],
      [
        'a top margin with no room for the header',
        { header_html: '<p>h</p>', margins: { top: 0.1 } },
        'INVALID_PDF_OPTIONS',
        { field: 'margins.top' },
      ],
      [
        'a bottom margin with no room for the footer',
        { footer_html: '<p>f</p>', margins: { bottom: 0 } },
        'INVALID_PDF_OPTIONS',
        { field: 'margins.bottom' },
      ],
    ])('%s → 422', async (_, fields, code, detail) => {
      const before = (await local.api('/v1/pdf', { token: account.session })).json.length;
      const res = await render({ html: '<p>body</p>', ...fields });
      expectError(res, 422, code, detail);
      if (code === 'INVALID_HTML_TEMPLATE') expect(res.json.error.message).toMatch(/^(header|footer)_html: /);
      // Found before the quota: no job.
      expect(res.json.error.job_id).toBeUndefined();
      expect((await local.api('/v1/pdf', { token: account.session })).json).toHaveLength(before);
    });

    it('a header with template_id → 422 INVALID_PDF_OPTIONS (a saved template brings its own)', async () => {
      const res = await render({ template_id: 'tpl_01M803B7X5J9W2Q4N6C8E0R3TA', header_html: '<p>h</p>' });
      expectError(res, 422, 'INVALID_PDF_OPTIONS', { field: 'header_html' });
    });

    it('what only running finds fails the job, naming the footer', async () => {
      const res = await render({
        html: '<p>body</p>',
        footer_html: '<div>{{ 1 / zero }}</div>',
        variables: { zero: 0 },
      });
      expect(res.status, res.text).toBe(422);
      expect(res.json.error.code).toBe('INVALID_HTML_TEMPLATE');
      expect(res.json.error.message).toBe(
        'footer_html: Template error (line 1): ZeroDivisionError: division by zero',
      );
      expect(res.json.error.details).toEqual([expect.objectContaining({ field: 'footer_html', line: 1 })]);
      const job = (await local.api(`/v1/pdf/${res.json.error.job_id}`, { token: account.session })).json;
      expect(job).toMatchObject({
        status: 'failed',
        error: { code: 'INVALID_HTML_TEMPLATE' },
        diagnostics: null,
      });
    });
  });

  describe('load nothing', () => {
    it('not an image from a host pages may reach (the body’s loads), nor from a private address', async () => {
      seen.length = 0;
      const res = await render({
        html: `<p>Body</p><img src="http://${host.hostPort}/body.gif">`,
        header_html: `<div style="font-size: 10px">Header <img src="http://${host.hostPort}/header.gif"><img src="http://10.0.0.1/header.gif"></div>`,
        footer_html: `<div style="font-size: 10px; background: url(http://${host.hostPort}/footer.gif)">Footer <img src="http://169.254.169.254/latest/meta-data/"></div>`,
        page_load: { wait_until: 'networkidle0' },
      });
      const pdf = await pdfOf(res);
      expect(pdf.text).toContain('Header');
      expect(pdf.text).toContain('Footer');
      expect(seen).toEqual(['/body.gif']);
      // Nothing of the header or footer asked for anything the page's interception saw either.
      expect(JSON.stringify(res.json.diagnostics)).not.toMatch(/header|footer|10\.0\.0\.1|169\.254/);
    });

    it('a header that would load a stylesheet fails the render with a message that says why', async () => {
      seen.length = 0;
      const res = await render({
        html: '<p>Body</p>',
        header_html: `<link rel="stylesheet" href="http://${host.hostPort}/header.css"><div>Header</div>`,
      });
      expect(res.status, res.text).toBe(502);
      expect(res.json.error.code).toBe('PDF_RENDERING_FAILED');
      expect(res.json.error.message).toMatch(/header or footer.*cannot load anything/);
      expect(seen).toEqual([]);
      // The page itself was fine: the next render prints.
      expect((await render({ html: '<p>next</p>', footer_html: PAGE_N_OF_M })).status).toBe(201);
    });
  });
});

describe('saved templates with a header and a footer', () => {
  const create = (body: Record<string, unknown>) =>
    local.api('/v1/templates', { method: 'POST', token: account.session, body: { name: 'Report', ...body } });

  it('are saved and read back with the variables they read, render with them, and version with the html', async () => {
    const saved = await create({
      html: '<p>Report for {{ customer }}</p>',
      footer_html:
        '<div style="font-size: 10px">{{ company }}: page <span class="pageNumber"></span> of <span class="totalPages"></span></div>',
    });
    expect(saved.status, saved.text).toBe(201);
    const t = saved.json;
    expect(() => templateSchema.strict().parse(t)).not.toThrow();
    expect(t).toMatchObject({ version: 1, header_html: null, variables: ['company', 'customer'] });
    expect((await local.api(`/v1/templates/${t.id}`, { token: account.key })).json).toEqual(t);

    const v1 = await pdfOf(
      await render({ template_id: t.id, variables: { customer: 'Ada', company: 'Acme' } }),
    );
    expect(v1.pages[0]?.text).toBe('Report for Ada\nAcme: page 1 of 1');
    // The footer's variables are required as the html's are.
    const missing = await render({ template_id: t.id, variables: { customer: 'Ada' } });
    expectError(missing, 422, 'INVALID_HTML_TEMPLATE', { field: 'footer_html', name: 'company' });

    // A PATCH of the header alone: a new version with the html and footer it had.
    const withHeader = await local.api(`/v1/templates/${t.id}`, {
      method: 'PATCH',
      token: account.session,
      body: { header_html: '<div style="font-size: 10px">Confidential: {{ customer }}</div>' },
    });
    expect(withHeader.status, withHeader.text).toBe(200);
    expect(withHeader.json).toMatchObject({ version: 2, html: t.html, footer_html: t.footer_html });
    const v2 = await pdfOf(
      await render({ template_id: t.id, variables: { customer: 'Ada', company: 'Acme' } }),
    );
    // Text comes in the order Chromium draws it: the body, then the header and footer.
    expect(v2.pages[0]?.text).toBe('Report for Ada\nConfidential: Ada\nAcme: page 1 of 1');

    // null removes the footer (version 3), and its variable with it; version 1 renders as it was.
    const noFooter = await local.api(`/v1/templates/${t.id}`, {
      method: 'PATCH',
      token: account.session,
      body: { footer_html: null },
    });
    expect(noFooter.json).toMatchObject({ version: 3, footer_html: null, variables: ['customer'] });
    const v3 = await pdfOf(await render({ template_id: t.id, variables: { customer: 'Ada' } }));
    expect(v3.pages[0]?.text).toBe('Report for Ada\nConfidential: Ada');
    const again = await pdfOf(
      await render({
        template_id: t.id,
        template_version: 1,
        variables: { customer: 'Ada', company: 'Acme' },
      }),
    );
    expect(again.pages[0]?.text).toBe('Report for Ada\nAcme: page 1 of 1');

    // A new name alone keeps the version and the parts.
    const renamed = await local.api(`/v1/templates/${t.id}`, {
      method: 'PATCH',
      token: account.session,
      body: { name: 'Report, renamed' },
    });
    expect(renamed.json).toMatchObject({
      version: 3,
      header_html: withHeader.json.header_html,
      footer_html: null,
    });
  });

  it('are checked on save and on PATCH, naming the field, before the template is looked up', async () => {
    expectError(await create({ html: '<p>x</p>', header_html: '' }), 422, 'INVALID_HTML_CONTENT', {
      field: 'header_html',
    });
    expectError(
      await create({ html: '<p>x</p>', footer_html: '<p>\n{% for %}</p>' }),
      422,
      'INVALID_HTML_TEMPLATE',
      { field: 'footer_html', line: 2 },
    );
    expectError(
      await local.api('/v1/templates/tpl_01M803B7X5J9W2Q4N6C8E0R3TA', {
        method: 'PATCH',
        token: account.session,
        body: { footer_html: '{{ x' },
      }),
      422,
      'INVALID_HTML_TEMPLATE',
      { field: 'footer_html' },
    );
    // Valid, but no such template.
    const missing = await local.api('/v1/templates/tpl_01M803B7X5J9W2Q4N6C8E0R3TA', {
      method: 'PATCH',
      token: account.session,
      body: { footer_html: '<p>f</p>' },
    });
    expect(missing.status).toBe(404);
  });

  it('another account cannot edit a public template’s footer', async () => {
    const saved = await create({ html: '<p>shared</p>', footer_html: '<p>mine</p>', is_public: true });
    const other = await newAccount(local, 'hf-other');
    const res = await local.api(`/v1/templates/${saved.json.id}`, {
      method: 'PATCH',
      token: other.session,
      body: { footer_html: '<p>theirs</p>' },
    });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('PDF_TEMPLATE_NOT_FOUND');
    expect((await local.api(`/v1/templates/${saved.json.id}`, { token: other.key })).json.footer_html).toBe(
      '<p>mine</p>',
    );
  });
});
