/**
 * Member and item access, Python's way, over the values of values.ts only. A dict's members are
 * its keys and the dict methods below; a string's, list's and tuple's are their methods; nothing
 * is ever read from a JavaScript object's properties, so no key or name (`constructor`,
 * `__proto__`, anything computed at run time) can reach the host.
 */
import type { RenderState } from './evaluate.js';
import { strFormat } from './format.js';
import {
  chars,
  compare,
  dictView,
  eq,
  isInt,
  isString,
  iterate,
  type Kwargs,
  Markup,
  markupEscape,
  num,
  PyCallable,
  PyDict,
  PyError,
  PyFloat,
  PyObject,
  PyTuple,
  pushAll,
  RANGES,
  str,
  truthy,
  typeError,
  typeName,
  Undefined,
  undefinedMember,
  type Value,
  VIEWS,
  valueError,
} from './values.js';

type Method = (state: RenderState, self: Value, args: Value[], kwargs: Kwargs) => Value;

/** Positional and keyword arguments bound to named parameters; `undefined` marks a required one. */
export const bind = (
  fname: string,
  names: readonly string[],
  defaults: readonly (Value | undefined)[],
  args: readonly Value[],
  kwargs: Kwargs,
): Value[] => {
  if (args.length > names.length) {
    throw typeError(`${fname}() takes at most ${names.length} arguments (${args.length} given)`);
  }
  const out: Value[] = [];
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (i < args.length) {
      if (kwargs.has(name)) throw typeError(`${fname}() got multiple values for argument '${name}'`);
      out.push(args[i] as Value);
    } else if (kwargs.has(name)) {
      out.push(kwargs.get(name) as Value);
    } else {
      const d = defaults[i];
      if (d === undefined) throw typeError(`${fname}() missing required argument: '${name}'`);
      out.push(d);
    }
  }
  for (const key of kwargs.keys()) {
    if (!names.includes(key)) throw typeError(`${fname}() got an unexpected keyword argument '${key}'`);
  }
  return out;
};

const index = (i: Value, len: number): number => {
  const n = num(i);
  return n < 0 ? n + len : n;
};

// --- str ------------------------------------------------------------------------------------

const PY_WS = /^[\s\u0085]+|[\s\u0085]+$/g;

export const stripChars = (s: string, chs: Value, left: boolean, right: boolean): string => {
  if (chs === null || chs === undefined) {
    let out = s;
    if (left) out = out.replace(/^[\s\u0085]+/, '');
    if (right) out = out.replace(/[\s\u0085]+$/, '');
    return out;
  }
  const set = new Set(chars(str(chs)));
  const cs = chars(s);
  let a = 0;
  let b = cs.length;
  if (left) while (a < b && set.has(cs[a] as string)) a++;
  if (right) while (b > a && set.has(cs[b - 1] as string)) b--;
  return cs.slice(a, b).join('');
};

const splitWhitespace = (s: string, max: number, fromRight: boolean): string[] => {
  const words = s.split(/[\s\u0085]+/).filter(Boolean);
  if (max < 0 || words.length <= max + 1) return words;
  if (!fromRight) {
    // The rest keeps its inner whitespace.
    const out: string[] = [];
    let rest = s.replace(/^\s+/, '');
    for (let i = 0; i < max; i++) {
      const m = /^(\S+)\s+/.exec(rest);
      if (!m) break;
      out.push(m[1] as string);
      rest = rest.slice(m[0].length);
    }
    out.push(rest.replace(/\s+$/, ''));
    return out;
  }
  const out: string[] = [];
  let rest = s.replace(/\s+$/, '');
  for (let i = 0; i < max; i++) {
    const m = /\s+(\S+)$/.exec(rest);
    if (!m) break;
    out.unshift(m[1] as string);
    rest = rest.slice(0, rest.length - m[0].length);
  }
  out.unshift(rest.replace(/^\s+/, ''));
  return out;
};

