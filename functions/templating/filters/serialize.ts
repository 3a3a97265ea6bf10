/** Jinja2's tojson and pprint filters: Python's json.dumps and pprint.pformat. */
import { compare, iterate } from '../protocols.js';
import { bind, define, type FilterFn, type RenderState } from '../runtime.js';
import { cpLength, pySplitlines } from '../str-functions.js';
import {
  floatRepr,
  intRepr,
  isString,
  Markup,
  num,
  PyDict,
  PyError,
  PyFloat,
  PyTuple,
  RANGES,
  repr,
  str,
  typeError,
  typeName,
  Undefined,
  type Value,
  VIEWS,
} from '../values.js';

export const SERIALIZE_FILTERS = new Map<string, FilterFn>();
const def = define(SERIALIZE_FILTERS);

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

def('tojson', (_s, v, a, k) => {
  const [indent] = bind('tojson', ['indent'], [null], a, k);
  const text = jsonDumps(v, indent === null ? null : num(indent as Value));
  return new Markup(
    text.replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/'/g, '\\u0027'),
  );
});
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
