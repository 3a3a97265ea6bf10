/** Jinja2's string filters (jinja2/filters.py). */

import { pyLower, pyUpper } from '../casing.js';
import { percentFormat } from '../format.js';
import { chars, truthy } from '../protocols.js';
import { bind, define, type FilterFn } from '../runtime.js';
import { pad, pyCapitalize, pyReplace, pySplitlines, stripChars } from '../str-functions.js';
import {
  isString,
  Markup,
  markupEscape,
  num,
  PyDict,
  PyError,
  PyTuple,
  softStr,
  str,
  strParts,
  type Value,
} from '../values.js';
import { textwrap } from './textwrap.js';

export const STRING_FILTERS = new Map<string, FilterFn>();
const def = define(STRING_FILTERS);

def('capitalize', (_s, v) => {
  const [s, wrap] = strParts(softStr(v));
  return wrap(pyCapitalize(s));
});
def('center', (state, v, a, k) => {
  const [width] = bind('center', ['width'], [80], a, k);
  const [s, wrap] = strParts(softStr(v));
  return wrap(pad(state, s, width as Value, ' ', 'center'));
});
def('format', (state, v, a, k) => {
  if (a.length && k.size)
    throw new PyError(
      'FilterArgumentError',
      "can't handle positional and keyword arguments at the same time",
    );
  return percentFormat(state, softStr(v), k.size ? PyDict.from(k.entries()) : new PyTuple(a));
});
def('indent', (state, v, a, k) => {
  const [width, first, blank] = bind('indent', ['width', 'first', 'blank'], [4, false, false], a, k);
  const indention = isString(width as Value)
    ? str(width as Value)
    : ' '.repeat(Math.max(0, num(width as Value)));
  const [s0, wrap] = strParts(softStr(v));
  const s = `${s0}\n`;
  const lines = pySplitlines(s, false);
  state.guardString(s.length + indention.length * (lines.length + 1));
  let rv: string;
  if (truthy(blank as Value)) {
    rv = lines.join(`\n${indention}`);
  } else {
    rv = lines.shift() ?? '';
    if (lines.length) rv += `\n${lines.map((l) => (l ? indention + l : l)).join('\n')}`;
  }
  if (truthy(first as Value)) rv = indention + rv;
  return wrap(rv);
});
def('lower', (_s, v) => {
  const [s, wrap] = strParts(softStr(v));
  return wrap(pyLower(s));
});
def('upper', (_s, v) => {
  const [s, wrap] = strParts(softStr(v));
  return wrap(pyUpper(s));
});
def('replace', (state, v, a, k) => {
  const [old, rep, count] = bind('replace', ['old', 'new', 'count'], [undefined, undefined, null], a, k);
  const n = count === null ? -1 : num(count as Value);
  if (!state.autoescape) return pyReplace(state, str(v), str(old as Value), str(rep as Value), n);
  const markupArgs = old instanceof Markup || rep instanceof Markup;
  const s = markupArgs && !(v instanceof Markup) ? markupEscape(v) : softStr(v);
  if (s instanceof Markup)
    return new Markup(pyReplace(state, s.s, markupEscape(old as Value).s, markupEscape(rep as Value).s, n));
  return pyReplace(state, s, str(old as Value), str(rep as Value), n);
});
def('string', (_s, v) => softStr(v));
def('title', (_s, v) => {
  const [s, wrap] = strParts(softStr(v));
  const parts = s.split(/([-\s({[<]+)/);
  return wrap(
    parts
      .filter(Boolean)
      // item[0].upper() + item[1:].lower(), by code point
      .map((p) => {
        const first = String.fromCodePoint(p.codePointAt(0) as number);
        return pyUpper(first) + pyLower(p.slice(first.length));
      })
      .join(''),
  );
});
def('trim', (_s, v, a, k) => {
  const [cs] = bind('trim', ['chars'], [null], a, k);
  const [s, wrap] = strParts(softStr(v));
  return wrap(stripChars(s, cs as Value, true, true));
});
def('truncate', (_s, v, a, k) => {
  const [len, killwords, end, leeway] = bind(
    'truncate',
    ['length', 'killwords', 'end', 'leeway'],
    [255, false, '...', null],
    a,
    k,
  );
  const s = str(v);
  const cs = chars(s);
  const n = num(len as Value);
  const e = str(end as Value);
  const lw = leeway === null ? 5 : num(leeway as Value);
  if (n < chars(e).length) throw new PyError('AssertionError', 'expected length >= len(end)');
  if (lw < 0) throw new PyError('AssertionError', 'expected leeway >= 0');
  if (cs.length <= n + lw) return s;
  const head = cs.slice(0, n - chars(e).length).join('');
  if (truthy(killwords as Value)) return head + e;
  const cut = head.lastIndexOf(' ');
  return (cut >= 0 ? head.slice(0, cut) : head) + e;
});
def('wordcount', (_s, v) => (str(v).match(/[\p{L}\p{N}_]+/gu) ?? []).length);
def('wordwrap', (state, v, a, k) => {
  const [width, breakLong, wrapstring, onHyphens] = bind(
    'wordwrap',
    ['width', 'break_long_words', 'wrapstring', 'break_on_hyphens'],
    [79, true, null, true],
    a,
    k,
  );
  const sep = wrapstring === null ? '\n' : str(wrapstring as Value);
  const s = str(v);
  state.guardString(s.length * (1 + sep.length));
  return pySplitlines(s, false)
    .map((line) =>
      textwrap(state, line, num(width as Value), truthy(breakLong as Value), truthy(onHyphens as Value)).join(
        sep,
      ),
    )
    .join(sep);
});
