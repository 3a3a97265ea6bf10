import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../functions/domain/errors.js';
import { renderTemplate } from '../../functions/domain/templating.js';

const failure = (source: string, variables: Record<string, unknown> = {}): ServiceError => {
  try {
    renderTemplate(source, variables);
  } catch (e) {
    if (e instanceof ServiceError) return e;
    throw e;
  }
  throw new Error(`expected ${JSON.stringify(source)} to fail`);
};

describe('Jinja2 templating', () => {
  it('substitutes variables and escapes HTML in them', () => {
    expect(renderTemplate('<h1>Hello {{ name }}</h1>', { name: '<b>Ann & Bob</b>' })).toBe(
      '<h1>Hello &lt;b&gt;Ann &amp; Bob&lt;/b&gt;</h1>',
    );
  });

  it('supports loops, dict.items(), filters and printf-style number formatting', () => {
    const out = renderTemplate(
      '{% for item in items %}{{ loop.index }}:{{ item.name | upper }}={{ "%.2f" | format(item.price) }};{% endfor %}' +
        '{% for k, v in totals.items() %}{{ k }}={{ v }}{% endfor %}',
      {
        items: [
          { name: 'pen', price: 1.5 },
          { name: 'ink', price: 12 },
        ],
        totals: { sum: 13.5 },
      },
    );
    expect(out).toBe('1:PEN=1.50;2:INK=12.00;sum=13.5');
  });

  it('names an undefined variable and its line', () => {
    const e = failure('<p>ok</p>\n<p>{{ customer_name }}</p>');
    expect(e.code).toBe('INVALID_HTML_TEMPLATE');
    expect(e.message).toBe("Variable 'customer_name' is undefined (line 2)");
  });

  it('treats a missing attribute and a loop over a missing list as undefined', () => {
    expect(failure('{{ customer.nmae }}', { customer: { name: 'x' } }).message).toContain("'nmae'");
    expect(failure('{% for i in items %}{{ i }}{% endfor %}').message).toContain("'items'");
  });

  it('allows undefined variables where Jinja2 does: is defined, default', () => {
    expect(
      renderTemplate('{% if x is defined %}yes{% else %}no{% endif %}|{{ y | default("none") }}', {}),
    ).toBe('no|none');
  });

  it('answers a syntax error with its line', () => {
    const e = failure('<p>\n{% for %}\n</p>');
    expect(e.code).toBe('INVALID_HTML_TEMPLATE');
    expect(e.message).toMatch(/syntax error \(line 2\)/);
    expect(e.details?.[0]?.field).toBe('html');
  });

  it('refuses to reach JavaScript machinery from a template', () => {
    expect(failure('{{ range.constructor("return process")() }}').message).toContain("'constructor'");
    expect(failure('{{ "".constructor.constructor("return 1")() }}').message).toContain('not allowed');
    expect(failure('{{ cycler.__proto__ }}').message).toContain('not allowed');
  });

  it('reuses the compiled template for the same source and still sees new variables', () => {
    const source = '<p>{{ n }}</p>';
    expect(renderTemplate(source, { n: 1 })).toBe('<p>1</p>');
    expect(renderTemplate(source, { n: 2 })).toBe('<p>2</p>');
  });
});

describe('range()', () => {
  it('counts like Python and Jinja2, and refuses more than 100,000 items', () => {
    expect(
      renderTemplate('{% for i in range(3) %}{{ i }}{% endfor %}|{{ range(2, 8, 3) | join(",") }}', {}),
    ).toBe('012|2,5');
    expect(renderTemplate('{{ range(5, 0, -2) | join(",") }}', {})).toBe('5,3,1');
    const e = failure('{% for i in range(n) %}x{% endfor %}', { n: 100_001 });
    expect(e.code).toBe('INVALID_HTML_TEMPLATE');
    expect(e.message).toContain('limited to 100000');
  });
});
