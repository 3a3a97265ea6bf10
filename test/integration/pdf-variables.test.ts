/**
 * `variables` read as JSON means them, end to end over HTTP (issue 22): the API reads them from the
 * body's text, hands them to the renderer as text that keeps them, and the templating worker reads
 * that back. Keys keep the order they were sent in (integer-like ones too, which a JavaScript
 * object moves to the front), `10.0` and `1e3` stay floats, and integers keep every digit; in the
 * html, in a header or footer, and through a saved template. Bodies are sent as text: a JavaScript
 * object could not even write them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, useLocalStack } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';
import { newAccount, type TestAccount } from '../helpers/template-fixtures.js';

const local = useLocalStack();

let account: TestAccount;
beforeAll(async () => {
  account = await newAccount(local, 'vars');
});

const JSON_TYPE = { 'content-type': 'application/json' };

/** POST /v1/pdf with `fields` (JSON text of the body's other members) and `variables` as written. */
const render = (fields: Record<string, unknown>, variables: string, headers: Record<string, string> = {}) =>
  local.api('/v1/pdf', {
    method: 'POST',
    token: account.key,
    headers: { ...JSON_TYPE, ...headers },
    body: `${JSON.stringify(fields).slice(0, -1)}, "variables": ${variables}}`,
  });

const textOf = async (res: ApiResponse): Promise<string> => {
  expect(res.status, res.text).toBe(201);
  return (await readPdf(new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer()))).text;
};

const REPORT = '{"totals": {"2024": 5, "2023": 4, "2019": 1}}';
const BY_YEAR = '{% for y, t in totals.items() %}[{{ y }}:{{ t }}]{% endfor %}';
const NUMBERS = '{"price": 10.0, "grams": 1e3, "order": 123456789012345678}';
const SHOW_NUMBERS = '{{ price }} {{ grams }} {{ order }} {{ order + 1 }}';
/** Nested: years keyed by integer-like strings, inside a list, with a float and a big int beside them. */
const NESTED =
  '{"report": {"rows": [{"years": {"2024": 10.0, "2023": 123456789012345678}}], "9": "nine", "1": "one"}}';
const SHOW_NESTED =
  '{% for k in report %}{{ k }};{% endfor %}{% for y, v in report.rows[0].years.items() %}({{ y }}={{ v }}){% endfor %}';

describe('variables keep key order, floats and big integers', () => {
  it('prints a report keyed by year in the order sent', async () => {
    const text = await textOf(await render({ html: `<p>${BY_YEAR}</p>` }, REPORT));
    expect(text).toContain('[2024:5][2023:4][2019:1]');
  });

  it('prints 10.0 as 10.0, 1e3 as 1000.0, and an order number of 18 digits exactly', async () => {
    const text = await textOf(await render({ html: `<p>${SHOW_NUMBERS}</p>` }, NUMBERS));
    expect(text).toContain('10.0 1000.0 123456789012345678 123456789012345679');
  });

  it('keeps a nested structure in a header and a footer too', async () => {
    const text = await textOf(
      await render(
        {
          html: '<p>body</p>',
          header_html: `<div style="font-size: 9px">H ${SHOW_NESTED}</div>`,
          footer_html: `<div style="font-size: 9px">F ${SHOW_NESTED}</div>`,
        },
        NESTED,
      ),
    );
    expect(text).toContain('H rows;9;1;(2024=10.0)(2023=123456789012345678)');
    expect(text).toContain('F rows;9;1;(2024=10.0)(2023=123456789012345678)');
  });

  it('does the same through a saved template rendered by template_id (its header included)', async () => {
    const saved = await local.api('/v1/templates', {
      method: 'POST',
      token: account.session,
      body: {
        name: 'by year',
        html: `<p>${BY_YEAR} ${SHOW_NUMBERS}</p>`,
        header_html: `<div style="font-size: 9px">H ${SHOW_NESTED}</div>`,
      },
    });
    expect(saved.status, saved.text).toBe(201);
    const variables = `{${REPORT.slice(1, -1)}, ${NUMBERS.slice(1, -1)}, ${NESTED.slice(1, -1)}}`;
    const text = await textOf(await render({ template_id: saved.json.id }, variables));
    expect(text).toContain('[2024:5][2023:4][2019:1] 10.0 1000.0 123456789012345678 123456789012345679');
    expect(text).toContain('H rows;9;1;(2024=10.0)(2023=123456789012345678)');
  });

  it('looks a required variable up by its name whatever its key looks like', async () => {
    const res = await render({ html: '<p>{{ x }}</p>' }, '{"2": 1, "x": 2.0}');
    expect(await textOf(res)).toContain('2.0');
    const missing = await render({ html: '<p>{{ x }}</p>' }, '{"2": 1}');
    expect(missing.status, missing.text).toBe(422);
    expect(missing.json.error.message).toBe("Variable 'x' is undefined (line 1)");
  });
});

describe('an Idempotency-Key with such variables', () => {
  it('replays the same body, and refuses a body that differs only where JSON.parse could not tell', async () => {
    const key = { 'Idempotency-Key': `vars-${Date.now()}` };
    const html = { html: `<p>${SHOW_NUMBERS}</p>` };
    const first = await render(html, NUMBERS, key);
    expect(first.status, first.text).toBe(201);
    // The same body with other spacing and key order: the same request.
    const again = await render(html, '{ "order": 123456789012345678, "grams": 1e3, "price": 10.0 }', key);
    expect(again.status, again.text).toBe(201);
    expect(again.json.id).toBe(first.json.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // 1e3 and 1000.0 are the same float: the same request too.
    const same = await render(html, '{"price": 10.0, "grams": 1000.0, "order": 123456789012345678}', key);
    expect(same.json.id).toBe(first.json.id);
    // JSON.parse reads each of these as the first body; the template does not.
    for (const other of [
      '{"price": 10, "grams": 1e3, "order": 123456789012345678}',
      '{"price": 10.0, "grams": 1000, "order": 123456789012345678}',
      '{"price": 10.0, "grams": 1e3, "order": 123456789012345679}',
    ]) {
      const res = await render(html, other, key);
      expect(res.status, res.text).toBe(422);
      expect(res.json.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    }
  });
});
