/**
 * Jinja2 3.1's builtin filters, tests and globals (jinja2/filters.py, tests.py, defaults.py),
 * each written here over the values of values.ts. They are the only functions a template can
 * reach, and they read members only through attributes.ts.
 */
import {
  bind,
  getattr,
  getitem,
  pad,
  pyCapitalize,
  pyReplace,
  pySplitlines,
  stripChars,
  striptagsOf,
} from './attributes.js';
import type { FilterFn, RenderState, TestFn } from './evaluate.js';
import { percentFormat, pyRound, toFixed } from './format.js';
import {
  bigOf,
  chars,
  compare,
  contains,
  eq,
  escapeString,
  float,
  floatMod,
  floatRepr,
  intArith,
  intRepr,
  intResult,
  isInt,
  isIterable,
  isNumber,
  isString,
  iterate,
  type Kwargs,
  length,
  Markup,
  makeRange,
  markupEscape,
  normInt,
  num,
  PyCallable,
  PyDict,
  PyError,
  PyFloat,
  PyObject,
  PyTuple,
  RANGES,
  repr,
  softStr,
  str,
  strParts,
  truthy,
  typeError,
  typeName,
  Undefined,
  type Value,
  VIEWS,
  valueError,
} from './values.js';

const noKw = new Map<string, Value>();

/** Jinja2's make_attrgetter: `a.b.0` walks attributes and items; a missing step → default. */
const attrGetter = (state: RenderState, attribute: Value, dflt: Value = null, lower = false) => {
  const parts = isInt(attribute)
    ? [num(attribute)]
    : str(attribute)
        .split('.')
        .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  return (item: Value): Value => {
    let v = item;
    for (const part of parts) {
      v = getitem(state, v, part);
      if (v instanceof Undefined) {
        if (dflt !== null) {
          v = dflt;
          break;
        }
        return v;
      }
    }
    return lower && isString(v) ? str(v).toLowerCase() : v;
  };
};

/** Several comma-separated attributes (sort, in 3.1): a tuple key. */
const multiAttrGetter = (state: RenderState, attribute: Value, lower: boolean) => {
  if (!isString(attribute)) return attrGetter(state, attribute, null, lower);
  const getters = str(attribute)
    .split(',')
    .map((a) => attrGetter(state, a.trim(), null, lower));
  if (getters.length === 1) return getters[0] as (v: Value) => Value;
  return (item: Value): Value => new PyTuple(getters.map((g) => g(item)));
};

const ignoreCase = (v: Value): Value => (isString(v) ? str(v).toLowerCase() : v);

const sortBy = (state: RenderState, items: Value[], key: (v: Value) => Value, reverse: boolean): Value[] => {
  state.tick(Math.ceil(items.length / 256));
  const keyed = items.map((v, i) => ({ v, k: key(v), i }));
  keyed.sort((a, b) => {
    const c = compare(a.k, b.k);
    return c !== 0 ? (reverse ? -c : c) : a.i - b.i;
  });
  return keyed.map((x) => x.v);
};

const INT_DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';
const PREFIX_BASES: Record<string, number> = { x: 16, o: 8, b: 2 };

/** Python's int(text, base): prefixes (any with base 0), underscores between digits, exact. */
const parsePyInt = (text: string, base: number): number | bigint | undefined => {
  if (base !== 0 && (base < 2 || base > 36)) return undefined;
  const m = /^([+-]?)([\s\S]*)$/.exec(stripChars(text, null, true, true)) as RegExpExecArray;
  const negative = m[1] === '-';
  let body = m[2] as string;
  let b = base;
  const prefix = /^0([xob])/i.exec(body);
  const prefixBase = prefix ? PREFIX_BASES[(prefix[1] as string).toLowerCase()] : undefined;
  if (prefixBase !== undefined && (b === 0 || b === prefixBase)) {
    b = prefixBase;
    body = body.slice(2);
    if (body.startsWith('_')) body = body.slice(1);
  } else if (b === 0) {
    b = 10;
    if (/^0/.test(body) && !/^0(_?0)*$/.test(body)) return undefined;
  }
  if (!body || body.startsWith('_') || body.endsWith('_') || body.includes('__')) return undefined;
  const digits = body.replace(/_/g, '').toLowerCase();
  // Python 3.11 refuses longer decimal strings (sys.get_int_max_str_digits()).
  if (b === 10 && digits.length > 4300) return undefined;
  let n = 0n;
  const big = BigInt(b);
  for (const c of digits) {
    const d = INT_DIGITS.indexOf(c);
    if (d < 0 || d >= b) return undefined;
    n = n * big + BigInt(d);
  }
  return normInt(negative ? -n : n);
};

/**
 * Jinja2's int filter: int(value, base) for strings, int(value) otherwise; when that fails,
 * int(float(value)), and the default when that fails too (a string "inf" or "nan" included).
 */
const toInt = (v: Value, dflt: Value, base: Value): Value => {
  if (isString(v)) {
    const s = str(v);
    const n = isInt(base) ? parsePyInt(s, num(base)) : undefined;
    if (n !== undefined) return n;
    const f = toFloatNumber(s);
    return f === undefined || !Number.isFinite(f) ? dflt : intResult(Math.trunc(f) || 0);
  }
  if (isInt(v)) return typeof v === 'boolean' ? num(v) : v;
  if (v instanceof PyFloat) {
    // int(nan) is a ValueError (caught: float(nan) fails the same way); int(inf) is not caught.
    if (Number.isNaN(v.v)) return dflt;
    if (!Number.isFinite(v.v)) throw new PyError('OverflowError', 'cannot convert float infinity to integer');
    return intResult(Math.trunc(v.v) || 0);
  }
  return dflt;
};

