/**
 * Each place where the templating engine is documented to differ from Jinja2 3.1.6 (docs/templating.md,
 * "Where the service still differs from Jinja2"; test/templating/DIFFERENCES.md): the
 * behaviour the documentation promises, one test per item, so that the list and the engine cannot drift
 * apart. What Jinja2 itself does is in the differential suite's goldens.
 */
import { describe, expect, it } from 'vitest';
import { parseTemplateData, renderTemplate, TemplateError } from '../../functions/templating/index.js';

const render = (template: string, json = '{}') => renderTemplate(template, parseTemplateData(json));
const failure = (template: string, json = '{}'): TemplateError => {
  try {
    render(template, json);
  } catch (e) {
    if (e instanceof TemplateError) return e;
    throw e;
  }
  throw new Error(`rendered: ${template}`);
};

describe('where the engine differs from Jinja2, as docs/templating.md says', () => {
  it('resolves \\N{…} by the names CPython lists, and refuses a name alias as an unknown name', () => {
    expect(
      render(
        "{{ '\\N{EURO SIGN}\\N{grinning face}' }} {{ '\\N{HANGUL SYLLABLE GA}\\N{CJK UNIFIED IDEOGRAPH-4E00}' }}",
      ),
    ).toBe('€😀 가一');
    for (const alias of ['NBSP', 'LINE FEED', 'BYTE ORDER MARK']) {
      const e = failure(`{{ 'a' }}\n{{ '\\N{${alias}}' }}`);
      expect(e.kind).toBe('syntax');
      expect(e.line).toBe(2);
      expect(e.message).toContain('unknown Unicode character name');
    }
    // The character itself, or its \u escape, always works.
    expect(render("{{ '\\u00a0' == '\u00a0' }}")).toBe('True');
  });

  it("gives str.encode()'s bytes as their repr, whose length is the text's", () => {
    expect(render("{{ 'é'.encode() }} {{ 'é'.encode()|length }}")).toBe('b&#39;\\xc3\\xa9&#39; 11');
    expect(render("{{ (1024).to_bytes(2, 'big') }}")).toBe('b&#39;\\x04\\x00&#39;');
    // int.from_bytes reads a list of ints, there being no bytes to give it.
    expect(render("{{ (1).from_bytes([1, 0], 'big') }}")).toBe('256');
  });

  it('draws its own random text and items for lipsum() and random', () => {
    expect(render('{{ lipsum(1, false, 5, 5)|wordcount }}')).toBe('5');
    expect(['1', '2', '3']).toContain(render('{{ [1, 2, 3]|random }}'));
  });

  it('fails extends, include and import as Jinja2 does with no loader', () => {
    for (const t of ["{% extends 'base.html' %}", "{% include 'x.html' %}", "{% import 'm.html' as m %}"]) {
      const e = failure(t);
      expect(e.kind).toBe('runtime');
      expect(e.message).toContain('no loader for this environment specified');
    }
  });

  it('caps ints at 100,000 bits', () => {
    expect(render('{{ (2 ** 99999).bit_length() }}')).toBe('100000');
    expect(failure('{% set x = (2 ** 99999) * 4 %}').kind).toBe('limit');
  });

  it('makes range() results and dict views lists underneath', () => {
    // They print, slice and test as Python's do...
    expect(render('{{ range(3) }} {{ range(5)[1:3] }} {{ d.keys() }}', '{"d": {"a": 1}}')).toBe(
      'range(0, 3) range(1, 3) dict_keys([&#39;a&#39;])',
    );
    expect(render('{{ d.keys() is sequence }} {{ d.keys() is iterable }}', '{"d": {"a": 1}}')).toBe(
      'False True',
    );
    expect(failure('{{ d.keys()[0] }}', '{"d": {"a": 1}}').kind).toBe('undefined');
    // ...but compare equal to lists, concatenate with +, and a view keeps what its dict held.
    expect(render('{{ range(3) == [0, 1, 2] }} {{ d.keys() == ["a"] }}', '{"d": {"a": 1}}')).toBe(
      'True True',
    );
    expect(render('{{ range(2) + [5] }}')).toBe('[0, 1, 5]');
    expect(
      render('{% set v = d.keys() %}{% set _ = d.update({"b": 2}) %}{{ v|list }}', '{"d": {"a": 1}}'),
    ).toBe('[&#39;a&#39;]');
    // A view's mapping is a copy of its dict, which prints as the dict does.
    expect(render('{{ d.keys().mapping }} {{ d.keys().mapping is mapping }}', '{"d": {"a": 1}}')).toBe(
      '{&#39;a&#39;: 1} True',
    );
  });

  it('makes the generators of map, select, reject, batch, slice, unique and reverse lists', () => {
    expect(render("{{ [1, 2]|map('string')|list }} {{ [1, 2]|map('string') is sequence }}")).toBe(
      '[&#39;1&#39;, &#39;2&#39;] True',
    );
    expect(render('{{ [1, 2, 3]|select("odd")|length }} {{ [1, 2]|reverse|first }}')).toBe('2 2');
    // Read twice, a generator would be empty the second time; a list is not.
    expect(render("{% set g = [1, 2]|map('string') %}{{ g|join }}{{ g|join }}")).toBe('1212');
  });

  it("follows Node's Unicode for case mapping: characters newer than Python 3.11's Unicode 14 are cased", () => {
    // U+A7D6 LATIN CAPITAL LETTER MIDDLE SCOTS S (Unicode 15.0): Python 3.11 leaves it as it is.
    expect(render("{{ '\\ua7d6'.lower() == '\\ua7d7' }}")).toBe('True');
    // Older characters follow Python exactly, titlecase and folding included.
    expect(render("{{ 'ß'|capitalize }} {{ 'ǆemal'.title() }} {{ 'ſ'.casefold() }}")).toBe('Ss ǅemal s');
  });
});
