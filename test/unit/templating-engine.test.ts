import { describe, expect, it } from 'vitest';
import { parseTemplate, renderTemplate, TemplateError } from '../../functions/templating/index.js';
import {
  controlMs,
  describeBound,
  type PaceBound,
  paceBound,
  reportRatio,
  since,
} from '../helpers/timing.js';

const failure = (source: string, variables: Record<string, unknown> = {}, options = {}): TemplateError => {
  try {
    renderTemplate(source, variables, options);
  } catch (e) {
    if (e instanceof TemplateError) return e;
    throw e;
  }
  throw new Error(`expected ${JSON.stringify(source)} to fail`);
};

describe('Jinja2 templating: the basics a document needs', () => {
  it('substitutes variables and escapes HTML in them as markupsafe does', () => {
    expect(renderTemplate('<h1>Hello {{ name }}</h1>', { name: `<b>Ann & "Bob" O'Hara</b>` })).toBe(
      '<h1>Hello &lt;b&gt;Ann &amp; &#34;Bob&#34; O&#39;Hara&lt;/b&gt;</h1>',
    );
  });

  it('prints Python values and follows Python arithmetic', () => {
    expect(
      renderTemplate(
        '{{ 10 / 5 }} {{ 7 // 2 }} {{ 2.5|round }} {{ [1, "a", none, true] }} {{ {"k": 1.5} }}',
        {},
      ),
    ).toBe('2.0 3 2.0 [1, &#39;a&#39;, None, True] {&#39;k&#39;: 1.5}');
  });

  it('loops with loop variables, filters and printf-style formatting', () => {
    const out = renderTemplate(
      '{% for item in items if item.qty %}{{ loop.index }}:{{ item.name|upper }}={{ "%.2f"|format(item.price) }};{% endfor %}' +
        '{% for k, v in totals.items() %}{{ k }}={{ v }}{% endfor %}',
      {
        items: [
          { name: 'pen', price: 1.5, qty: 1 },
          { name: 'gone', price: 3, qty: 0 },
          { name: 'ink', price: 12, qty: 2 },
        ],
        totals: { sum: 13.5 },
      },
    );
    expect(out).toBe('1:PEN=1.50;2:INK=12.00;sum=13.5');
  });
});

describe('range() and the parse cache', () => {
  it('counts like Python and Jinja2, and refuses more than 100,000 items', () => {
    expect(
      renderTemplate('{% for i in range(3) %}{{ i }}{% endfor %}|{{ range(2, 8, 3) | join(",") }}', {}),
    ).toBe('012|2,5');
    expect(renderTemplate('{{ range(5, 0, -2) | join(",") }}', {})).toBe('5,3,1');
    const e = failure('{% for i in range(n) %}x{% endfor %}', { n: 100_001 });
    expect(e.kind).toBe('runtime');
    expect(e.message).toContain('limited to 100000');
  });

  it('reuses the parsed template for the same source and still sees new variables', () => {
    const source = '<p>{{ n }}</p>';
    expect(renderTemplate(source, { n: 1 })).toBe('<p>1</p>');
    expect(renderTemplate(source, { n: 2 })).toBe('<p>2</p>');
  });
});

