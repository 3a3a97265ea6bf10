/** Jinja2's HTML and URL filters: escape, forceescape, safe, striptags, urlencode, urlize, xmlattr. */
import { chars, isIterable, iterate, truthy } from '../protocols.js';
import { bind, define, type FilterFn } from '../runtime.js';
import { PY_WHITESPACE, striptagsOf } from '../str-functions.js';
import {
  escapeString,
  isString,
  Markup,
  markupEscape,
  num,
  PyDict,
  PyError,
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
  if (isString(v) || !(isIterable(v) || v instanceof Undefined)) return urlQuote(v, false);
  const pairs = v instanceof PyDict ? v.entries() : iterate(v).map((p) => iterate(p) as [Value, Value]);
  return pairs.map(([key, x]) => `${urlQuote(key, true)}=${urlQuote(x, true)}`).join('&');
});
// jinja2.utils: _http_re (re.IGNORECASE | re.VERBOSE; \w and \d are Unicode's) and _email_re.
const W = '[\\p{L}\\p{N}_]';
const HTTP_RE = new RegExp(
  `^((https?://|www\\.)((${W.replace(']', '%-]')}+\\.)+)?([a-z]{2,63}|xn--${W.replace(']', '%]')}{2,59})|(${W.replace(']', '%-]')}{2,63}\\.)+(com|net|int|edu|gov|org|info|mil)|(https?://)(((\\p{Nd}{1,3})(\\.\\p{Nd}{1,3}){3})|(\\[([\\da-f]{0,4}:){2}([\\da-f]{0,4}:?){1,6}\\])))(?::\\p{Nd}{1,5})?(?:[/?#]\\S*)?$`,
  'iu',
);
const EMAIL_RE = new RegExp(`^\\S+@${W}[${W.slice(1, -1)}.-]*\\.${W}+$`, 'u');
const URI_SCHEME_RE = /^[a-zA-Z][\w+.-]*:(\/\/)?$/;

/** jinja2.utils.urlize over text already escaped, as Jinja2 3.1 writes it. */
const urlize = (
  text: string,
  limit: number | null,
  rel: string | null,
  target: string | null,
  extraSchemes: string[],
): string => {
  const trim = (x: string) =>
    limit !== null && chars(x).length > limit ? `${chars(x).slice(0, limit).join('')}...` : x;
  const relAttr = rel ? ` rel="${escapeString(rel)}"` : '';
  const targetAttr = target ? ` target="${escapeString(target)}"` : '';
  const words = text.split(/(\s+)/);
  return words
    .map((word) => {
      let head = '';
      let middle = word;
      let tail = '';
      const lead = /^(?:[(<]|&lt;)+/.exec(middle);
      if (lead) {
        head = lead[0];
        middle = middle.slice(head.length);
      }
      if (/(?:[)>.,\n]|&gt;)$/.test(middle)) {
        const m = /(?:[)>.,\n]|&gt;)+$/.exec(middle);
        if (m) {
          tail = m[0];
          middle = middle.slice(0, m.index);
        }
      }
      for (const [open, close] of [
        ['(', ')'],
        ['<', '>'],
        ['&lt;', '&gt;'],
      ] as const) {
        const opens = middle.split(open).length - 1;
        if (opens <= middle.split(close).length - 1) continue;
        const moves = Math.min(opens, tail.split(close).length - 1);
        for (let i = 0; i < moves; i++) {
          const end = tail.indexOf(close) + close.length;
          middle += tail.slice(0, end);
          tail = tail.slice(end);
        }
      }
      if (HTTP_RE.test(middle)) {
        const href =
          middle.startsWith('https://') || middle.startsWith('http://') ? middle : `https://${middle}`;
        middle = `<a href="${href}"${relAttr}${targetAttr}>${trim(middle)}</a>`;
      } else if (middle.startsWith('mailto:') && EMAIL_RE.test(middle.slice(7))) {
        middle = `<a href="${middle}">${middle.slice(7)}</a>`;
      } else if (
        middle.includes('@') &&
        !middle.startsWith('www.') &&
        !middle.startsWith('@') &&
        !middle.includes(':') &&
        EMAIL_RE.test(middle)
      ) {
        middle = `<a href="mailto:${middle}">${middle}</a>`;
      } else {
        for (const scheme of extraSchemes) {
          if (middle !== scheme && middle.startsWith(scheme))
            middle = `<a href="${middle}"${relAttr}${targetAttr}>${middle}</a>`;
        }
      }
      return `${head}${middle}${tail}`;
    })
    .join('');
};

def('urlize', (state, v, a, k) => {
  const [limit, nofollow, target, rel, extra] = bind(
    'urlize',
    ['trim_url_limit', 'nofollow', 'target', 'rel', 'extra_schemes'],
    [null, false, null, null, null],
    a,
    k,
  );
  // do_urlize: the rel given, nofollow, and the environment's policy ("noopener"), sorted.
  const rels = new Set((rel === null ? '' : str(rel as Value)).split(PY_WHITESPACE).filter(Boolean));
  if (truthy(nofollow as Value)) rels.add('nofollow');
  rels.add('noopener');
  const schemes = extra === null ? [] : iterate(extra as Value).map((s) => str(s));
  for (const s of schemes) {
    if (!URI_SCHEME_RE.test(s))
      throw new PyError('FilterArgumentError', `${repr(s)} is not a valid URI scheme prefix.`);
  }
  const rv = urlize(
    markupEscape(v).s,
    limit === null ? null : num(limit as Value),
    [...rels].sort().join(' ') || null,
    target === null ? null : str(target as Value),
    schemes,
  );
  return state.autoescape ? new Markup(rv) : rv;
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