const split = (s: string, sep: Value, maxsplit: Value, fromRight: boolean): string[] => {
  const max = num(maxsplit ?? -1);
  if (sep === null) return splitWhitespace(s, max, fromRight);
  const d = str(sep);
  if (!d) throw valueError('empty separator');
  const parts = s.split(d);
  if (max < 0 || parts.length <= max + 1) return parts;
  if (!fromRight) return [...parts.slice(0, max), parts.slice(max).join(d)];
  return [parts.slice(0, parts.length - max).join(d), ...parts.slice(parts.length - max)];
};

const isTitle = (s: string): boolean => {
  let cased = false;
  let prevCased = false;
  for (const ch of s) {
    const upper = ch !== ch.toLowerCase();
    const lower = ch !== ch.toUpperCase();
    if (upper) {
      if (prevCased) return false;
      prevCased = true;
      cased = true;
    } else if (lower) {
      if (!prevCased) return false;
      prevCased = true;
      cased = true;
    } else {
      prevCased = false;
    }
  }
  return cased;
};

const isCased = (ch: string): boolean => ch.toLowerCase() !== ch.toUpperCase();

/** The digraphs whose titlecase is neither their upper nor their lower case: Ǆ ǅ ǆ → ǅ. */
const DIGRAPH_TITLE = /[\u01c4-\u01cc\u01f1-\u01f3]/;

/** A character's titlecase: the first of its uppercase letters, the rest lower ('ß' → 'Ss'). */
const titleChar = (ch: string): string => {
  if (DIGRAPH_TITLE.test(ch)) {
    const code = ch.charCodeAt(0);
    const base = code >= 0x1f1 ? 0x1f1 : code - ((code - 0x1c4) % 3);
    return String.fromCharCode(base + 1);
  }
  const upper = ch.toUpperCase();
  const first = String.fromCodePoint(upper.codePointAt(0) as number);
  return first + upper.slice(first.length).toLowerCase();
};

/** Python's str.title(): a cased character after an uncased one starts a word ("They'Re"). */
export const pyTitle = (s: string): string => {
  let out = '';
  let prevCased = false;
  for (const ch of s) {
    if (isCased(ch)) {
      out += prevCased ? ch.toLowerCase() : titleChar(ch);
      prevCased = true;
    } else {
      out += ch;
      prevCased = false;
    }
  }
  return out;
};

/** Python's str.expandtabs(): each tab up to the next multiple of tabsize, columns restart at \n and \r. */
const expandTabs = (state: RenderState, s: string, tabsize: number): string => {
  if (!s.includes('\t')) return s;
  let out = '';
  let column = 0;
  for (const ch of s) {
    if (ch === '\t') {
      if (tabsize > 0) {
        const n = tabsize - (column % tabsize);
        state.guardString(out.length + n);
        out += ' '.repeat(n);
        column += n;
      }
    } else {
      out += ch;
      column = ch === '\n' || ch === '\r' ? 0 : column + 1;
    }
  }
  return out;
};

export const pyCapitalize = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1).toLowerCase();

export const pad = (
  state: RenderState,
  s: string,
  width: Value,
  fill: Value,
  where: 'left' | 'right' | 'center',
): string => {
  const w = num(width);
  const f = fill === null || fill === undefined ? ' ' : str(fill);
  if (chars(f).length !== 1) throw typeError('The fill character must be exactly one character long');
  const len = chars(s).length;
  if (w <= len) return s;
  state.guardString(w);
  const total = w - len;
  if (where === 'right') return s + f.repeat(total);
  if (where === 'left') return f.repeat(total) + s;
  // CPython: left = total/2 + (total & width & 1)
  const left = Math.floor(total / 2) + (total & w & 1);
  return f.repeat(left) + s + f.repeat(total - left);
};

const find = (s: string, sub: Value, start: Value, end: Value, fromRight: boolean): number => {
  const cs = chars(s);
  const a = start === null || start === undefined ? 0 : Math.max(0, index(start, cs.length));
  const b = end === null || end === undefined ? cs.length : Math.min(cs.length, index(end, cs.length));
  const hay = cs.slice(a, b).join('');
  const needle = str(sub);
  const at = fromRight ? hay.lastIndexOf(needle) : hay.indexOf(needle);
  if (at < 0 || a > b) return -1;
  return a + chars(hay.slice(0, at)).length;
};