describe('errors a template author can act on', () => {
  it('names an undefined variable and its line', () => {
    const e = failure('<p>ok</p>\n<p>{{ customer_name }}</p>');
    expect(e).toMatchObject({ kind: 'undefined', line: 2, variable: 'customer_name' });
    expect(e.message).toBe("Variable 'customer_name' is undefined (line 2)");
  });

  it('names a missing attribute, and allows undefined where Jinja2 does', () => {
    expect(failure('{{ customer.nmae }}', { customer: { name: 'x' } }).message).toContain("'nmae'");
    expect(
      renderTemplate('{% if x is defined %}yes{% else %}no{% endif %}|{{ y|default("none") }}', {}),
    ).toBe('no|none');
  });

  it('answers syntax errors, unknown filters and runtime errors with their line', () => {
    expect(failure('<p>\n{% for %}\n</p>')).toMatchObject({ kind: 'syntax', line: 2 });
    expect(failure('a\n\n{{ x|nosuchfilter }}', { x: 1 })).toMatchObject({ kind: 'syntax', line: 3 });
    expect(failure('a\n{{ 1 / 0 }}')).toMatchObject({ kind: 'runtime', line: 2 });
    expect(failure('a\n{{ 1 / 0 }}').message).toBe(
      'Template error (line 2): ZeroDivisionError: division by zero',
    );
  });

  it('lets an unknown filter or test inside an if fail only when it runs, as Jinja2 compiles them', () => {
    expect(parseTemplate('{% if x %}{{ x|nosuchfilter }}{% endif %}').undeclared).toEqual(['x']);
    expect(renderTemplate('{% if false %}{{ 1|nosuchfilter }}{{ 1 is nosuchtest }}{% endif %}ok', {})).toBe(
      'ok',
    );
    const e = failure('{% if true %}\n{{ 1|nosuchfilter }}\n{% endif %}');
    expect(e).toMatchObject({ kind: 'runtime', line: 2 });
    expect(e.message).toContain("No filter named 'nosuchfilter' found.");
    // A loop opens a frame of its own: there it is a syntax error again, as in Jinja2.
    expect(failure('{% if false %}{% for i in [1] %}{{ i|nosuchfilter }}{% endfor %}{% endif %}').kind).toBe(
      'syntax',
    );
  });
});

