/** The methods of `str` (and of Markup, which wraps their results), as a template calls them. */
import { pyCasefold, pyIsLower, pyIsUpper, pyLower, pySwapcase, pyUpper } from './casing.js';
import { formatValue, strFormat } from './format-spec.js';
import { bytesRepr } from './number-methods.js';
import { chars, iterate, truthy } from './protocols.js';
import { bind, type Method, type RenderState } from './runtime.js';
import { sliceValue } from './slices.js';
import {
  expandTabs,
  find,
  isTitle,
  PY_WHITESPACE,
  pad,
  pyCapitalize,
  pyReplace,
  pySplitlines,
  pyTitle,
  split,
  stripChars,
  striptagsOf,
  unescapeHtml,
} from './str-functions.js';
import {
  isInt,
  isString,
  Markup,
  markupEscape,
  num,
  PyDict,
  PyError,
  PyTuple,
  str,
  typeError,
  typeName,
  Undefined,
  type Value,
  valueError,
} from './values.js';
export const S = (self: Value): string => str(self);
/** A str method's result is Markup when called on Markup (markupsafe wraps them), with args escaped. */
const like = (self: Value, s: string): Value => (self instanceof Markup ? new Markup(s) : s);
const argStr = (self: Value, v: Value): string => (self instanceof Markup ? markupEscape(v).s : str(v));
/** Markup escapes a fill character (MarkupSafe 3.0): `&` becomes `&amp;`, no longer one character. */
const fillOf = (self: Value, f: Value): Value =>
  self instanceof Markup && isString(f) ? markupEscape(f).s : f;

/**
 * How Markup.format writes a field (MarkupSafe 3.0's EscapeFormatter): a Markup value as it is (a
 * format spec for it is an error), anything else formatted, then escaped. Undefined for a str.
 */
const markupField = (state: RenderState, self: Value) =>
  self instanceof Markup
    ? (value: Value, spec: string): string => {
        if (value instanceof Markup) {
          if (spec) throw valueError('Unsupported format specification for Markup.');
          return value.s;
        }
        return markupEscape(formatValue(state, value, spec)).s;
      }
    : undefined;

