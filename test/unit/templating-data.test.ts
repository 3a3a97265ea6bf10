import { describe, expect, it } from 'vitest';
import { jsonMemberText as templateDataMemberText } from '../../functions/domain/common/json-member.js';
import { JsonText, stringifyWithJsonText } from '../../functions/domain/common/json-text.js';
import {
  parseTemplateData,
  readTemplateDataText,
  renderTemplate,
  stringifyTemplateData,
  TemplateDataError,
} from '../../functions/templating/index.js';

const render = (template: string, json: string) => renderTemplate(template, parseTemplateData(json));

describe('template data read as JSON means it', () => {
  it('keeps the order of keys as sent, integer-like keys included', () => {
    const json = '{"totals": {"2024": 5, "2023": 4, "2019": 1, "b": 0, "10": 2}}';
    expect(render('{% for y, t in totals.items() %}{{ y }}={{ t }} {% endfor %}', json)).toBe(
      '2024=5 2023=4 2019=1 b=0 10=2 ',
    );
    expect(render('{{ totals }}', '{"totals": {"3": 1, "1": 2}}')).toBe('{&#39;3&#39;: 1, &#39;1&#39;: 2}');
  });

  it('keeps 10.0 and 1e3 floats, -0 an int and big integers exact', () => {
    const json = '{"a": 10.0, "b": 1e3, "c": 123456789012345678, "d": -0, "e": 2.50, "f": -1E-2, "g": [1.0]}';
    expect(render('{{ a }} {{ b }} {{ c }} {{ d }} {{ e }} {{ f }} {{ g }} {{ c + 1 }}', json)).toBe(
      '10.0 1000.0 123456789012345678 0 2.5 -0.01 [1.0] 123456789012345679',
    );
    expect(render('{{ a is float }} {{ c is integer }}', json)).toBe('True True');
  });

  it('takes the fast path when nothing is lost, and the same values either way', () => {
    const plain = '{"n": 3, "s": "text with 1.0 in it", "l": [1, 2.5, {"k": null, "t": true}]}';
    expect(render('{{ n }} {{ s }} {{ l }}', plain)).toBe(
      '3 text with 1.0 in it [1, 2.5, {&#39;k&#39;: None, &#39;t&#39;: True}]',
    );
  });

  it('reads one member of a whole body, and says when it is absent', () => {
    const body =
      '{"html": "<p style=\\"margin: 1.0em\\">x</p>", "variables": {"2": "b", "1": "a", "x": 1.0}}';
    const data = parseTemplateData(body, { member: 'variables' });
    expect(data && renderTemplate('{{ x }}{% for k in range(1, 3) %}{% endfor %}', data)).toBe('1.0');
    expect(data && stringifyTemplateData(data)).toBe('{"2":"b","1":"a","x":1.0}');
    expect(parseTemplateData('{"html": "x"}', { member: 'variables' })).toBeUndefined();
    expect(parseTemplateData('{"variables": null}', { member: 'variables' })).toBeUndefined();
  });

  it('writes JSON text that reads back to the same data', () => {
    const json = '{"z":1,"0":[1.0,1e+300,-2,12345678901234567890,"é\\n"],"a":{"5":false,"k":null}}';
    const text = stringifyTemplateData(parseTemplateData(json));
    expect(text).toBe('{"z":1,"0":[1.0,1e+300,-2,12345678901234567890,"é\\n"],"a":{"5":false,"k":null}}');
    expect(stringifyTemplateData(parseTemplateData(text))).toBe(text);
  });

  it('keeps a float beyond the doubles as inf (Python reads 1e400 so), not as null', () => {
    const sent = readTemplateDataText('{"a":1e400,"b":-1e400,"c":null}').text;
    expect(sent).toBe('{"a":1e999,"b":-1e999,"c":null}');
    expect(render('{{ a }} {{ b }} {{ c }}', sent)).toBe('inf -inf None');
  });

  it('keeps the sign of a negative zero float (and reads an int -0 as 0, as Python does)', () => {
    const sent = readTemplateDataText('{"a":-0.0,"b":-0e0,"c":-0,"d":[-0.0]}').text;
    expect(sent).toBe('{"a":-0.0,"b":-0.0,"c":0,"d":[-0.0]}');
    expect(renderTemplate('{{ a }} {{ b }} {{ c }} {{ d }}', parseTemplateData(sent))).toBe(
      '-0.0 -0.0 0 [-0.0]',
    );
  });

  it('refuses what is not a JSON object, and nesting deeper than 64 levels', () => {
    const reason = (text: string, options = {}) => {
      try {
        parseTemplateData(text, options);
        return 'read';
      } catch (e) {
        return e instanceof TemplateDataError ? e.reason : 'other';
      }
    };
    expect(reason('{"a": ')).toBe('json');
    expect(reason('[1]')).toBe('object');
    expect(reason('{"a": 1} x')).toBe('json');
    const nest = (n: number, leaf: string) => `${'{"a":'.repeat(n - 1)}${leaf}${'}'.repeat(n - 1)}`;
    expect(reason(nest(64, '{}'))).toBe('read');
    expect(reason(nest(65, '{}'))).toBe('depth');
    // The slow path (a float that JSON.parse would make an int) counts the same way.
    expect(reason(nest(64, '{"f": 1.0}'))).toBe('read');
    expect(reason(nest(65, '{"f": 1.0}'))).toBe('depth');
    expect(reason(`{"v": ${nest(64, '{}')}}`, { member: 'v' })).toBe('read');
    expect(reason(`{"v": ${nest(65, '{"f": 1.0}')}}`, { member: 'v' })).toBe('depth');
    expect(reason(nest(100_000, '1'))).toBe('depth');
  });
});