/** Python's float(text): digits with single underscores between them, inf, nan; undefined if invalid. */
const FLOAT_TEXT = /^[-+]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:e[-+]?\d(?:_?\d)*)?$/;
const toFloatNumber = (s: string): number | undefined => {
  const t = stripChars(s, null, true, true).toLowerCase();
  if (FLOAT_TEXT.test(t)) return Number(t.replace(/_/g, ''));
  if (/^[-+]?(inf|infinity)$/.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (/^[-+]?nan$/.test(t)) return Number.NaN;
  return undefined;
};

/** Python's json.dumps(sort_keys=True), then Jinja2's HTML-safe replacements. */
const jsonDumps = (v: Value, indent: number | null, level = 0): string => {
  if (v === null) return 'null';
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (typeof v === 'number' || typeof v === 'bigint') return intRepr(v);
  if (Array.isArray(v) && (RANGES.has(v) || VIEWS.has(v)))
    throw typeError(`Object of type ${typeName(v)} is not JSON serializable`);
  if (v instanceof PyFloat) {
    if (Number.isNaN(v.v)) return 'NaN';
    if (!Number.isFinite(v.v)) return v.v > 0 ? 'Infinity' : '-Infinity';
    return floatRepr(v.v);
  }
  if (isString(v)) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: JSON escapes control characters
    return `"${str(v).replace(/[\\"\u0000-\u001f\u007f-\uffff]/g, (c) => {
      const map: Record<string, string> = {
        '\\': '\\\\',
        '"': '\\"',
        '\n': '\\n',
        '\r': '\\r',
        '\t': '\\t',
        '\b': '\\b',
        '\f': '\\f',
      };
      return map[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    })}"`;
  }
  const nl = indent === null ? '' : `\n${' '.repeat(indent * (level + 1))}`;
  const end = indent === null ? '' : `\n${' '.repeat(indent * level)}`;
  const sep = indent === null ? ', ' : ',';
  if (Array.isArray(v) || v instanceof PyTuple) {
    const items = iterate(v);
    if (!items.length) return '[]';
    return `[${nl}${items.map((i) => jsonDumps(i, indent, level + 1)).join(sep + nl)}${end}]`;
  }
  if (v instanceof PyDict) {
    const entries = v
      .entries()
      .map(
        ([k, x]) =>
          [
            k === null ? 'null' : isString(k) ? str(k) : str(k === true ? 'true' : k === false ? 'false' : k),
            x,
          ] as const,
      );
    if (!entries.length) return '{}';
    entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return `{${nl}${entries.map(([k, x]) => `${jsonDumps(k, indent)}: ${jsonDumps(x, indent, level + 1)}`).join(sep + nl)}${end}}`;
  }
  if (v instanceof Undefined) return v.fail();
  throw typeError(`Object of type ${typeName(v)} is not JSON serializable`);
};

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

// textwrap's chunking (Lib/textwrap.py): only ASCII whitespace separates words; \w is Unicode's.
const TW_WS = '[\\t\\n\\x0b\\x0c\\r ]';
const TW_NWS = '[^\\t\\n\\x0b\\x0c\\r ]';
const TW_WORD = '[\\p{L}\\p{N}_]';
const TW_PUNCT = '[\\p{L}\\p{N}_!"\'&.,?]';
const TW_LETTER = '[\\p{L}\\p{Nl}\\p{No}_]';
/** textwrap.TextWrapper.wordsep_re: whitespace, em-dashes, words split after their hyphens. */
const WORDSEP_RE = new RegExp(
  `(${TW_WS}+|(?<=${TW_PUNCT})-{2,}(?=${TW_WORD})|${TW_NWS}+?(?:-(?:(?<=${TW_LETTER}{2}-)|(?<=${TW_LETTER}-${TW_LETTER}-))(?=${TW_LETTER}-?${TW_LETTER})|(?=${TW_WS}|$)|(?<=${TW_PUNCT})(?=-{2,}${TW_WORD})))`,
  'u',
);
const WORDSEP_SIMPLE_RE = new RegExp(`(${TW_WS}+)`);
/** What str.strip() removes: a chunk of only these is whitespace to textwrap. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: Python's whitespace includes \x1c-\x1f
const PY_SPACE_ONLY = /^[\s\u0085\u001c-\u001f]*$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: as above
const PY_SPACE = /^[\s\u0085\u001c-\u001f]$/;

interface WrapChunk {
  text: string;
  /** Code points left. */
  len: number;
  /** Whether what is left is whitespace only (str.strip() leaves nothing). */
  space: boolean;
  /** The code points, once the chunk is being cut (a long word), and how many are used up. */
  cps?: string[];
  off: number;
  /** Index of its last code point that is not whitespace. */
  lastNonSpace: number;
}

/**
 * Python's textwrap.wrap(expand_tabs=False, replace_whitespace=False) for one line. Linear: a long
 * word is cut from its code points by an offset, not by copying what is left of it each time.
 */