export const STR_METHODS = new Map<string, Method>([
  ['upper', (_s, self) => like(self, pyUpper(S(self)))],
  ['lower', (_s, self) => like(self, pyLower(S(self)))],
  ['casefold', (_s, self) => like(self, pyCasefold(S(self)))],
  ['swapcase', (_s, self) => like(self, pySwapcase(S(self)))],
  ['title', (_s, self) => like(self, pyTitle(S(self)))],
  ['capitalize', (_s, self) => like(self, pyCapitalize(S(self)))],
  [
    'strip',
    (_s, self, a, k) =>
      like(self, stripChars(S(self), bind('strip', ['chars'], [null], a, k)[0] as Value, true, true)),
  ],
  [
    'lstrip',
    (_s, self, a, k) =>
      like(self, stripChars(S(self), bind('lstrip', ['chars'], [null], a, k)[0] as Value, true, false)),
  ],
  [
    'rstrip',
    (_s, self, a, k) =>
      like(self, stripChars(S(self), bind('rstrip', ['chars'], [null], a, k)[0] as Value, false, true)),
  ],
  [
    'split',
    (_s, self, a, k) => {
      const [sep, max] = bind('split', ['sep', 'maxsplit'], [null, -1], a, k);
      return split(S(self), sep as Value, max as Value, false).map((p) => like(self, p));
    },
  ],
  [
    'rsplit',
    (_s, self, a, k) => {
      const [sep, max] = bind('rsplit', ['sep', 'maxsplit'], [null, -1], a, k);
      return split(S(self), sep as Value, max as Value, true).map((p) => like(self, p));
    },
  ],
  [
    'splitlines',
    (_s, self, a, k) => {
      const [keep] = bind('splitlines', ['keepends'], [false], a, k);
      return pySplitlines(S(self), truthy(keep as Value)).map((line) => like(self, line));
    },
  ],
  [
    'join',
    (state, self, a, k) => {
      const [items] = bind('join', ['iterable'], [undefined], a, k);
      const list = iterate(items as Value);
      const parts = list.map((v) => {
        if (!isString(v)) throw typeError(`sequence item: expected str instance, ${typeName(v)} found`);
        return argStr(self, v);
      });
      state.guardString(parts.reduce((n, p) => n + p.length, 0) + S(self).length * parts.length);
      return like(self, parts.join(S(self)));
    },
  ],
  [
    'replace',
    (state, self, a, k) => {
      const [old, rep, count] = bind('replace', ['old', 'new', 'count'], [undefined, undefined, -1], a, k);
      return like(
        self,
        pyReplace(state, S(self), str(old as Value), argStr(self, rep as Value), num(count as Value)),
      );
    },
  ],
  [
    'startswith',
    (_s, self, a, k) => {
      const [prefix, start, end] = bind(
        'startswith',
        ['prefix', 'start', 'end'],
        [undefined, null, null],
        a,
        k,
      );
      const text = sliceString(S(self), start as Value, end as Value);
      const options = prefix instanceof PyTuple ? prefix.items : [prefix as Value];
      return options.some((p) => text.startsWith(str(p)));
    },
  ],
  [
    'endswith',
    (_s, self, a, k) => {
      const [suffix, start, end] = bind(
        'endswith',
        ['suffix', 'start', 'end'],
        [undefined, null, null],
        a,
        k,
      );
      const text = sliceString(S(self), start as Value, end as Value);
      const options = suffix instanceof PyTuple ? suffix.items : [suffix as Value];
      return options.some((p) => text.endsWith(str(p)));
    },
  ],
  [
    'find',
    (_s, self, a, k) => {
      const [sub, st, en] = bind('find', ['sub', 'start', 'end'], [undefined, null, null], a, k);
      return find(S(self), sub as Value, st as Value, en as Value, false);
    },
  ],
  [
    'rfind',
    (_s, self, a, k) => {
      const [sub, st, en] = bind('rfind', ['sub', 'start', 'end'], [undefined, null, null], a, k);
      return find(S(self), sub as Value, st as Value, en as Value, true);
    },
  ],
  [
    'index',
    (_s, self, a, k) => {
      const [sub, st, en] = bind('index', ['sub', 'start', 'end'], [undefined, null, null], a, k);
      const i = find(S(self), sub as Value, st as Value, en as Value, false);
      if (i < 0) throw valueError('substring not found');
      return i;
    },
  ],
  [
    'rindex',
    (_s, self, a, k) => {
      const [sub, st, en] = bind('rindex', ['sub', 'start', 'end'], [undefined, null, null], a, k);
      const i = find(S(self), sub as Value, st as Value, en as Value, true);
      if (i < 0) throw valueError('substring not found');
      return i;
    },
  ],
  [
    'count',
    (_s, self, a, k) => {
      const [sub, st, en] = bind('count', ['sub', 'start', 'end'], [undefined, null, null], a, k);
      const text = sliceString(S(self), st as Value, en as Value);
      const needle = str(sub as Value);
      if (!needle) return chars(text).length + 1;
      return text.split(needle).length - 1;
    },
  ],
  [
    'center',
    (state, self, a, k) => {
      const [w, f] = bind('center', ['width', 'fillchar'], [undefined, ' '], a, k);
      return like(self, pad(state, S(self), w as Value, fillOf(self, f as Value), 'center'));
    },
  ],
  [
    'ljust',
    (state, self, a, k) => {
      const [w, f] = bind('ljust', ['width', 'fillchar'], [undefined, ' '], a, k);
      return like(self, pad(state, S(self), w as Value, fillOf(self, f as Value), 'right'));
    },
  ],
  [
    'rjust',
    (state, self, a, k) => {
      const [w, f] = bind('rjust', ['width', 'fillchar'], [undefined, ' '], a, k);
      return like(self, pad(state, S(self), w as Value, fillOf(self, f as Value), 'left'));
    },
  ],
  [
    'zfill',
    (state, self, a, k) => {
      const [w] = bind('zfill', ['width'], [undefined], a, k);
      const s = S(self);
      const width = num(w as Value);
      const len = chars(s).length;
      if (width <= len) return like(self, s);
      state.guardString(width);
      const sign = s[0] === '+' || s[0] === '-' ? (s[0] as string) : '';
      return like(self, sign + '0'.repeat(width - len) + s.slice(sign.length));
    },
  ],
  [
    'partition',
    (_s, self, a, k) => {
      const [sep] = bind('partition', ['sep'], [undefined], a, k);
      const s = S(self);
      const d = str(sep as Value);
      const i = s.indexOf(d);
      return new PyTuple(
        i < 0
          ? [like(self, s), like(self, ''), like(self, '')]
          : [like(self, s.slice(0, i)), like(self, d), like(self, s.slice(i + d.length))],
      );
    },
  ],
  [
    'rpartition',
    (_s, self, a, k) => {
      const [sep] = bind('rpartition', ['sep'], [undefined], a, k);
      const s = S(self);
      const d = str(sep as Value);
      const i = s.lastIndexOf(d);
      return new PyTuple(
        i < 0
          ? [like(self, ''), like(self, ''), like(self, s)]
          : [like(self, s.slice(0, i)), like(self, d), like(self, s.slice(i + d.length))],
      );
    },
  ],
  [
    'removeprefix',
    (_s, self, a, k) => {
      const [p] = bind('removeprefix', ['prefix'], [undefined], a, k);
      const s = S(self);
      const x = str(p as Value);
      return like(self, x && s.startsWith(x) ? s.slice(x.length) : s);
    },
  ],
  [
    'removesuffix',
    (_s, self, a, k) => {
      const [p] = bind('removesuffix', ['suffix'], [undefined], a, k);
      const s = S(self);
      const x = str(p as Value);
      return like(self, x && s.endsWith(x) ? s.slice(0, -x.length) : s);
    },
  ],
  // Numeric_Type Decimal or Digit: decimal digits, super- and subscripts, circled and parenthesised digits.
  [
    'isdigit',
    (_s, self) =>
      /^[\p{Nd}\u00b2\u00b3\u00b9\u1369-\u1371\u19da\u2070\u2074-\u2079\u2080-\u2089\u2460-\u2468\u2474-\u247c\u2488-\u2490\u24ea\u24f5-\u24fd\u24ff\u2776-\u277e\u2780-\u2788\u278a-\u2792]+$/u.test(
        S(self),
      ),
  ],
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII starts at NUL
  ['isascii', (_s, self) => /^[\u0000-\u007f]*$/.test(S(self))],
  ['isidentifier', (_s, self) => /^[\p{XID_Start}_]\p{XID_Continue}*$/u.test(S(self))],
  [
    'isprintable',
    (_s, self) =>
      !/[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/u.test(
        S(self),
      ),
  ],
  [
    'encode',
    (_s, self, a, k) => {
      const [encoding] = bind('encode', ['encoding', 'errors'], ['utf-8', 'strict'], a, k);
      if (!/^utf[-_]?8$/i.test(str(encoding as Value)))
        throw new PyError('LookupError', `unknown encoding: ${str(encoding as Value)}`);
      return bytesRepr(new TextEncoder().encode(S(self)));
    },
  ],
  [
    'translate',
    (_s, self, a, k) => {
      const [table] = bind('translate', ['table'], [undefined], a, k);
      let out = '';
      for (const ch of S(self)) {
        const code = ch.codePointAt(0) as number;
        const to = table instanceof PyDict ? table.get(code) : getItemOrUndefined(table as Value, code);
        if (to === undefined) out += ch;
        else if (to === null) continue;
        else out += isInt(to) ? String.fromCodePoint(num(to)) : str(to);
      }
      return like(self, out);
    },
  ],
  [
    'maketrans',
    (_s, _self, a) => {
      const [x, y, z] = a;
      const d = new PyDict();
      if (y === undefined) {
        if (!(x instanceof PyDict))
          throw typeError('if you give only one argument to maketrans it must be a dict');
        for (const [key, v] of x.entries())
          d.set(typeof key === 'string' ? (key.codePointAt(0) as number) : key, v);
        return d;
      }
      const from = chars(str(x as Value));
      const to = chars(str(y));
      if (from.length !== to.length)
        throw valueError('the first two maketrans arguments must have equal length');
      from.forEach((c, i) => {
        d.set(c.codePointAt(0) as number, (to[i] as string).codePointAt(0) as number);
      });
      if (z !== undefined) for (const c of chars(str(z))) d.set(c.codePointAt(0) as number, null);
      return d;
    },
  ],
  ['isdecimal', (_s, self) => /^\p{Nd}+$/u.test(S(self))],
  ['isnumeric', (_s, self) => /^\p{N}+$/u.test(S(self))],
  ['isalpha', (_s, self) => /^\p{L}+$/u.test(S(self))],
  ['isalnum', (_s, self) => /^[\p{L}\p{N}]+$/u.test(S(self))],
  ['isspace', (_s, self) => new RegExp(`^${PY_WHITESPACE.source}$`).test(S(self))],
  ['isupper', (_s, self) => pyIsUpper(S(self))],
  ['islower', (_s, self) => pyIsLower(S(self))],
  ['istitle', (_s, self) => isTitle(S(self))],
  [
    'expandtabs',
    (state, self, a, k) => {
      const [n] = bind('expandtabs', ['tabsize'], [8], a, k);
      return like(self, expandTabs(state, S(self), num(n as Value)));
    },
  ],
  [
    'format',
    (state, self, a, k, access) =>
      like(self, strFormat(state, S(self), a, k, access, markupField(state, self))),
  ],
  [
    'format_map',
    (state, self, a, k, access) => {
      const [d] = bind('format_map', ['mapping'], [undefined], a, k);
      if (!(d instanceof PyDict)) throw typeError('format_map() argument must be a mapping');
      const fields = new Map(d.entries().map(([kk, v]) => [str(kk), v]));
      return like(self, strFormat(state, S(self), [], fields, access, markupField(state, self)));
    },
  ],
  [
    'striptags',
    (_s, self) =>
      self instanceof Markup
        ? striptagsOf(self.s)
        : new Undefined(`'str object' has no attribute 'striptags'`),
  ],
  [
    'unescape',
    (_s, self) =>
      self instanceof Markup
        ? unescapeHtml(self.s)
        : new Undefined(`'str object' has no attribute 'unescape'`),
  ],
  // Markup.escape, a classmethod: escapes its argument (a Markup argument stays as it is).
  ['escape', (_s, _self, a, k) => markupEscape(bind('escape', ['s'], [undefined], a, k)[0] as Value)],
]);

/** The methods Markup has and str has not. */
export const MARKUP_ONLY: ReadonlySet<string> = new Set(['striptags', 'unescape', 'escape']);

const sliceString = (s: string, start: Value, end: Value): string => {
  if ((start === null || start === undefined) && (end === null || end === undefined)) return s;
  return sliceValue(s, start ?? null, end ?? null, null) as string;
};

/** table[code] for translate(): a missing key leaves the character as it is. */
const getItemOrUndefined = (table: Value, code: number): Value | undefined =>
  (Array.isArray(table) || table instanceof PyTuple) && code < iterate(table).length
    ? iterate(table)[code]
    : undefined;
