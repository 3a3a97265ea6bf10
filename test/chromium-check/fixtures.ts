/**
 * The documents `npm run chromium:check` prints with each Chromium: what customers' documents
 * lean on and a new Chromium could move (every script's fonts and shaping, header and footer
 * templates, page numbers filled into a table of contents, tagging, and the starter templates in
 * docs/templates/). Each is a render request's body as the API takes it, so the check prints what
 * the service prints.
 */
import { readFileSync } from 'node:fs';
import { loadFixtures } from '../bench/fixtures/index.js';
import { validInvoice } from '../fixtures/e-invoice.js';
import { multilingualHtml } from '../fixtures/multilingual.js';

export interface CheckFixture {
  readonly name: string;
  readonly description: string;
  /** The API's body: `html`, `variables` and the print options (snake_case). */
  readonly body: {
    readonly html: string;
    readonly variables?: Record<string, unknown>;
    readonly header_html?: string;
    readonly footer_html?: string;
    readonly [option: string]: unknown;
  };
  /**
   * The share of a page's pixels that may differ from its baseline (pixelmatch, anti-aliasing
   * ignored). The same Chromium prints the same pixels (0 measured, run after run); at 40 dpi an
   * A4 page has ~155,000 pixels and one changed digit is ~15 of them (0.01%), a glyph from
   * another font or a line broken elsewhere many more.
   */
  readonly maxDiffRatio: number;
}

const invoice = loadFixtures().find((f) => f.name === 'invoice');
if (!invoice) throw new Error('chromium:check: the bench has no invoice fixture');

const SECTIONS = [
  { name: 'Summary', paragraphs: 3 },
  { name: 'Sales', paragraphs: 60 },
  { name: 'Operations', paragraphs: 5 },
];

/** The README's table of contents (Documents that navigate): page numbers from target-counter(). */
const TOC_TEMPLATE =
  '<html lang="en"><title>{{ title }}</title><style>nav a { display: block } ' +
  'nav a::after { content: " … page " target-counter(attr(href), page) } ' +
  '.folio::after { content: "Page " counter(page) " of " counter(pages) } section { break-before: page }</style>' +
  '<h1>{{ title }}</h1><nav>{% for s in sections %}<a href="#s{{ loop.index }}">{{ s.name }}</a>{% endfor %}</nav>' +
  '{% for s in sections %}<section><p class="folio"></p><h2 id="s{{ loop.index }}">{{ s.name }}</h2>' +
  '{% for i in range(s.paragraphs) %}<p>{{ s.name }}, paragraph {{ i + 1 }}.</p>{% endfor %}</section>{% endfor %}';

const LONG_TABLE =
  '<html lang="en"><style>body { font-family: serif } td { border-bottom: 1px solid #ccc; padding: 2mm }</style>' +
  '<h1>Statement</h1><table>{% for i in range(90) %}<tr><td>{{ i + 1 }}</td><td>Item number {{ i + 1 }}</td>' +
  '<td style="text-align:right">{{ "%.2f" | format(i * 3.25) }}</td></tr>{% endfor %}</table>';

export const CHECK_FIXTURES: readonly CheckFixture[] = [
  {
    name: 'scripts',
    description:
      "every script the layer's fonts cover, by fallback and named (test/fixtures/multilingual.ts)",
    body: { html: multilingualHtml() },
    maxDiffRatio: 0.0005,
  },
  {
    name: 'header-footer',
    description: 'a 3-page statement with header and footer templates: title, page number of total',
    body: {
      html: LONG_TABLE,
      header_html:
        '<div style="font-size:9px;width:100%;text-align:center"><span class="title"></span> — ACME Ltd</div>',
      footer_html:
        '<div style="font-size:9px;width:100%;text-align:center">Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>',
      margins: { top: 0.8, right: 0.5, bottom: 0.8, left: 0.5 },
    },
    maxDiffRatio: 0.0005,
  },
  {
    name: 'toc',
    description: "the README's table of contents: target-counter() page numbers, counter(pages), an outline",
    body: {
      html: TOC_TEMPLATE,
      variables: { title: 'Annual report 2026', sections: SECTIONS },
      paged_media: true,
      outline: true,
    },
    // A page number in the table of contents is a few pixels: any change must show.
    maxDiffRatio: 0.00005,
  },
  {
    name: 'tagged',
    description: "the bench's invoice printed tagged (accessible)",
    body: { ...(invoice.body as CheckFixture['body']), tagged: true },
    maxDiffRatio: 0.0005,
  },
  {
    name: 'starter-e-invoice',
    description: 'docs/templates/e-invoice.html with the e-invoice tests’ valid invoice',
    body: {
      html: readFileSync(new URL('../../docs/templates/e-invoice.html', import.meta.url), 'utf8'),
      variables: validInvoice(),
    },
    maxDiffRatio: 0.0005,
  },
];