const textwrap = (
  state: RenderState,
  text: string,
  width: number,
  breakLong: boolean,
  onHyphens: boolean,
): string[] => {
  if (width <= 0) throw valueError(`invalid width ${width} (must be > 0)`);
  const stack: WrapChunk[] = text
    .split(onHyphens ? WORDSEP_RE : WORDSEP_SIMPLE_RE)
    .filter(Boolean)
    .map((t) => ({ text: t, len: cpLength(t), space: PY_SPACE_ONLY.test(t), off: 0, lastNonSpace: -1 }))
    .reverse();
  const top = () => stack[stack.length - 1] as WrapChunk;
  const textOf = (c: WrapChunk) => (c.cps ? c.cps.slice(c.off).join('') : c.text);
  const lines: string[] = [];
  while (stack.length) {
    state.tick();
    const cur: string[] = [];
    let curLen = 0;
    let lastIsSpace = false;
    if (lines.length && top().space) stack.pop();
    while (stack.length) {
      const c = top();
      if (curLen + c.len > width) break;
      cur.push(textOf(c));
      lastIsSpace = c.space;
      curLen += c.len;
      stack.pop();
    }
    if (stack.length && top().len > width) {
      // textwrap's _handle_long_word
      const spaceLeft = width < 1 ? 1 : width - curLen;
      if (breakLong) {
        const c = top();
        if (!c.cps) {
          c.cps = chars(c.text);
          let i = c.cps.length - 1;
          while (i >= 0 && PY_SPACE.test(c.cps[i] as string)) i--;
          c.lastNonSpace = i;
        }
        let end = spaceLeft;
        if (onHyphens && c.len > spaceLeft) {
          // Break after the last hyphen in reach, if something other than hyphens precedes it.
          let hyphen = -1;
          for (let i = Math.min(spaceLeft, c.len) - 1; i > 0; i--) {
            if (c.cps[c.off + i] === '-') {
              hyphen = i;
              break;
            }
          }
          if (hyphen > 0) {
            for (let i = 0; i < hyphen; i++) {
              if (c.cps[c.off + i] !== '-') {
                end = hyphen + 1;
                break;
              }
            }
          }
        }
        const taken = Math.min(end, c.len);
        const piece = c.cps.slice(c.off, c.off + taken).join('');
        cur.push(piece);
        lastIsSpace = PY_SPACE_ONLY.test(piece);
        c.off += taken;
        c.len -= taken;
        c.space = c.off > c.lastNonSpace;
        if (c.len === 0) stack.pop();
      } else if (!cur.length) {
        const c = stack.pop() as WrapChunk;
        cur.push(textOf(c));
        lastIsSpace = c.space;
      }
    }
    if (cur.length && lastIsSpace) cur.pop();
    if (cur.length) lines.push(cur.join(''));
  }
  return lines;
};

const lipsumWords =
  'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua'.split(
    ' ',
  );

// --- filters ------------------------------------------------------------------------------------

const selectOrReject = (
  state: RenderState,
  value: Value,
  args: Value[],
  kwargs: Kwargs,
  byAttr: boolean,
  modfunc: (b: boolean) => boolean,
): Value[] => {
  const items = iterate(value);
  let rest = [...args];
  let getter: (v: Value) => Value = (v) => v;
  if (byAttr) {
    if (!rest.length) throw new PyError('FilterArgumentError', 'Missing parameter for attribute name');
    getter = attrGetter(state, rest[0] as Value);
    rest = rest.slice(1);
  }
  let check: (v: Value) => boolean;
  if (rest.length) {
    const name = str(rest[0] as Value);
    const test = TESTS.get(name);
    if (!test) throw new PyError('TemplateRuntimeError', `No test named '${name}'.`);
    const testArgs = rest.slice(1);
    check = (v) => test(state, v, testArgs, kwargs, testEnv);
  } else {
    check = (v) => truthy(v);
  }
  return items.filter((item) => {
    state.tick();
    return modfunc(check(getter(item)));
  });
};

/** What a test may know of the environment: which filters and tests exist. */
export const testEnv = {
  hasFilter: (name: string) => FILTERS.has(name),
  hasTest: (name: string) => TESTS.has(name),
};

const minMax = (
  state: RenderState,
  value: Value,
  args: Value[],
  kwargs: Kwargs,
  sign: number,
  fname: string,
): Value => {
  const [caseSensitive, attribute] = bind(
    fname,
    ['case_sensitive', 'attribute'],
    [false, null],
    args,
    kwargs,
  );
  const items = iterate(value);
  if (!items.length) return new Undefined('No aggregated item, sequence was empty.');
  const key =
    attribute !== null
      ? attrGetter(state, attribute as Value, null, !caseSensitive)
      : caseSensitive
        ? (v: Value) => v
        : ignoreCase;
  let best = items[0] as Value;
  let bestKey = key(best);
  for (const item of items.slice(1)) {
    const k = key(item);
    if (compare(k, bestKey) * sign > 0) {
      best = item;
      bestKey = k;
    }
  }
  return best;
};

const F = new Map<string, FilterFn>();
const def = (names: string | string[], fn: FilterFn) => {
  for (const n of Array.isArray(names) ? names : [names]) F.set(n, fn);
};

