import { createHash } from 'node:crypto';
import stringify from 'safe-stable-stringify';
import { describe, expect, it } from 'vitest';
import { errorStatus } from '../../functions/core/responses.js';
import { ServiceError } from '../../functions/domain/common/errors.js';
import {
  checkHeaderFooterMargins,
  renderOptionsFrom,
  withTemplateDefaults,
} from '../../functions/domain/renders/render-options.js';
import { createPdfSchema, parseCreatePdf } from '../../functions/pdf/request.js';
import { parseTemplateData, stringifyTemplateData } from '../../functions/templating/index.js';

const schema = createPdfSchema({ maxInlineHtmlBytes: 1000, maxVariablesBytes: 200 });
/** The options of the render command a body parses into. */
const parse = (body: Record<string, unknown>) => parseCreatePdf(body, schema, {}).options;

const rejection = (body: Record<string, unknown>): ServiceError => {
  try {
    const parsed = parse(body);
    renderOptionsFrom(parsed, 25_000);
  } catch (e) {
    if (e instanceof ServiceError) return e;
    throw e;
  }
  throw new Error(`expected ${JSON.stringify(body)} to be rejected`);
};

describe('POST /v1/pdf body', () => {
  it('applies the spec defaults', () => {
    const options = renderOptionsFrom(parse({ html: '<p>x</p>' }), 25_000);
    expect(options).toEqual({
      pdf: {
        format: 'A4',
        landscape: false,
        printBackground: true,
        margins: { top: 0.4, right: 0.4, bottom: 0.4, left: 0.4 },
      },
      pageLoad: { waitUntil: 'load', timeoutMs: 25_000, waitForSelector: null },
    });
  });

  it('clamps timeout_ms to the render budget silently', () => {
    const body = parse({ html: 'x', page_load: { timeout_ms: 120_000 } });
    expect(renderOptionsFrom(body, 25_000).pageLoad.timeoutMs).toBe(25_000);
    expect(renderOptionsFrom(body, 200_000).pageLoad.timeoutMs).toBe(120_000);
  });

  it.each([
    [{}, 'INVALID_PDF_OPTIONS', 'html'],
    [{ html: 'x', template_id: 'tpl_1' }, 'INVALID_PDF_OPTIONS', 'template_id'],
    [{ html: null, template_id: null }, 'INVALID_PDF_OPTIONS', 'html'],
    [{ html: '' }, 'INVALID_HTML_CONTENT', 'html'],
    [{ html: '   \n' }, 'INVALID_HTML_CONTENT', 'html'],
    [{ html: 42 }, 'INVALID_HTML_CONTENT', 'html'],
    [{ html: 'a\u0000b' }, 'INVALID_HTML_CONTENT', 'html'],
    [{ html: 'é'.repeat(501) }, 'HTML_CONTENT_TOO_LARGE', 'html'],
    [{ html: 'x', variables: [] }, 'INVALID_PDF_OPTIONS', 'variables'],
    [{ html: 'x', variables: 'a' }, 'INVALID_PDF_OPTIONS', 'variables'],
    [{ html: 'x', variables: { big: 'y'.repeat(300) } }, 'INVALID_PDF_OPTIONS', 'variables'],
    [{ html: 'x', format: 'B5' }, 'INVALID_PDF_OPTIONS', 'format'],
    [{ html: 'x', landscape: 'yes' }, 'INVALID_PDF_OPTIONS', 'landscape'],
    [{ html: 'x', print_background: 1 }, 'INVALID_PDF_OPTIONS', 'print_background'],
    [{ html: 'x', margins: { top: -1 } }, 'INVALID_PDF_OPTIONS', 'margins.top'],
    [{ html: 'x', margins: { left: '1' } }, 'INVALID_PDF_OPTIONS', 'margins.left'],
    [{ html: 'x', margins: { top: 11 } }, 'INVALID_PDF_OPTIONS', 'margins.top'],
    [{ html: 'x', margins: { left: 5, right: 5 } }, 'INVALID_PDF_OPTIONS', 'margins'],
    [{ html: 'x', margin: { top: 1 } }, 'INVALID_PDF_OPTIONS', 'margin'],
    [{ html: 'x', page_load: { wait_until: 'idle' } }, 'INVALID_PAGE_LOAD_OPTIONS', 'page_load.wait_until'],
    [{ html: 'x', page_load: { timeout_ms: 999 } }, 'INVALID_PAGE_LOAD_OPTIONS', 'page_load.timeout_ms'],
    [{ html: 'x', page_load: { timeout_ms: 120_001 } }, 'INVALID_PAGE_LOAD_OPTIONS', 'page_load.timeout_ms'],
    [{ html: 'x', page_load: { timeout_ms: 1500.5 } }, 'INVALID_PAGE_LOAD_OPTIONS', 'page_load.timeout_ms'],
    [
      { html: 'x', page_load: { wait_for_selector: ' ' } },
      'INVALID_PAGE_LOAD_OPTIONS',
      'page_load.wait_for_selector',
    ],
    [
      { html: 'x', page_load: { wait_for_selector: `#${'a'.repeat(1000)}` } },
      'INVALID_PAGE_LOAD_OPTIONS',
      'page_load.wait_for_selector',
    ],
    [
      { html: 'x', page_load: { wait_for_selector: 'div[' } },
      'INVALID_PAGE_LOAD_OPTIONS',
      'page_load.wait_for_selector',
    ],
    [{ html: 'x', page_load: { waitUntil: 'load' } }, 'INVALID_PAGE_LOAD_OPTIONS', 'page_load.waitUntil'],
    [{ html: 'x', page_load: 'fast' }, 'INVALID_PAGE_LOAD_OPTIONS', 'page_load'],
    [{ html: 'x', header_html: '' }, 'INVALID_HTML_CONTENT', 'header_html'],
    [{ html: 'x', footer_html: ' \n ' }, 'INVALID_HTML_CONTENT', 'footer_html'],
    [{ html: 'x', footer_html: 7 }, 'INVALID_HTML_CONTENT', 'footer_html'],
    [{ html: 'x', header_html: 'a\u0000b' }, 'INVALID_HTML_CONTENT', 'header_html'],
    [{ html: 'x', header_html: 'h'.repeat(1024 * 1024 + 1) }, 'HTML_CONTENT_TOO_LARGE', 'header_html'],
    [{ template_id: 'tpl_1', footer_html: '<p>f</p>' }, 'INVALID_PDF_OPTIONS', 'footer_html'],
    [{ html: 'x', metadata: 'title' }, 'INVALID_PDF_OPTIONS', 'metadata'],
    [{ html: 'x', metadata: { titel: 'T' } }, 'INVALID_PDF_OPTIONS', 'metadata.titel'],
    [{ html: 'x', metadata: { title: '  ' } }, 'INVALID_PDF_OPTIONS', 'metadata.title'],
    [{ html: 'x', metadata: { author: 'a'.repeat(1001) } }, 'INVALID_PDF_OPTIONS', 'metadata.author'],
    [{ html: 'x', metadata: { subject: 'a\nb' } }, 'INVALID_PDF_OPTIONS', 'metadata.subject'],
    [{ html: 'x', metadata: { keywords: 'a, b' } }, 'INVALID_PDF_OPTIONS', 'metadata.keywords'],
    [{ html: 'x', metadata: { keywords: ['ok', ''] } }, 'INVALID_PDF_OPTIONS', 'metadata.keywords.1'],
    [{ html: 'x', metadata: { keywords: Array(51).fill('k') } }, 'INVALID_PDF_OPTIONS', 'metadata.keywords'],
  ])('%j → %s on %s', (body, code, field) => {
    const e = rejection(body);
    expect(e.code).toBe(code);
    expect(errorStatus[e.code]).toBe(422);
    expect(e.details?.map((d) => d.field)).toContain(field);
    expect(e.message.length).toBeGreaterThan(10);
  });

  it('leaves room for a header and a footer in their margins', () => {
    const options = (margins: Record<string, number>) =>
      renderOptionsFrom(parse({ html: 'x', margins }), 25_000);
    const refused = (margins: Record<string, number>, parts: { header: boolean; footer: boolean }) => {
      try {
        checkHeaderFooterMargins(options(margins), parts);
      } catch (e) {
        return (e as ServiceError).details?.[0]?.field;
      }
      return undefined;
    };
    expect(refused({}, { header: true, footer: true })).toBeUndefined();
    expect(refused({ top: 0.1 }, { header: true, footer: false })).toBe('margins.top');
    expect(refused({ bottom: 0 }, { header: false, footer: true })).toBe('margins.bottom');
    // Without a footer, a bottom margin of 0 is fine.
    expect(refused({ bottom: 0 }, { header: true, footer: false })).toBeUndefined();
  });

  it('carries metadata to the renderer trimmed, and nothing when none is given', () => {
    const with_ = parse({ html: 'x', metadata: { title: ' Q3 ', author: 'Ada', keywords: ['a', 'b'] } });
    expect(renderOptionsFrom(with_, 25_000).metadata).toEqual({
      title: 'Q3',
      author: 'Ada',
      keywords: ['a', 'b'],
    });
    expect(renderOptionsFrom(parse({ html: 'x' }), 25_000).metadata).toBeUndefined();
  });

  it('measures the margins of a landscape page against its wider side', () => {
    // 5 + 5 inches fit across A4 landscape (11.7 in) but not portrait (8.27 in).
    const body = parse({ html: 'x', landscape: true, margins: { left: 5, right: 5 } });
    expect(renderOptionsFrom(body, 25_000).pdf.margins.left).toBe(5);
  });
});