const S = (self: Value): string => str(self);
/** A str method's result is Markup when called on Markup (markupsafe wraps them), with args escaped. */
const like = (self: Value, s: string): Value => (self instanceof Markup ? new Markup(s) : s);
const argStr = (self: Value, v: Value): string => (self instanceof Markup ? markupEscape(v).s : str(v));

const STR_METHODS = new Map<string, Method>([
  ['upper', (_s, self) => like(self, S(self).toUpperCase())],
  ['lower', (_s, self) => like(self, S(self).toLowerCase())],
  // Full case folding, near enough: 'ß' → 'ss', 'ﬁ' → 'fi', 'ς' → 'σ'.
  ['casefold', (_s, self) => like(self, S(self).toUpperCase().toLowerCase().replace(/ς/g, 'σ'))],
  [
    'swapcase',
    (_s, self) =>
      like(
        self,
        [...S(self)].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join(''),
      ),
  ],
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
        pyReplace(
          state,
          S(self),
          argStr(self, old as Value),
          argStr(self, rep as Value),
          num(count as Value),
        ),
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
      return like(self, pad(state, S(self), w as Value, f as Value, 'center'));
    },
  ],
  [
    'ljust',
    (state, self, a, k) => {
      const [w, f] = bind('ljust', ['width', 'fillchar'], [undefined, ' '], a, k);
      return like(self, pad(state, S(self), w as Value, f as Value, 'right'));
    },
  ],
  [
    'rjust',
    (state, self, a, k) => {
      const [w, f] = bind('rjust', ['width', 'fillchar'], [undefined, ' '], a, k);
      return like(self, pad(state, S(self), w as Value, f as Value, 'left'));
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
  ['isdigit', (_s, self) => /^[0-9\u00b2\u00b3\u00b9\u0660-\u0669]+$/.test(S(self))],
  ['isdecimal', (_s, self) => /^\p{Nd}+$/u.test(S(self))],
  ['isnumeric', (_s, self) => /^\p{N}+$/u.test(S(self))],
  ['isalpha', (_s, self) => /^\p{L}+$/u.test(S(self))],
  ['isalnum', (_s, self) => /^[\p{L}\p{N}]+$/u.test(S(self))],
  ['isspace', (_s, self) => /^[\s\u0085]+$/.test(S(self))],
  [
    'isupper',
    (_s, self) => {
      const s = S(self);
      return s !== s.toLowerCase() && s === s.toUpperCase();
    },
  ],
  [
    'islower',
    (_s, self) => {
      const s = S(self);
      return s !== s.toUpperCase() && s === s.toLowerCase();
    },
  ],
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
    (state, self, a, k) => {
      const out = strFormat(
        state,
        S(self),
        a.map((v) => (self instanceof Markup ? markupEscape(v) : v)),
        new Map([...k].map(([n, v]) => [n, self instanceof Markup ? markupEscape(v) : v])),
      );
      return like(self, out);
    },
  ],
  [
    'format_map',
    (state, self, a) => {
      const d = a[0];
      if (!(d instanceof PyDict)) throw typeError('format_map() argument must be a mapping');
      return like(self, strFormat(state, S(self), [], new Map(d.entries().map(([kk, v]) => [str(kk), v]))));
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
]);

/** Python's str.splitlines(). */
export const pySplitlines = (text: string, keepends: boolean): string[] => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: Python's line boundaries include them
  const parts = text.split(/(\r\n|[\n\r\v\f\u001c-\u001e\u0085\u2028\u2029])/);
  const out: string[] = [];
  for (let i = 0; i < parts.length; i += 2) {
    const line = parts[i] as string;
    if (i === parts.length - 1 && line === '') break;
    out.push(keepends ? line + (parts[i + 1] ?? '') : line);
  }
  return out;
};