def('abs', (_s, v) => {
  if (!isNumber(v)) {
    if (v instanceof Undefined) return v.fail();
    throw typeError(`bad operand type for abs(): '${typeName(v)}'`);
  }
  if (v instanceof PyFloat) return float(Math.abs(v.v));
  return typeof v === 'bigint' ? normInt(v < 0n ? -v : v) : Math.abs(num(v));
});
def('attr', (state, v, a, k) => {
  const [name] = bind('attr', ['name'], [undefined], a, k);
  if (v instanceof Undefined) return v.fail();
  const r = getattr(state, v, str(name as Value));
  // attr() reads attributes only: a dict's keys are items, not attributes.
  if (v instanceof PyDict && !(r instanceof PyCallable))
    return new Undefined(`'dict object' has no attribute '${str(name as Value)}'`);
  return r;
});
def('batch', (state, v, a, k) => {
  const [n, fill] = bind('batch', ['linecount', 'fill_with'], [undefined, null], a, k);
  const size = num(n as Value);
  if (size <= 0) throw valueError('batch size must be positive');
  const items = iterate(v);
  const out: Value[] = [];
  for (let i = 0; i < items.length; i += size) {
    state.tick();
    const chunk = items.slice(i, i + size);
    if (fill !== null && chunk.length < size) while (chunk.length < size) chunk.push(fill as Value);
    out.push(chunk);
  }
  return out;
});
def('capitalize', (_s, v) => {
  const [s, wrap] = strParts(softStr(v));
  return wrap(pyCapitalize(s));
});
def('center', (state, v, a, k) => {
  const [width] = bind('center', ['width'], [80], a, k);
  const [s, wrap] = strParts(softStr(v));
  return wrap(pad(state, s, width as Value, ' ', 'center'));
});
def(['count', 'length'], (_s, v) => length(v));
def(['default', 'd'], (_s, v, a, k) => {
  const [dflt, boolean] = bind('default', ['default_value', 'boolean'], ['', false], a, k);
  if (v instanceof Undefined || (truthy(boolean as Value) && !truthy(v))) return dflt as Value;
  return v;
});
def('dictsort', (state, v, a, k) => {
  const [cs, by, rev] = bind('dictsort', ['case_sensitive', 'by', 'reverse'], [false, 'key', false], a, k);
  if (!(v instanceof PyDict)) {
    if (v instanceof Undefined) return v.fail();
    throw typeError('dictsort() needs a mapping');
  }
  const pos = str(by as Value) === 'key' ? 0 : str(by as Value) === 'value' ? 1 : -1;
  if (pos < 0) throw new PyError('FilterArgumentError', 'You can only sort by either "key" or "value"');
  const items: Value[] = v.entries().map(([key, x]) => new PyTuple([key, x]));
  return sortBy(
    state,
    items,
    (item) => {
      const x = (item as PyTuple).items[pos] as Value;
      return truthy(cs as Value) ? x : ignoreCase(x);
    },
    truthy(rev as Value),
  );
});
def(['escape', 'e'], (_s, v) => markupEscape(v));
def('filesizeformat', (_s, v, a, k) => {
  const [binary] = bind('filesizeformat', ['binary'], [false], a, k);
  const bytes = isString(v) ? Number(str(v)) : num(v);
  const base = truthy(binary as Value) ? 1024 : 1000;
  const prefixes = truthy(binary as Value)
    ? ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB', 'ZiB', 'YiB']
    : ['kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];
  if (bytes === 1) return '1 Byte';
  if (bytes < base) return `${Math.trunc(bytes)} Bytes`;
  let unit = base;
  for (let i = 0; i < prefixes.length; i++) {
    unit = base ** (i + 2);
    if (bytes < unit) return `${toFixed((base * bytes) / unit, 1)} ${prefixes[i]}`;
  }
  return `${toFixed((base * bytes) / unit, 1)} ${prefixes[prefixes.length - 1]}`;
});
def('first', (_s, v) => {
  const items = iterate(v);
  return items.length ? (items[0] as Value) : new Undefined('No first item, sequence was empty.');
});
def('last', (_s, v) => {
  const items = iterate(v);
  return items.length
    ? (items[items.length - 1] as Value)
    : new Undefined('No last item, sequence was empty.');
});
def('float', (_s, v, a, k) => {
  const [dflt] = bind('float', ['default'], [float(0)], a, k);
  if (isNumber(v)) return float(num(v));
  if (isString(v)) {
    const f = toFloatNumber(str(v));
    return f === undefined ? (dflt as Value) : float(f);
  }
  if (v instanceof Undefined) return v.fail();
  return dflt as Value;
});
def('forceescape', (_s, v) => new Markup(escapeString(v instanceof Markup ? v.s : str(v))));
def('format', (state, v, a, k) => {
  if (a.length && k.size)
    throw new PyError(
      'FilterArgumentError',
      "can't handle positional and keyword arguments at the same time",
    );
  return percentFormat(state, softStr(v), k.size ? PyDict.from(k.entries()) : new PyTuple(a));
});
def('groupby', (state, v, a, k) => {
  const [attribute, dflt, cs] = bind(
    'groupby',
    ['attribute', 'default', 'case_sensitive'],
    [undefined, null, false],
    a,
    k,
  );
  const key = attrGetter(state, attribute as Value, dflt as Value, !truthy(cs as Value));
  const out = attrGetter(state, attribute as Value, dflt as Value, false);
  const sorted = sortBy(state, iterate(v), key, false);
  const groups: Value[] = [];
  let current: Value[] = [];
  let currentKey: Value | undefined;
  for (const item of sorted) {
    const kv = key(item);
    if (currentKey === undefined || !eq(kv, currentKey)) {
      if (current.length) groups.push(groupTuple(out(current[0] as Value), current));
      current = [];
      currentKey = kv;
    }
    current.push(item);
  }
  if (current.length) groups.push(groupTuple(out(current[0] as Value), current));
  return groups;
});
const groupTuple = (grouper: Value, list: Value[]) => {
  const t = new PyTuple([grouper, list]);
  t.fields = ['grouper', 'list'];
  return t;
};
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
def('int', (_s, v, a, k) => {
  const [dflt, base] = bind('int', ['default', 'base'], [0, 10], a, k);
  if (v instanceof Undefined) return v.fail();
  return toInt(v, dflt as Value, base as Value);
});
def('items', (_s, v) => {
  if (v instanceof Undefined) return [];
  if (!(v instanceof PyDict)) throw typeError('Can only get item pairs from a mapping.');
  return v.entries().map(([key, x]) => new PyTuple([key, x]));
});
def('join', (state, v, a, k) => {
  const [d, attribute] = bind('join', ['d', 'attribute'], ['', null], a, k);
  let items = iterate(v);
  if (attribute !== null) items = items.map(attrGetter(state, attribute as Value));
  if (!state.autoescape) {
    const parts = items.map(str);
    state.guardString(parts.reduce((n, p) => n + p.length, 0) + str(d as Value).length * parts.length);
    return parts.join(str(d as Value));
  }
  const markup = d instanceof Markup || items.some((i) => i instanceof Markup);
  const parts = items.map((i) => (markup ? markupEscape(i).s : str(i)));
  const sep = markup ? markupEscape(d as Value).s : str(d as Value);
  state.guardString(parts.reduce((n, p) => n + p.length, 0) + sep.length * parts.length);
  const joined = parts.join(sep);
  return markup ? new Markup(joined) : joined;
});
def('list', (_s, v) => [...iterate(v)]);
def('lower', (_s, v) => {
  const [s, wrap] = strParts(softStr(v));
  return wrap(s.toLowerCase());
});
def('upper', (_s, v) => {
  const [s, wrap] = strParts(softStr(v));
  return wrap(s.toUpperCase());
});
def('map', (state, v, a, k, env) => {
  const items = iterate(v);
  if (!a.length && k.has('attribute')) {
    const [attribute, dflt] = bind('map', ['attribute', 'default'], [undefined, null], [], k);
    return items.map(attrGetter(state, attribute as Value, dflt as Value));
  }
  if (!a.length) throw new PyError('FilterArgumentError', 'map requires a filter argument');
  const name = str(a[0] as Value);
  const filter = F.get(name);
  if (!filter) throw new PyError('TemplateRuntimeError', `No filter named '${name}'.`);
  const rest = a.slice(1);
  return items.map((item) => {
    state.tick();
    return filter(state, item, rest, k, env);
  });
});
def('max', (state, v, a, k) => minMax(state, v, a, k, 1, 'max'));
def('min', (state, v, a, k) => minMax(state, v, a, k, -1, 'min'));
def('pprint', (state, v) => pformat(state, v));

/** Python's sort order, or (like pprint's _safe_key) type names when the values do not compare. */
const safeCompare = (a: Value, b: Value): number => {
  try {
    return compare(a, b);
  } catch (e) {
    if (!(e instanceof PyError) || e.type !== 'TypeError') throw e;
    const x = typeName(a);
    const y = typeName(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
};

const sortedEntries = (d: PyDict): [Value, Value][] => d.entries().sort((a, b) => safeCompare(a[0], b[0]));

/** What pprint dispatches on: plain dicts, lists, tuples and strings (not views, ranges, Markup). */
const isPlainList = (v: Value): v is Value[] => Array.isArray(v) && !RANGES.has(v) && !VIEWS.has(v);
const isPlainTuple = (v: Value): v is PyTuple => v instanceof PyTuple && !v.fields;

/** pprint's _safe_repr: repr, with dict keys sorted. */
const safeRepr = (state: RenderState, v: Value): string => {
  state.tick();
  if (v instanceof PyDict)
    return `{${sortedEntries(v)
      .map(([k, x]) => `${safeRepr(state, k)}: ${safeRepr(state, x)}`)
      .join(', ')}}`;
  if (isPlainList(v)) return `[${v.map((x) => safeRepr(state, x)).join(', ')}]`;
  if (isPlainTuple(v))
    return v.items.length === 1
      ? `(${safeRepr(state, v.items[0] as Value)},)`
      : `(${v.items.map((x) => safeRepr(state, x)).join(', ')})`;
  return repr(v);
};

/** Python's len() of a string: code points. */
const cpLength = (s: string): number => {
  if (!/[\ud800-\udbff]/.test(s)) return s.length;
  return chars(s).length;
};

const PPRINT_WIDTH = 80;

/** pprint.pformat(v) (width 80, indent 1, dicts sorted), as Jinja2's pprint filter calls it. */
const pformat = (state: RenderState, value: Value): string => {
  const out: string[] = [];
  const write = (s: string) => {
    state.guardString(s.length);
    out.push(s);
  };
  const format = (v: Value, indent: number, allowance: number, level: number): void => {
    const rep = safeRepr(state, v);
    if (cpLength(rep) > PPRINT_WIDTH - indent - allowance) {
      if (v instanceof PyDict) {
        write('{');
        const items = sortedEntries(v);
        if (items.length) {
          const inner = indent + 1;
          items.forEach(([k, x], i) => {
            const last = i === items.length - 1;
            const krep = safeRepr(state, k);
            write(`${krep}: `);
            format(x, inner + cpLength(krep) + 2, last ? allowance + 1 : 1, level + 1);
            if (!last) write(`,\n${' '.repeat(inner)}`);
          });
        }
        write('}');
        return;
      }
      if (isPlainList(v) || isPlainTuple(v)) {
        const items = isPlainList(v) ? v : v.items;
        const end = isPlainList(v) ? ']' : items.length === 1 ? ',)' : ')';
        write(isPlainList(v) ? '[' : '(');
        const inner = indent + 1;
        items.forEach((x, i) => {
          const last = i === items.length - 1;
          if (i > 0) write(`,\n${' '.repeat(inner)}`);
          format(x, inner, last ? allowance + end.length : 1, level + 1);
        });
        write(end);
        return;
      }
      if (typeof v === 'string' && v.length) {
        formatString(v, indent, allowance, level + 1);
        return;
      }
    }
    write(rep);
  };
  /** pprint's _pprint_str: a long string as adjacent literals, split after whitespace. */
  const formatString = (s: string, indentIn: number, allowanceIn: number, level: number): void => {
    let indent = indentIn;
    let allowance = allowanceIn;
    const chunks: string[] = [];
    const lines = pySplitlines(s, true);
    if (level === 1) {
      indent += 1;
      allowance += 1;
    }
    const maxWidth = PPRINT_WIDTH - indent;
    let maxWidth1 = maxWidth;
    let rep = '';
    lines.forEach((line, i) => {
      state.tick();
      rep = repr(line);
      if (i === lines.length - 1) maxWidth1 -= allowance;
      if (cpLength(rep) <= maxWidth1) {
        chunks.push(rep);
        return;
      }
      const parts = line.match(/\S*\s*/gu) ?? [];
      if (parts.at(-1) === '') parts.pop();
      let maxWidth2 = maxWidth;
      let current = '';
      parts.forEach((part, j) => {
        const candidate = current + part;
        if (j === parts.length - 1 && i === lines.length - 1) maxWidth2 -= allowance;
        if (cpLength(repr(candidate)) > maxWidth2) {
          if (current) chunks.push(repr(current));
          current = part;
        } else {
          current = candidate;
        }
      });
      if (current) chunks.push(repr(current));
    });
    if (chunks.length === 1) {
      write(rep);
      return;
    }
    if (level === 1) write('(');
    chunks.forEach((c, i) => {
      write(i > 0 ? `\n${' '.repeat(indent)}${c}` : c);
    });
    if (level === 1) write(')');
  };
  format(value, 0, 0, 0);
  return out.join('');
};
def('random', (_s, v) => {
  const items = iterate(v);
  if (!items.length) return new Undefined('No random item, sequence was empty.');
  return items[Math.floor(Math.random() * items.length)] as Value;
});
def('select', (state, v, a, k) => selectOrReject(state, v, a, k, false, (b) => b));
def('reject', (state, v, a, k) => selectOrReject(state, v, a, k, false, (b) => !b));
def('selectattr', (state, v, a, k) => selectOrReject(state, v, a, k, true, (b) => b));
def('rejectattr', (state, v, a, k) => selectOrReject(state, v, a, k, true, (b) => !b));
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
def('reverse', (_s, v) => {
  if (isString(v)) {
    const [s, wrap] = strParts(v);
    return wrap(chars(s).reverse().join(''));
  }
  return [...iterate(v)].reverse();
});
/** round(int, ndigits): exact, half to even; an int stays an int. */
const roundInt = (v: number | bigint | boolean, ndigits: number): Value => {
  if (ndigits >= 0) return typeof v === 'boolean' ? num(v) : v;
  const x = bigOf(v);
  if (-ndigits > (x < 0n ? -x : x).toString().length + 1) return 0;
  const f = 10n ** BigInt(-ndigits);
  let q = x / f;
  let r = x - q * f;
  if (r < 0n) {
    q -= 1n;
    r += f;
  }
  if (2n * r > f || (2n * r === f && q % 2n !== 0n)) q += 1n;
  return normInt(q * f);
};
def('round', (_s, v, a, k) => {
  const [precision, method] = bind('round', ['precision', 'method'], [0, 'common'], a, k);
  const m = str(method as Value);
  if (!['common', 'ceil', 'floor'].includes(m))
    throw new PyError('FilterArgumentError', 'method must be common, ceil or floor');
  const p = num(precision as Value);
  if (!isNumber(v)) {
    if (v instanceof Undefined) return v.fail();
    throw typeError(`type ${typeName(v)} doesn't define __round__ method`);
  }
  if (m === 'common') {
    if (isInt(v)) return roundInt(v, p);
    return float(pyRound(num(v), p));
  }
  const f = m === 'ceil' ? Math.ceil : Math.floor;
  return float(f(num(v) * 10 ** p) / 10 ** p);
});
def('safe', (_s, v) => (v instanceof Markup ? v : new Markup(str(v))));
def('slice', (_s, v, a, k) => {
  const [slices, fill] = bind('slice', ['slices', 'fill_with'], [undefined, null], a, k);
  const seq = iterate(v);
  const n = num(slices as Value);
  if (n <= 0) throw valueError('slices must be positive');
  const per = Math.floor(seq.length / n);
  const extra = seq.length % n;
  let offset = 0;
  const out: Value[] = [];
  for (let i = 0; i < n; i++) {
    const start = offset + i * per;
    if (i < extra) offset += 1;
    const end = offset + (i + 1) * per;
    const tmp = seq.slice(start, end);
    if (fill !== null && i >= extra) tmp.push(fill as Value);
    out.push(tmp);
  }
  return out;
});
def('sort', (state, v, a, k) => {
  const [rev, cs, attribute] = bind(
    'sort',
    ['reverse', 'case_sensitive', 'attribute'],
    [false, false, null],
    a,
    k,
  );
  const lower = !truthy(cs as Value);
  const key =
    attribute !== null
      ? multiAttrGetter(state, attribute as Value, lower)
      : lower
        ? ignoreCase
        : (x: Value) => x;
  return sortBy(state, [...iterate(v)], key, truthy(rev as Value));
});
def('string', (_s, v) => softStr(v));
def('striptags', (_s, v) => striptagsOf(v instanceof Markup ? v.s : str(v)));
def('sum', (state, v, a, k) => {
  const [attribute, start] = bind('sum', ['attribute', 'start'], [null, 0], a, k);
  let items = iterate(v);
  if (attribute !== null) items = items.map(attrGetter(state, attribute as Value));
  let total: Value = start as Value;
  for (const item of items) {
    state.tick();
    if (isNumber(total) && isNumber(item)) {
      total = isInt(total) && isInt(item) ? intArith('+', total, item, state) : float(num(total) + num(item));
    } else if (Array.isArray(total) && Array.isArray(item)) {
      total = [...total, ...item];
    } else {
      if (item instanceof Undefined) return item.fail();
      throw typeError(`unsupported operand type(s) for +: '${typeName(total)}' and '${typeName(item)}'`);
    }
  }
  return total;
});
def('title', (_s, v) => {
  const [s, wrap] = strParts(softStr(v));
  const parts = s.split(/([-\s({[<]+)/);
  return wrap(
    parts
      .filter(Boolean)
      .map((p) => p.charAt(0).toUpperCase() + p.slice(1).toLowerCase())
      .join(''),
  );
});
def('tojson', (_s, v, a, k) => {
  const [indent] = bind('tojson', ['indent'], [null], a, k);
  const text = jsonDumps(v, indent === null ? null : num(indent as Value));
  return new Markup(
    text.replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/'/g, '\\u0027'),
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
def('unique', (state, v, a, k) => {
  const [cs, attribute] = bind('unique', ['case_sensitive', 'attribute'], [false, null], a, k);
  const lower = !truthy(cs as Value);
  const key =
    attribute !== null
      ? attrGetter(state, attribute as Value, null, lower)
      : lower
        ? ignoreCase
        : (x: Value) => x;
  const seen = new PyDict();
  const out: Value[] = [];
  for (const item of iterate(v)) {
    state.tick();
    const kv = key(item);
    if (!seen.has(kv)) {
      seen.set(kv, true);
      out.push(item);
    }
  }
  return out;
});
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

export const FILTERS: ReadonlyMap<string, FilterFn> = F;

// --- tests ------------------------------------------------------------------------------------

const T = new Map<string, TestFn>();
const defTest = (names: string | string[], fn: TestFn) => {
  for (const n of Array.isArray(names) ? names : [names]) T.set(n, fn);
};
const arg0 = (a: Value[], k: Kwargs, name: string): Value =>
  bind('test', [name], [undefined], a, k)[0] as Value;

/** `value % n` as Python computes it, ints exactly. */
const pyMod = (v: Value, n: Value): number => {
  if (v instanceof Undefined) return v.fail();
  if (isInt(v) && isInt(n)) return Number(intArith('%', v, n));
  return floatMod(num(v), num(n));
};
defTest('odd', (_s, v) => pyMod(v, 2) === 1);
defTest('even', (_s, v) => pyMod(v, 2) === 0);
defTest('divisibleby', (_s, v, a, k) => {
  const n = arg0(a, k, 'num');
  if (num(n) === 0) throw new PyError('ZeroDivisionError', 'integer division or modulo by zero');
  return pyMod(v, n) === 0;
});
defTest('defined', (_s, v) => !(v instanceof Undefined));
defTest('undefined', (_s, v) => v instanceof Undefined);
defTest('none', (_s, v) => v === null);
defTest('boolean', (_s, v) => typeof v === 'boolean');
defTest('false', (_s, v) => v === false);
defTest('true', (_s, v) => v === true);
defTest('integer', (_s, v) => typeof v === 'number' || typeof v === 'bigint');
defTest('float', (_s, v) => v instanceof PyFloat);
defTest('number', (_s, v) => isNumber(v));
defTest('string', (_s, v) => isString(v));
defTest('mapping', (_s, v) => v instanceof PyDict);
defTest('sequence', (_s, v) => isIterable(v));
defTest('iterable', (_s, v) => isIterable(v));
defTest('callable', (_s, v) => v instanceof PyCallable || (v instanceof PyObject && !!v.callable));
defTest('sameas', (_s, v, a, k) => {
  const other = arg0(a, k, 'other');
  if (v instanceof PyFloat && other instanceof PyFloat) return v === other;
  return v === other;
});
defTest('escaped', (_s, v) => v instanceof Markup);
defTest('lower', (_s, v) => {
  const s = str(v);
  return s !== s.toUpperCase() && s === s.toLowerCase();
});
defTest('upper', (_s, v) => {
  const s = str(v);
  return s !== s.toLowerCase() && s === s.toUpperCase();
});
defTest('in', (_s, v, a, k) => contains(arg0(a, k, 'seq'), v));
defTest(['eq', 'equalto', '=='], (_s, v, a, k) => eq(v, arg0(a, k, 'other')));
defTest(['ne', '!='], (_s, v, a, k) => !eq(v, arg0(a, k, 'other')));
defTest(['lt', 'lessthan', '<'], (_s, v, a, k) => compare(v, arg0(a, k, 'other'), '<') < 0);
defTest(['le', '<='], (_s, v, a, k) => compare(v, arg0(a, k, 'other'), '<=') <= 0);
defTest(['gt', 'greaterthan', '>'], (_s, v, a, k) => compare(v, arg0(a, k, 'other'), '>') > 0);
defTest(['ge', '>='], (_s, v, a, k) => compare(v, arg0(a, k, 'other'), '>=') >= 0);
defTest('filter', (_s, v, _a, _k, env) => isString(v) && env.hasFilter(str(v)));
defTest('test', (_s, v, _a, _k, env) => isString(v) && env.hasTest(str(v)));

export const TESTS: ReadonlyMap<string, TestFn> = T;

// --- globals ----------------------------------------------------------------------------------

/** Jinja2's sandbox caps range() at 100,000 items; so do we. */
export const MAX_RANGE = 100_000;

export const GLOBALS = (state: RenderState): Map<string, Value> =>
  new Map<string, Value>([
    [
      'range',
      new PyCallable('range', (args, kwargs) => {
        if (kwargs.size) throw typeError('range() takes no keyword arguments');
        if (!args.length || args.length > 3)
          throw typeError(`range expected 1 to 3 arguments, got ${args.length}`);
        for (const x of args) {
          if (x instanceof Undefined) x.fail();
          if (!isInt(x)) throw typeError(`'${typeName(x)}' object cannot be interpreted as an integer`);
        }
        const [start, stop, step] =
          args.length === 1
            ? [0, num(args[0] as Value), 1]
            : [num(args[0] as Value), num(args[1] as Value), args[2] === undefined ? 1 : num(args[2])];
        if (step === 0) throw valueError('range() arg 3 must not be zero');
        const n = Math.max(0, Math.ceil((stop - start) / step));
        if (n > MAX_RANGE)
          throw new PyError('OverflowError', `range() is limited to ${MAX_RANGE} items, got ${n}`);
        state.guardList(n);
        return makeRange(start, stop, step);
      }),
    ],
    [
      'dict',
      new PyCallable('dict', (args, kwargs) => {
        const d = new PyDict();
        if (args[0] instanceof PyDict) for (const [key, v] of args[0].entries()) d.set(key, v);
        for (const [key, v] of kwargs) d.set(key, v);
        return d;
      }),
    ],
    [
      'lipsum',
      new PyCallable('lipsum', (args, kwargs) => {
        const [n, html, min, max] = bind(
          'lipsum',
          ['n', 'html', 'min', 'max'],
          [5, true, 20, 100],
          args,
          kwargs,
        );
        const paragraphs: string[] = [];
        for (let p = 0; p < num(n as Value); p++) {
          const count =
            num(min as Value) + Math.floor(Math.random() * (num(max as Value) - num(min as Value)));
          const words = Array.from(
            { length: count },
            (_, i) => lipsumWords[(i + p) % lipsumWords.length] as string,
          );
          const text = `${pyCapitalize(words.join(' '))}.`;
          paragraphs.push(text);
        }
        if (!truthy(html as Value)) return paragraphs.join('\n\n');
        return new Markup(paragraphs.map((t) => `<p>${escapeString(t)}</p>`).join('\n'));
      }),
    ],
    [
      'cycler',
      new PyCallable('cycler', (items) => {
        if (!items.length) throw typeError('at least one item has to be provided');
        let pos = 0;
        const attrs = new Map<string, Value>();
        const obj = new PyObject('Cycler', attrs);
        obj.getter = (name) => {
          if (name === 'current') return items[pos] as Value;
          if (name === 'items') return [...items];
          if (name === 'next' || name === '__next__')
            return new PyCallable('next', () => {
              const v = items[pos] as Value;
              pos = (pos + 1) % items.length;
              return v;
            });
          if (name === 'reset') {
            return new PyCallable('reset', () => {
              pos = 0;
              return null;
            });
          }
          return undefined;
        };
        return obj;
      }),
    ],
    [
      'joiner',
      new PyCallable('joiner', (args, kwargs) => {
        const [sep] = bind('joiner', ['sep'], [', '], args, kwargs);
        let used = false;
        return new PyObject(
          'Joiner',
          new Map(),
          false,
          new PyCallable('joiner', () => {
            if (!used) {
              used = true;
              return '';
            }
            return sep as Value;
          }),
        );
      }),
    ],
    [
      'namespace',
      new PyCallable('namespace', (args, kwargs) => {
        const attrs = new Map<string, Value>();
        if (args[0] instanceof PyDict) for (const [key, v] of args[0].entries()) attrs.set(str(key), v);
        for (const [key, v] of kwargs) attrs.set(key, v);
        return new PyObject('Namespace', attrs, true);
      }),
    ],
  ]);

void noKw;