describe('template data with integer-like keys', () => {
  it('keeps them in place on every path: marked keys, a key that looks marked, and the source reader', () => {
    const keys = (json: string) => render('{% for k in d %}{{ k }},{% endfor %}', json);
    expect(keys('{"d": {"b": 1, "2": {"10": 1, "9": 2}, "1": [{"3": 0, "a": 1}]}}')).toBe('b,2,1,');
    expect(render('{{ d }}', '{"d": {"b": 1, "2": {"10": 1, "9": 2}}}')).toBe(
      '{&#39;b&#39;: 1, &#39;2&#39;: {&#39;10&#39;: 1, &#39;9&#39;: 2}}',
    );
    // A real key that starts with U+0001 keeps its mark; the reader then takes the source path.
    expect(render('{{ d|list|map("length")|list }}', '{"d": {"\\u00012": 1, "1": 2}}')).toBe('[2, 1]');
    // A big int next to integer-like keys: marked keys first, then the source reader.
    expect(render('{{ d }}', '{"d": {"2": 123456789012345678, "1": 0}}')).toBe(
      '{&#39;2&#39;: 123456789012345678, &#39;1&#39;: 0}',
    );
    expect(render('{{ "2" in d }} {{ d["2"] }}', '{"d": {"2": "x", "1": "y"}}')).toBe('True x');
  });
});

describe('numbers JSON.parse would change, found in the text', () => {
  it('marks only numbers outside strings, whatever the strings hold', () => {
    const json =
      '{"s": "a: 10.0, b: [1e3] \\"x\\": 123456789012345678,", "t": "\\\\", "a": 10.0, "l": [1e3, 2.50, -0.0, 9007199254740993]}';
    expect(render('{{ s }}|{{ t }}|{{ a }}|{{ l }}', json)).toBe(
      'a: 10.0, b: [1e3] &#34;x&#34;: 123456789012345678,|\\|10.0|[1000.0, 2.5, -0.0, 9007199254740993]',
    );
  });

  it('reads the member of a body whose html holds such numbers as text', () => {
    const body = '{"html": "<p>Total: 10.0 EUR, 1e3 g</p>", "variables": {"n": 1}}';
    expect(stringifyTemplateData(parseTemplateData(body, { member: 'variables' }) as never)).toBe('{"n":1}');
  });

  it('still refuses invalid JSON where a marked number would have been valid', () => {
    expect(() => parseTemplateData('{"a": 1, 1.0: 2}')).toThrow(TemplateDataError);
    expect(() => parseTemplateData('{"a": 1.0,}')).toThrow(TemplateDataError);
  });
});

describe("a member's text as sent (a template's sample_variables)", () => {
  it('keeps key order and every number as written, without the whitespace between tokens', () => {
    const body =
      '{"name": "x", "sample_variables": { "t": {"2024": 5, "2019": 1}, "n": 10.0, "e": 1E3, "id": 123456789012345678, "s": "a  \\" b" }}';
    expect(templateDataMemberText(body, 'sample_variables')).toBe(
      '{"t":{"2024":5,"2019":1},"n":10.0,"e":1E3,"id":123456789012345678,"s":"a  \\" b"}',
    );
  });

  it('takes the last of a member given twice (as JSON.parse does), and says when it is absent or null', () => {
    expect(templateDataMemberText('{"s": {"a": 1}, "s": {"b": [2]}}', 's')).toBe('{"b":[2]}');
    expect(templateDataMemberText('{"s": {"a": 1}, "s": null}', 's')).toBeUndefined();
    expect(templateDataMemberText('{"x": {"s": {"a": 1}}}', 's')).toBeUndefined();
  });
});

describe('answers that carry JSON text', () => {
  it('writes each JsonText as its text, wherever it sits, and everything else as JSON.stringify does', () => {
    const sample = new JsonText('{"2024":5,"2019":1,"n":10.0}');
    expect(stringifyWithJsonText([{ a: 'json-text', sample }, { sample: null }, sample])).toBe(
      '[{"a":"json-text","sample":{"2024":5,"2019":1,"n":10.0}},{"sample":null},{"2024":5,"2019":1,"n":10.0}]',
    );
    expect(stringifyWithJsonText({ a: 1 })).toBe('{"a":1}');
  });
});