export const pyReplace = (state: RenderState, s: string, old: string, rep: string, count: number): string => {
  const max = count < 0 ? Number.POSITIVE_INFINITY : count;
  if (old === '') {
    const cs = chars(s);
    state.guardString(s.length + rep.length * (cs.length + 1));
    let out = '';
    let n = 0;
    for (let i = 0; i <= cs.length; i++) {
      if (n < max) {
        out += rep;
        n++;
      }
      if (i < cs.length) out += cs[i];
    }
    return out;
  }
  const parts = s.split(old);
  const occurrences = Math.min(parts.length - 1, max);
  state.guardString(s.length + (rep.length - old.length) * occurrences);
  if (occurrences === parts.length - 1) return parts.join(rep);
  return parts.slice(0, occurrences + 1).join(rep) + old + parts.slice(occurrences + 1).join(old);
};

export const unescapeHtml = (s: string): string =>
  s
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&#x([0-9a-fA-F]+);/g, (_, h: string) => String.fromCodePoint(Number.parseInt(h, 16)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&nbsp;/g, '\u00a0')
    .replace(/&amp;/g, '&');

/** markupsafe's striptags: drop comments and tags, collapse whitespace, unescape. */
export const striptagsOf = (s: string): string =>
  unescapeHtml(
    s
      .replace(/<!--[\s\S]*?(-->|$)/g, '')
      .replace(/<[^>]*>/g, '')
      .split(/\s+/)
      .filter(Boolean)
      .join(' '),
  );

const sliceString = (s: string, start: Value, end: Value): string => {
  if ((start === null || start === undefined) && (end === null || end === undefined)) return s;
  return sliceValue(s, start ?? null, end ?? null, null) as string;
};

// --- list, tuple, dict ----------------------------------------------------------------------

const LIST_METHODS = new Map<string, Method>([
  [
    'append',
    (state, self, a, k) => {
      const [x] = bind('append', ['object'], [undefined], a, k);
      state.guardList((self as Value[]).length + 1);
      (self as Value[]).push(x as Value);
      return null;
    },
  ],
  [
    'extend',
    (state, self, a, k) => {
      const [x] = bind('extend', ['iterable'], [undefined], a, k);
      const items = iterate(x as Value);
      state.guardList((self as Value[]).length + items.length);
      pushAll(self as Value[], items);
      return null;
    },
  ],
  [
    'insert',
    (state, self, a, k) => {
      const [i, x] = bind('insert', ['index', 'object'], [undefined, undefined], a, k);
      const l = self as Value[];
      state.guardList(l.length + 1);
      l.splice(Math.max(0, Math.min(l.length, index(i as Value, l.length))), 0, x as Value);
      return null;
    },
  ],
  [
    'pop',
    (_s, self, a, k) => {
      const [i] = bind('pop', ['index'], [-1], a, k);
      const l = self as Value[];
      if (!l.length) throw new PyError('IndexError', 'pop from empty list');
      const at = index(i as Value, l.length);
      if (at < 0 || at >= l.length) throw new PyError('IndexError', 'pop index out of range');
      return l.splice(at, 1)[0] as Value;
    },
  ],
  [
    'remove',
    (_s, self, a, k) => {
      const [x] = bind('remove', ['value'], [undefined], a, k);
      const l = self as Value[];
      const at = l.findIndex((v) => eq(v, x as Value));
      if (at < 0) throw valueError('list.remove(x): x not in list');
      l.splice(at, 1);
      return null;
    },
  ],
  [
    'clear',
    (_s, self) => {
      (self as Value[]).length = 0;
      return null;
    },
  ],
  ['copy', (_s, self) => [...(self as Value[])]],
  [
    'reverse',
    (_s, self) => {
      (self as Value[]).reverse();
      return null;
    },
  ],
  [
    'sort',
    (_s, self, a, k) => {
      const [, rev] = bind('sort', ['key', 'reverse'], [null, false], a, k);
      const l = self as Value[];
      l.sort((x, y) => compare(x, y));
      if (rev) l.reverse();
      return null;
    },
  ],
]);

const SEQ_METHODS = new Map<string, Method>([
  [
    'index',
    (_s, self, a, k) => {
      const [x] = bind('index', ['value'], [undefined], a, k);
      const at = iterate(self).findIndex((v) => eq(v, x as Value));
      if (at < 0) throw valueError(`${str(x as Value)} is not in ${typeName(self)}`);
      return at;
    },
  ],
  [
    'count',
    (_s, self, a, k) => {
      const [x] = bind('count', ['value'], [undefined], a, k);
      return iterate(self).filter((v) => eq(v, x as Value)).length;
    },
  ],
]);