describe('sandboxed by construction', () => {
  const canary = 'TEMPLATE_ENGINE_CANARY';
  process.env.TEMPLATE_ENGINE_CANARY = 'secret-value-7f3a';

  // Each payload tried to reach JavaScript's Function, a prototype or the process in the old engine.
  const payloads: [string, Record<string, unknown>][] = [
    ['{{ range.constructor("return process")() }}', {}],
    ['{{ range["constructor"|safe]("return process")() }}', {}],
    ['{{ range["constructor"|escape]("return process")() }}', {}],
    ['{{ range[["constructor"]] }}', {}],
    ['{{ range[k]("return process")() }}', { k: ['constructor'] }],
    ['{{ range[k]("return process")() }}', { k: 'constructor' }],
    ['{{ constructor.constructor("return process")() }}', {}],
    ['{{ __proto__ }}', {}],
    ['{{ {}.get("constructor").constructor("return process")() }}', {}],
    ['{{ {}.setdefault("constructor").constructor("return process")() }}', {}],
    ['{{ [range]|join(",", "constructor") }}', {}],
    ['{{ "%(constructor.constructor)s"|format({}) }}', {}],
    ['{{ "{0.constructor}".format(range) }}', {}],
    ['{{ [range]|map(attribute="constructor")|first }}', {}],
    ['{{ [x]|sort(attribute="constructor")|first }}', { x: 'a' }],
    ['{{ x.constructor }}{{ x.__proto__ }}{{ x.toString }}{{ x.valueOf }}', { x: 'str' }],
    ['{{ "".toString.constructor.call({}, "return process")() }}', {}],
    ['{{ cycler.__init__.__globals__ }}', {}],
    ['{{ lipsum.__globals__["os"] }}', {}],
    ['{{ self.__init__ }}', {}],
  ];

  it.each(payloads)('%s reaches nothing of the host', (source, variables) => {
    let out = '';
    try {
      out = renderTemplate(source, variables);
    } catch (e) {
      expect(e).toBeInstanceOf(TemplateError);
      out = (e as Error).message;
    }
    expect(out).not.toMatch(/native code|function Function|secret-value|\[object /);
    expect(out).not.toContain(process.cwd());
  });

  it('keeps variables whose keys name prototype members as plain data', () => {
    const variables = JSON.parse('{"__proto__": {"polluted": 1}, "constructor": "c", "toString": "t"}');
    expect(renderTemplate('{{ __proto__.polluted }} {{ constructor }} {{ toString }}', variables)).toBe(
      '1 c t',
    );
    expect(failure('{{ polluted }}', variables).kind).toBe('undefined');
  });

  it('changes no global state: dict methods write into the template’s own dict', () => {
    expect(
      renderTemplate(
        '{% set d = {} %}{% set _ = d.setdefault("__proto__", {}) %}{{ d["__proto__"].update({"polluted": "yes"}) }} {{ d }}',
        {},
      ),
    ).toBe('None {&#39;__proto__&#39;: {&#39;polluted&#39;: &#39;yes&#39;}}');
    expect(failure('{{ __proto__.update({"polluted": "yes"}) }}').kind).toBe('undefined');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(renderTemplate('{{ {}.polluted is defined }}', {})).toBe('False');
  });

  it('treats variables as data, never as templates', () => {
    expect(renderTemplate('{{ s }}', { s: '{{ 7*7 }}' })).toBe('{{ 7*7 }}');
  });

  it('never shows the environment', () => {
    expect(failure(`{{ ${canary} }}`).message).toBe(`Variable '${canary}' is undefined (line 1)`);
  });
});

describe('bounded while it runs', () => {
  it('stops at the deadline, naming the limit', async () => {
    // The control: the engine's pace on the same loops, 40,000 turns.
    const control = await controlMs(() =>
      renderTemplate('{% for i in range(200) %}{% for j in range(200) %}{% endfor %}{% endfor %}', {}),
    );
    const started = performance.now();
    const e = failure(
      '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}',
      {},
      {
        timeLimitMs: 200,
      },
    );
    expect(e).toMatchObject({ kind: 'limit', outputTooLarge: false });
    expect(e.message).toBe('Templating exceeded its 200 ms limit');
    const ms = since(started);
    const bound: PaceBound = { expectedMs: 200, slackMs: 4_800, controlMs: control, factor: 50 };
    expect(ms, describeBound(ms, bound)).toBeLessThan(paceBound(bound));
  });

  it('refuses output past the limit as soon as it is passed, and strings past it before they are built', () => {
    const big = failure(
      '{% for i in range(n) %}{{ row }}{% endfor %}',
      { n: 100, row: 'x'.repeat(1024) },
      {
        maxOutputBytes: 50 * 1024,
      },
    );
    expect(big).toMatchObject({ kind: 'limit', outputTooLarge: true });
    for (const bomb of [
      '{{ "x"|center(100000000) }}',
      '{{ "x" * 100000000 }}',
      '{{ "%100000000d"|format(1) }}',
    ]) {
      expect(failure(bomb)).toMatchObject({ kind: 'limit', outputTooLarge: false });
    }
  });

  it('wraps a long word in linear time, and checks the deadline while it wraps', () => {
    // Timed against a control of a tenth the length, wrapped just before: linear is about 10
    // times the control, the quadratic version was about 100 times (100 s for the control's
    // length). A deadline no busy machine reaches, so only the ratio judges.
    const wrap = (length: number) => {
      const started = Date.now();
      const out = renderTemplate(
        '{{ s|wordwrap(1) }}',
        { s: 'x'.repeat(length) },
        { deadline: started + 120_000 },
      );
      return { out, ms: Date.now() - started };
    };
    wrap(100_000); // warms the engine up
    // The control's time per wrap is the mean of ten (one 50 ms sample on a busy machine was off
    // by a third, and failed the ratio at load 21).
    const controls = Array.from({ length: 10 }, () => wrap(100_000).ms);
    const control = { ms: controls.reduce((a, b) => a + b, 0) / controls.length };
    const { out, ms } = wrap(1_000_000);
    expect(out.length).toBe(1_999_999);
    expect(out.slice(0, 6)).toBe('x\nx\nx\n');
    reportRatio(
      'templating engine: wordwrap of 10 times the length against the control',
      ms / Math.max(control.ms, 20),
      30,
    );
    expect(ms).toBeLessThan(30 * Math.max(control.ms, 20));
    const e = failure('{{ s|wordwrap(1) }}', { s: 'x'.repeat(1_000_000) }, { deadline: Date.now() + 20 });
    expect(e).toMatchObject({ kind: 'limit', outputTooLarge: false });
  });

  it('computes ints exactly, and refuses one of more than 100,000 bits', async () => {
    expect(renderTemplate('{{ 2 ** 64 + 1 }} {{ 99999999999999999 + 2 }}', {})).toBe(
      '18446744073709551617 100000000000000001',
    );
    // The control: the same squaring, 15 times, to an int of about 52,000 bits (under the limit).
    const control = await controlMs(() =>
      renderTemplate(
        '{% set ns = namespace(x=3) %}{% for i in range(15) %}{% set ns.x = ns.x * ns.x %}{% endfor %}',
        {},
      ),
    );
    const started = performance.now();
    const e = failure(
      '{% set ns = namespace(x=3) %}{% for i in range(100) %}{% set ns.x = ns.x * ns.x %}{% endfor %}',
    );
    expect(e).toMatchObject({ kind: 'limit' });
    expect(e.message).toContain('100000 bits');
    const ms = since(started);
    const bound: PaceBound = { expectedMs: 0, slackMs: 5_000, controlMs: control, factor: 50 };
    expect(ms, describeBound(ms, bound)).toBeLessThan(paceBound(bound));
  });

  it('answers unbounded recursion and exponential macros with an error, not a crash', () => {
    expect(failure('{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}').message).toContain('recursion');
    const e = failure(
      '{% macro f(n) %}{% if n %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}{{ f(40) }}',
      {},
      {
        timeLimitMs: 300,
      },
    );
    expect(e.kind).toBe('limit');
  });
});

describe('introspection, by parsing only', () => {
  it('lists what a template reads without defining it, as Jinja2 meta does', () => {
    const info = parseTemplate(
      '{{ x }}{% set x = 1 %}{{ y }}{% for i in items %}{{ i }}{{ loop.index }}{% endfor %}' +
        '{% if a is defined %}{{ b|default(1) }}{% endif %}{{ range(3)|join }}',
    );
    expect(info.undeclared).toEqual(['a', 'b', 'items', 'x', 'y']);
    expect(info.required).toEqual([
      { name: 'items', line: 1 },
      { name: 'x', line: 1 },
      { name: 'y', line: 1 },
    ]);
  });

  it('refuses at parse time only what every execution would refuse', () => {
    // A macro reading a name set at the top level after its definition, before its call: renders.
    const macro = parseTemplate('{% macro m() %}{{ x }}{% endmacro %}{% set x = 1 %}{{ m() }}');
    expect(macro).toEqual({ undeclared: [], required: [] });
    // `a.b|default(…)` with `a` missing fails when run, as in Jinja2, not at parse time.
    expect(parseTemplate('{{ a.b|default("x") }}')).toEqual({ undeclared: ['a'], required: [] });
    // Passed on, not used: a filter argument, a branch, a loop body.
    expect(
      parseTemplate('{{ "a"|default(b) }}{% if c %}{{ d }}{% endif %}{% for i in e %}{{ f }}{% endfor %}'),
    ).toEqual({
      undeclared: ['b', 'c', 'd', 'e', 'f'],
      required: [
        { name: 'c', line: 1 },
        { name: 'e', line: 1 },
      ],
    });
    expect(() => renderTemplate('{{ a.b|default("x") }}', {})).toThrow(TemplateError);
  });

  it('never executes anything while parsing', () => {
    expect(() =>
      parseTemplate('{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}'),
    ).not.toThrow();
  });
});

describe('list.sort as Jinja2 3.1.6 runs it (outputs taken from real Jinja2)', () => {
  it('calls key= (a macro) on each item, and keeps equal items in order when reversed', () => {
    expect(
      renderTemplate(
        '{% macro k(x) %}{{ x.n }}{% endmacro %}{% set l = [{"n": 3, "s": "a"}, {"n": 1, "s": "b"}, {"n": 2, "s": "c"}] %}{{ l.sort(key=k) }}{{ l|map(attribute="s")|join }}',
        {},
      ),
    ).toBe('Nonebca');
    expect(
      renderTemplate(
        '{% set l = [[2, "a"], [1, "b"], [2, "c"], [1, "d"]] %}{% macro k(x) %}{{ x[0] }}{% endmacro %}{{ l.sort(key=k, reverse=True) }}{{ l|map("last")|join }}',
        {},
      ),
    ).toBe('Noneacbd');
    expect(renderTemplate('{% set l = [3, 1, 2] %}{{ l.sort(reverse=true) }}{{ l }}', {})).toBe(
      'None[3, 2, 1]',
    );
    expect(() => renderTemplate('{% set l = [1, 2] %}{{ l.sort(key=1) }}', {})).toThrow(
      /TypeError: 'int' object is not callable/,
    );
  });
});