describe('the render command from the body text', () => {
  const command = (text: string, key = 'k-1') =>
    parseCreatePdf(JSON.parse(text), schema, { 'idempotency-key': key }, text);

  it('reads variables as sent: integer-like keys in place, 10.0 a float, big integers exact', () => {
    const { variables } = command('{"html": "x", "variables": {"b": 10.0, "2": 123456789012345678, "1": 1}}');
    // As text for the renderer, which reads it back (parseTemplateData) to the same data.
    expect(variables.text).toBe('{"b":10.0,"2":123456789012345678,"1":1}');
    expect(parseTemplateData(variables.text).keys()).toEqual(['b', '2', '1']);
    expect([variables.has('2'), variables.has('3')]).toEqual([true, false]);
  });

  it('hands on variables JSON.parse reads as sent as JSON.stringify writes them, and still refuses 65 levels', () => {
    const { variables } = command(
      '{"html": "x", "variables": {"b": 10.5, "a": [1, {"k": null}], "s": "1.0"}}',
    );
    expect(variables.text).toBe('{"b":10.5,"a":[1,{"k":null}],"s":"1.0"}');
    expect(variables.changed).toBeUndefined();
    expect(stringifyTemplateData(parseTemplateData(variables.text))).toBe(variables.text);
    const deep = `{"html": "x", "variables": ${'{"a":'.repeat(65)}1${'}'.repeat(65)}}`;
    expect(() => command(deep)).toThrow();
  });

  it('hashes a body as before when JSON.parse reads its variables as the template does', () => {
    const text = '{"html": "x", "variables": {"2": "b", "1": 2.5, "n": [1, {"k": null}]}}';
    const old = createHash('sha256')
      .update(stringify(JSON.parse(text)) ?? '')
      .digest('hex');
    expect(command(text).idempotency?.bodyHash).toBe(old);
  });

  it('hashes a body the same whatever its spacing and key order, and apart from one JSON.parse reads the same', () => {
    const hash = (text: string) => command(text).idempotency?.bodyHash;
    const base = hash('{"html": "x", "variables": {"a": 10.0, "n": 123456789012345678}}');
    expect(hash('{"variables": {"n": 123456789012345678, "a": 1e1}, "html": "x"}')).toBe(base);
    expect(hash('{"html": "x", "variables": {"a": 10, "n": 123456789012345678}}')).not.toBe(base);
    expect(hash('{"html": "x", "variables": {"a": 10.0, "n": 123456789012345679}}')).not.toBe(base);
  });
});

describe("a saved template's pdf_options under a render's own", () => {
  it('are the defaults; the render wins field by field and margin by margin', () => {
    const saved = { format: 'A5', landscape: true, margins: { top: 1, left: 1 }, outline: true } as const;
    expect(withTemplateDefaults(saved, {})).toEqual(saved);
    expect(withTemplateDefaults(saved, { landscape: false, margins: { top: 2 }, tagged: true })).toEqual({
      format: 'A5',
      landscape: false,
      margins: { top: 2, left: 1 },
      outline: true,
      tagged: true,
    });
    expect(withTemplateDefaults(null, { format: 'A3' })).toEqual({ format: 'A3' });
  });

  it('pass the navigation options to the renderer only when given', () => {
    expect(renderOptionsFrom({}, 25_000).pdf).not.toHaveProperty('tagged');
    expect(renderOptionsFrom({}, 25_000).pdf).not.toHaveProperty('pagedMedia');
    expect(renderOptionsFrom({ paged_media: true, outline: false, tagged: false }, 25_000).pdf).toMatchObject(
      {
        pagedMedia: true,
        outline: false,
        tagged: false,
      },
    );
  });
});