const DICT_METHODS = new Map<string, Method>([
  [
    'get',
    (_s, self, a, k) => {
      const [key, d] = bind('get', ['key', 'default'], [undefined, null], a, k);
      const v = (self as PyDict).get(key as Value);
      return v === undefined ? (d as Value) : v;
    },
  ],
  [
    'items',
    (_s, self) =>
      dictView(
        'dict_items',
        (self as PyDict).entries().map(([key, v]) => new PyTuple([key, v])),
      ),
  ],
  ['keys', (_s, self) => dictView('dict_keys', (self as PyDict).keys())],
  ['values', (_s, self) => dictView('dict_values', (self as PyDict).values())],
  ['copy', (_s, self) => PyDict.from((self as PyDict).entries())],
  [
    'setdefault',
    (_s, self, a, k) => {
      const [key, d] = bind('setdefault', ['key', 'default'], [undefined, null], a, k);
      const dict = self as PyDict;
      const v = dict.get(key as Value);
      if (v !== undefined) return v;
      dict.set(key as Value, d as Value);
      return d as Value;
    },
  ],
  [
    'pop',
    (_s, self, a, k) => {
      const [key, d] = bind('pop', ['key', 'default'], [undefined, new Undefined('')], a, k);
      const dict = self as PyDict;
      const v = dict.get(key as Value);
      if (v !== undefined) {
        dict.delete(key as Value);
        return v;
      }
      if (d instanceof Undefined) throw new PyError('KeyError', str(key as Value));
      return d as Value;
    },
  ],
  [
    'update',
    (_s, self, a, k) => {
      const dict = self as PyDict;
      const other = a[0];
      if (other instanceof PyDict) for (const [key, v] of other.entries()) dict.set(key, v);
      else if (other !== undefined && other !== null) {
        for (const pair of iterate(other)) {
          const [key, v] = iterate(pair);
          dict.set(key as Value, v as Value);
        }
      }
      for (const [key, v] of k) dict.set(key, v);
      return null;
    },
  ],
  [
    'clear',
    (_s, self) => {
      (self as PyDict).clear();
      return null;
    },
  ],
  [
    'popitem',
    (_s, self) => {
      const dict = self as PyDict;
      const last = dict.entries().pop();
      if (!last) throw new PyError('KeyError', 'popitem(): dictionary is empty');
      dict.delete(last[0]);
      return new PyTuple(last);
    },
  ],
]);

const bound = (state: RenderState, name: string, self: Value, method: Method): PyCallable =>
  new PyCallable(name, (args, kwargs) => method(state, self, args, kwargs));

/** `obj.name`: Jinja2 tries the attribute first, then the item. */
export const getattr = (state: RenderState, obj: Value, name: string): Value => {
  if (obj instanceof Undefined) return obj.fail();
  const method = methodOf(obj, name);
  if (method) return bound(state, name, obj, method);
  if (obj instanceof PyDict) {
    const v = obj.get(name);
    if (v !== undefined) return v;
  } else if (obj instanceof PyObject) {
    const v = obj.getter ? obj.getter(name) : undefined;
    if (v !== undefined) return v;
    const a = obj.attrs.get(name);
    if (a !== undefined) return a;
  } else if (obj instanceof PyTuple && obj.fields?.includes(name)) {
    return obj.items[obj.fields.indexOf(name)] as Value;
  } else if (obj instanceof PyCallable && obj.attrs) {
    const a = obj.attrs.get(name);
    if (a !== undefined) return a;
  } else if (
    obj instanceof PyFloat ||
    typeof obj === 'number' ||
    typeof obj === 'bigint' ||
    typeof obj === 'boolean'
  ) {
    if (name === 'real') return typeof obj === 'boolean' ? num(obj) : obj;
    if (name === 'imag') return obj instanceof PyFloat ? new PyFloat(0) : 0;
  }
  return undefinedMember(obj, name);
};

