/** Jinja2's number filters (jinja2/filters.py): abs, float, int, round, filesizeformat, sum. */

import { pyRound, toFixed } from '../format.js';
import { bigOf, intArith } from '../numbers.js';
import { iterate, truthy } from '../protocols.js';
import { bind, define, type FilterFn } from '../runtime.js';
import { stripChars } from '../str-functions.js';
import {
  float,
  intResult,
  isInt,
  isNumber,
  isString,
  normInt,
  num,
  PyError,
  PyFloat,
  str,
  typeError,
  typeName,
  Undefined,
  type Value,
} from '../values.js';
import { attrGetter } from './common.js';

export const NUMBER_FILTERS = new Map<string, FilterFn>();
const def = define(NUMBER_FILTERS);

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
def('abs', (_s, v) => {
  if (!isNumber(v)) {
    if (v instanceof Undefined) return v.fail();
    throw typeError(`bad operand type for abs(): '${typeName(v)}'`);
  }
  if (v instanceof PyFloat) return float(Math.abs(v.v));
  return typeof v === 'bigint' ? normInt(v < 0n ? -v : v) : Math.abs(num(v));
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
def('int', (_s, v, a, k) => {
  const [dflt, base] = bind('int', ['default', 'base'], [0, 10], a, k);
  if (v instanceof Undefined) return v.fail();
  return toInt(v, dflt as Value, base as Value);
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
    if (isInt(v)) return roundInt(v, p);
    return float(pyRound(num(v), p));
  }
  const f = m === 'ceil' ? Math.ceil : Math.floor;
  return float(f(num(v) * 10 ** p) / 10 ** p);
});
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
