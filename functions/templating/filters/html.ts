/** Jinja2's HTML and URL filters: escape, forceescape, safe, striptags, urlencode, urlize, xmlattr. */
import { iterate, truthy } from '../protocols.js';
import { bind, define, type FilterFn } from '../runtime.js';
import { striptagsOf } from '../str-functions.js';
import {
  escapeString,
  isString,
  Markup,
  markupEscape,
  num,
  PyDict,
  repr,
  str,
  typeError,
  Undefined,
  type Value,
  valueError,
} from '../values.js';

export const HTML_FILTERS = new Map<string, FilterFn>();
const def = define(HTML_FILTERS);

const urlQuote = (v: Value, forQs: boolean): string => {
  const s = isString(v) ? str(v) : str(v);
  const bytes = new TextEncoder().encode(s);
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9_.\-~]/.test(c) || (!forQs && c === '/')) out += c;
    else out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return forQs ? out.replace(/%20/g, '+') : out;
};

def(['escape', 'e'], (_s, v) => markupEscape(v));
def('forceescape', (_s, v) => new Markup(escapeString(v instanceof Markup ? v.s : str(v))));
def('safe', (_s, v) => (v instanceof Markup ? v : new Markup(str(v))));
def('striptags', (_s, v) => striptagsOf(v instanceof Markup ? v.s : str(v)));
def('urlencode', (_s, v) => {
  if (isString(v)) return urlQuote(v, false);
  const pairs = v instanceof PyDict ? v.entries() : iterate(v).map((p) => iterate(p) as [Value, Value]);
  return pairs.map(([key, x]) => `${urlQuote(key, true)}=${urlQuote(x, true)}`).join('&');
});
def('urlize', (_s, v, a, k) => {
  const [limit, nofollow, target, rel] = bind(
    'urlize',
    ['trim_url_limit', 'nofollow', 'target', 'rel', 'extra_schemes'],
    [null, false, null, null, null],
    a,
    k,
  );
  const rels = new Set((rel === null ? 'noopener' : str(rel as Value)).split(/\s+/).filter(Boolean));
  if (truthy(nofollow as Value)) rels.add('nofollow');
  const relAttr = rels.size ? ` rel="${escapeString([...rels].sort().join(' '))}"` : '';
  const targetAttr = target !== null ? ` target="${escapeString(str(target as Value))}"` : '';
  const trim = (u: string) =>
    limit !== null && u.length > num(limit as Value) ? `${u.slice(0, num(limit as Value))}...` : u;
  const words = str(v).split(/(\s+)/);
  return new Markup(
    words
      .map((word) => {
        const m = /^([(<]*)(.*?)([.,)>\n]*)$/s.exec(word);
        const [, head = '', middle = '', tail = ''] = m ?? [];
        let href: string | undefined;
        if (/^https?:\/\//.test(middle)) href = middle;
        else if (/^www\./.test(middle) || (/^[\w.-]+\.(com|org|net)$/.test(middle) && !middle.includes('@')))
          href = `https://${middle}`;
        else if (/^[^@\s]+@[\w-]+(\.[\w-]+)+$/.test(middle) && !middle.includes(':')) {
          return `${escapeString(head)}<a href="mailto:${escapeString(middle)}">${escapeString(middle)}</a>${escapeString(tail)}`;
        }
        if (!href) return escapeString(word);
        return `${escapeString(head)}<a href="${escapeString(href)}"${relAttr}${targetAttr}>${escapeString(trim(middle))}</a>${escapeString(tail)}`;
      })
      .join(''),
  );
});
def('xmlattr', (_s, v, a, k) => {
  const [autospace] = bind('xmlattr', ['autospace'], [true], a, k);
  if (!(v instanceof PyDict)) throw typeError('xmlattr needs a mapping');
  const items: string[] = [];
  for (const [key, x] of v.entries()) {
    if (x === null || x instanceof Undefined) continue;
    const name = str(key);
    if (/[\s/>=]/.test(name)) throw valueError(`Invalid character in attribute name: ${repr(name)}`);
    items.push(`${markupEscape(name).s}="${markupEscape(x).s}"`);
  }
  const rv = items.join(' ');
  return new Markup(rv && truthy(autospace as Value) ? ` ${rv}` : rv);
});