const methodOf = (obj: Value, name: string): Method | undefined => {
  if (isString(obj)) return STR_METHODS.get(name);
  if (Array.isArray(obj)) {
    if (VIEWS.has(obj)) return undefined;
    if (RANGES.has(obj)) return SEQ_METHODS.get(name);
    return LIST_METHODS.get(name) ?? SEQ_METHODS.get(name);
  }
  if (obj instanceof PyTuple) return SEQ_METHODS.get(name);
  if (obj instanceof PyDict) return DICT_METHODS.get(name);
  if (obj instanceof PyFloat && name === 'is_integer')
    return (_s, self) => Number.isInteger((self as PyFloat).v);
  return undefined;
};

/** `obj[key]`: Jinja2 tries the item first, then (for a string key) the attribute. */
export const getitem = (state: RenderState, obj: Value, key: Value): Value => {
  if (obj instanceof Undefined) return obj.fail();
  if (key instanceof Undefined) return key.fail();
  if (obj instanceof PyDict) {
    if (Array.isArray(key) || key instanceof PyDict) return undefinedMember(obj, key);
    const v = obj.get(key);
    if (v !== undefined) return v;
  } else if ((Array.isArray(obj) || obj instanceof PyTuple || isString(obj)) && isInt(key)) {
    // dict views are not subscriptable: Jinja2 turns the TypeError into an undefined.
    if (Array.isArray(obj) && VIEWS.has(obj)) return undefinedMember(obj, key);
    const items = isString(obj) ? chars(str(obj)) : iterate(obj);
    const i = index(key, items.length);
    if (i >= 0 && i < items.length) {
      const v = items[i] as Value;
      return obj instanceof Markup ? new Markup(v as string) : v;
    }
    return undefinedMember(obj, key);
  }
  if (typeof key === 'string') return getattr(state, obj, key);
  return undefinedMember(obj, key);
};

const sliceBound = (v: Value): number | null => {
  if (v === null) return null;
  if (v instanceof Undefined) return v.fail();
  if (!isInt(v)) throw typeError('slice indices must be integers or None or have an __index__ method');
  return num(v);
};

/** Python's slice semantics on str, list, tuple and range (Jinja2 slices without its getitem). */
export const sliceValue = (obj: Value, start: Value, stop: Value, step: Value): Value => {
  if (obj instanceof Undefined) return obj.fail();
  const items = isString(obj)
    ? chars(str(obj))
    : (Array.isArray(obj) && !VIEWS.has(obj)) || obj instanceof PyTuple
      ? iterate(obj)
      : null;
  if (!items) throw typeError(`'${typeName(obj)}' object is not subscriptable`);
  const st = sliceBound(step) ?? 1;
  const first = sliceBound(start);
  const last = sliceBound(stop);
  if (st === 0) throw valueError('slice step cannot be zero');
  const len = items.length;
  const norm = (v: number | null, dflt: number, lo: number, hi: number) => {
    if (v === null) return dflt;
    const x = v < 0 ? v + len : v;
    return Math.max(lo, Math.min(hi, x));
  };
  const out: Value[] = [];
  const a = st > 0 ? norm(first, 0, 0, len) : norm(first, len - 1, -1, len - 1);
  const b = st > 0 ? norm(last, len, 0, len) : norm(last, -1, -1, len - 1);
  if (st > 0) for (let i = a; i < b; i += st) out.push(items[i] as Value);
  else for (let i = a; i > b; i += st) out.push(items[i] as Value);
  if (isString(obj)) {
    const s = (out as string[]).join('');
    return obj instanceof Markup ? new Markup(s) : s;
  }
  const range = Array.isArray(obj) ? RANGES.get(obj) : undefined;
  if (range) {
    // A slice of a range is a range: range(10)[2:5] is range(2, 5).
    RANGES.set(out, {
      start: range.start + a * range.step,
      stop: range.start + b * range.step,
      step: range.step * st,
    });
  }
  return obj instanceof PyTuple ? new PyTuple(out) : out;
};

export { PY_WS };
