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
import { halfEven, percentFormat, pyRound, toFixed } from './format.js';
import {
  chars,
  compare,
  contains,
  eq,
  escapeString,
  float,
  floatRepr,
  intResult,
  isInt,
  isIterable,
  isNumber,
  isString,
  iterate,
  type Kwargs,
  length,
  Markup,
  markupEscape,
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

const toInt = (v: Value, dflt: Value, base = 10): Value => {
  if (isString(v)) {
    const s = str(v).trim().replace(/_/g, '');
    if (base === 10 ? /^[-+]?\d+$/.test(s) : true) {
      const n = base === 10 ? Number(s) : Number.parseInt(s.replace(/^0[xob]/i, ''), base);
      if (!Number.isNaN(n)) return intResult(n);
    }
    const f = toFloatNumber(s);
    if (f !== undefined && Number.isFinite(f)) return intResult(Math.trunc(f));
    return dflt;
  }
  if (isNumber(v)) {
    const n = num(v);
    return Number.isFinite(n) ? intResult(Math.trunc(n)) : dflt;
  }
  return dflt;
};

const toFloatNumber = (s: string): number | undefined => {
  const t = s.trim().replace(/_/g, '').toLowerCase();
  if (/^[-+]?(\d+\.?\d*(e[-+]?\d+)?|\.\d+(e[-+]?\d+)?)$/.test(t)) return Number(t);
  if (/^[-+]?(inf|infinity)$/.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (/^[-+]?nan$/.test(t)) return Number.NaN;
  return undefined;
};

/** Python's json.dumps(sort_keys=True), then Jinja2's HTML-safe replacements. */
const jsonDumps = (v: Value, indent: number | null, level = 0): string => {
  if (v === null) return 'null';
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (typeof v === 'number') return String(v);
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

/** Python's textwrap.wrap(expand_tabs=False, replace_whitespace=False) for one line. */
const textwrap = (text: string, width: number, breakLong: boolean, onHyphens: boolean): string[] => {
  const re = onHyphens ? /(\s+|[^\s\w]*\w+[^0-9\W]-(?=\w+[^0-9\W])|\S+)/gu : /(\s+|\S+)/g;
  const chunks = text.match(re) ?? [];
  // Split long hyphenated words the way textwrap's wordsep_re does, approximately.
  const lines: string[] = [];
  const queue = [...chunks].reverse();
  while (queue.length) {
    let cur: string[] = [];
    let curLen = 0;
    if (lines.length && queue.length && /^\s+$/.test(queue[queue.length - 1] as string)) queue.pop();
    while (queue.length) {
      const chunk = queue[queue.length - 1] as string;
      const len = chars(chunk).length;
      if (curLen + len <= width) {
        cur.push(chunk);
        curLen += len;
        queue.pop();
      } else break;
    }
    if (queue.length && chars(queue[queue.length - 1] as string).length > width) {
      const spaceLeft = width < 1 ? 1 : width - curLen;
      if (breakLong) {
        const chunk = chars(queue.pop() as string);
        cur.push(chunk.slice(0, spaceLeft).join(''));
        queue.push(chunk.slice(spaceLeft).join(''));
        curLen += spaceLeft;
      } else if (!cur.length) {
        cur.push(queue.pop() as string);
      }
    }
    if (cur.length && /^\s+$/.test(cur[cur.length - 1] as string)) {
      curLen -= chars(cur.pop() as string).length;
    }
    if (cur.length) lines.push(cur.join(''));
    else if (!queue.length) break;
    cur = [];
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
  return v instanceof PyFloat ? float(Math.abs(v.v)) : intResult(Math.abs(num(v)));
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
  return toInt(v, dflt as Value, num(base as Value));
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
def('pprint', (_s, v) => pformat(v));

/** pprint.pformat for what fits on a line: repr with dict keys sorted. */
const pformat = (v: Value): string => {
  if (v instanceof PyDict) {
    const entries = v.entries().sort((a, b) => compare(a[0], b[0]));
    return `{${entries.map(([k, x]) => `${pformat(k)}: ${pformat(x)}`).join(', ')}}`;
  }
  if (Array.isArray(v)) return `[${v.map(pformat).join(', ')}]`;
  if (v instanceof PyTuple)
    return v.items.length === 1
      ? `(${pformat(v.items[0] as Value)},)`
      : `(${v.items.map(pformat).join(', ')})`;
  return repr(v);
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
    if (isInt(v)) {
      if (p >= 0) return num(v);
      const f = 10 ** -p;
      return intResult(halfEven(num(v) / f) * f);
    }
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
      const r = num(total) + num(item);
      total = isInt(total) && isInt(item) ? intResult(r) : float(r);
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
      textwrap(line, num(width as Value), truthy(breakLong as Value), truthy(onHyphens as Value)).join(sep),
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

defTest('odd', (_s, v) => {
  if (v instanceof Undefined) return v.fail();
  return num(v) % 2 !== 0;
});
defTest('even', (_s, v) => {
  if (v instanceof Undefined) return v.fail();
  return num(v) % 2 === 0;
});
defTest('divisibleby', (_s, v, a, k) => {
  const n = num(arg0(a, k, 'num'));
  if (n === 0) throw new PyError('ZeroDivisionError', 'integer division or modulo by zero');
  const x = num(v);
  return x - Math.floor(x / n) * n === 0;
});
defTest('defined', (_s, v) => !(v instanceof Undefined));
defTest('undefined', (_s, v) => v instanceof Undefined);
defTest('none', (_s, v) => v === null);
defTest('boolean', (_s, v) => typeof v === 'boolean');
defTest('false', (_s, v) => v === false);
defTest('true', (_s, v) => v === true);
defTest('integer', (_s, v) => typeof v === 'number');
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
        const list: Value[] = Array.from({ length: n }, (_, i) => start + i * step);
        RANGES.set(list, step === 1 ? `range(${start}, ${stop})` : `range(${start}, ${stop}, ${step})`);
        return list;
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
