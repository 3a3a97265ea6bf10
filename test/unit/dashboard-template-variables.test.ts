/**
 * The editor's live variable detection (lib/dashboard/site/template-variables.ts, CodeMirror's
 * Jinja parse) against the API's introspection (functions/templating, Jinja2's
 * meta.find_undeclared_variables): on the templates people write, they name the same variables.
 */
import { describe, expect, it } from 'vitest';
import { parseTemplate } from '../../functions/templating/index.js';
import { detectVariables } from '../../lib/dashboard/site/template-variables.js';

const TEMPLATES = [
  '<h1>Invoice {{ number }}</h1>\n<p>Bill to: {{ customer }}</p>\n<ul>\n{% for line in lines %}\n  <li>{{ line.item }}: {{ "%.2f"|format(line.price) }}</li>\n{% endfor %}\n</ul>\n',
  '<p>{{ customer.name | default("friend") }}</p>{% if vip is defined and vip %}<b>VIP</b>{% endif %}',
  '{% set total = 0 %}{% for item in items %}{{ loop.index }}. {{ item }}{% endfor %}{{ total }}',
  '{% macro row(label, value) %}<tr><td>{{ label }}</td><td>{{ value }}</td></tr>{% endmacro %}{{ row("Name", name) }}',
  '<p>{{ a + b * 2 }} {{ items | length }} {{ range(3) | list }} {{ none }} {{ true }}</p>',
  '<p>Nothing to fill in</p>',
];

describe('the editor’s variable detection', () => {
  for (const template of TEMPLATES) {
    it(`names what the API's introspection names: ${template.slice(0, 50)}…`, () => {
      expect(detectVariables([template])).toEqual([...parseTemplate(template).undeclared]);
    });
  }

  it('reads the header and footer with the html', () => {
    expect(detectVariables(['<p>{{ body }}</p>', 'Header {{ title }}', '{{ footer_note }}'])).toEqual([
      'body',
      'footer_note',
      'title',
    ]);
  });
});
