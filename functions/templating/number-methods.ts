/**
 * The methods and attributes of Python's int (and bool) and float that a template can reach (the
 * public names of `dir(int)` and `dir(float)` in Python 3.11), and those of range and the dict views.
 */
import { bigOf } from './numbers.js';
import { eq, iterate } from './protocols.js';
import { bind, type Method } from './runtime.js';
import {
  bitLength,
  type Kwargs,
  normInt,
  PyError,
  PyFloat,
  PyTuple,
  RANGES,
  str,
  typeError,
  typeName,
  type Value,
  VIEWS,
  valueError,
} from './values.js';

/** A method that takes no argument. */
const nullary =
  (name: string, f: (self: Value) => Value): Method =>
  (_s, self, a, k) => {
    bind(name, [], [], a, k);
    return f(self);
  };
const asInt = (v: number | bigint | boolean): number | bigint => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

/** Python's bytes repr, as str.encode() gives it (there is no bytes type: its repr is what prints). */
export const bytesRepr = (bytes: Uint8Array): string => {
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    if (c === quote || c === '\\') out += `\\${c}`;
    else if (c === '\t') out += '\\t';
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (b >= 0x20 && b < 0x7f) out += c;
    else out += `\\x${b.toString(16).padStart(2, '0')}`;
  }
  return `b${quote}${out}${quote}`;
};

const byteOrder = (v: Value): 'big' | 'little' => {
  if (v === 'big' || v === 'little') return v;
  throw valueError("byteorder must be either 'little' or 'big'");
};

const toBytes: Method = (_s, self, a, k) => {
  const [length, order] = bind(
    'to_bytes',
    ['length', 'byteorder'],
    [1, 'big'],
    a,
    k.size ? without(k, 'signed') : k,
  );
  const signed = k.get('signed') === true;
  if (typeof length !== 'number' || !Number.isInteger(length))
    throw typeError(`'${typeName(length as Value)}' object cannot be interpreted as an integer`);
  if (length < 0) throw valueError('length argument must be non-negative');
  if (length > 1 << 16) throw new PyError('OverflowError', 'int too big to convert');
  let n = bigOf(self as number | bigint | boolean);
  if (n < 0n && !signed) throw new PyError('OverflowError', "can't convert negative int to unsigned");
  const bits = BigInt(length * 8);
  const fits = signed ? n >= -(1n << (bits - 1n)) && n < 1n << (bits - 1n) : n < 1n << bits;
  if (length === 0 ? n !== 0n : !fits) throw new PyError('OverflowError', 'int too big to convert');
  if (n < 0n) n += 1n << bits;
  const bytes = new Uint8Array(length);
  for (let i = length - 1; i >= 0; i--) {
    bytes[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  if (byteOrder(order as Value) === 'little') bytes.reverse();
  return bytesRepr(bytes);
};

const fromBytes: Method = (_s, _self, a, k) => {
  const [source, order] = bind(
    'from_bytes',
    ['bytes', 'byteorder'],
    [undefined, 'big'],
    a,
    without(k, 'signed'),
  );
  const signed = k.get('signed') === true;
  const bytes = iterate(source as Value).map((b) => {
    if (typeof b !== 'number' || !Number.isInteger(b) || b < 0 || b > 255)
      throw valueError('bytes must be in range(0, 256)');
    return b;
  });
  if (byteOrder(order as Value) === 'little') bytes.reverse();
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  if (signed && bytes.length > 0 && (bytes[0] as number) >= 0x80) n -= 1n << BigInt(bytes.length * 8);
  return normInt(n);
};

const without = (k: Kwargs, name: string): Kwargs => {
  if (!k.has(name)) return k;
  const rest = new Map(k);
  rest.delete(name);
  return rest;
};

const bitCount = (n: bigint): number => {
  let count = 0;
  for (const c of (n < 0n ? -n : n).toString(2)) if (c === '1') count += 1;
  return count;
};

export const INT_METHODS = new Map<string, Method>([
  ['bit_length', nullary('bit_length', (self) => bitLength(bigOf(self as number)))],
  ['bit_count', nullary('bit_count', (self) => bitCount(bigOf(self as number)))],
  ['as_integer_ratio', nullary('as_integer_ratio', (self) => new PyTuple([asInt(self as number), 1]))],
  ['conjugate', nullary('conjugate', (self) => asInt(self as number))],
  ['to_bytes', toBytes],
  ['from_bytes', fromBytes],
]);

/** int's data attributes (real and imag are read in members.ts, as for float). */
export const intAttribute = (self: number | bigint | boolean, name: string): Value | undefined => {
  if (name === 'numerator') return asInt(self);
  if (name === 'denominator') return 1;
  return undefined;
};

const view = new DataView(new ArrayBuffer(8));

/** float.hex(): `0x1.<13 hex digits>p<exponent>`, as Python writes it. */
const floatHex = (x: number): string => {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  view.setFloat64(0, x);
  const sign = view.getUint32(0) >>> 31 ? '-' : '';
  const exp = (view.getUint32(0) >>> 20) & 0x7ff;
  const mantissa = (BigInt(view.getUint32(0) & 0xfffff) << 32n) | BigInt(view.getUint32(4));
  if (exp === 0 && mantissa === 0n) return `${sign}0x0.0p+0`;
  const digits = mantissa.toString(16).padStart(13, '0');
  const e = exp === 0 ? -1022 : exp - 1023;
  return `${sign}0x${exp === 0 ? 0 : 1}.${digits}p${e < 0 ? '-' : '+'}${Math.abs(e)}`;
};

/** float.as_integer_ratio(): the exact fraction, in lowest terms. */
const integerRatio = (x: number): PyTuple => {
  if (Number.isNaN(x)) throw valueError('cannot convert NaN to integer ratio');
  if (!Number.isFinite(x)) throw new PyError('OverflowError', 'cannot convert Infinity to integer ratio');
  if (x === 0) return new PyTuple([0, 1]);
  view.setFloat64(0, x);
  const exp = (view.getUint32(0) >>> 20) & 0x7ff;
  let m = (BigInt(view.getUint32(0) & 0xfffff) << 32n) | BigInt(view.getUint32(4));
  if (exp !== 0) m |= 1n << 52n;
  let e = (exp === 0 ? -1022 : exp - 1023) - 52;
  while (m % 2n === 0n && e < 0) {
    m /= 2n;
    e += 1;
  }
  if (x < 0) m = -m;
  return e >= 0
    ? new PyTuple([normInt(m << BigInt(e)), 1])
    : new PyTuple([normInt(m), normInt(1n << BigInt(-e))]);
};

const HEX_FLOAT = /^([+-])?(?:0x)?([0-9a-f]*)(?:\.([0-9a-f]*))?(?:p([+-]?[0-9]+))?$/i;

/** float.fromhex(): Python's hexadecimal float syntax, rounded to the nearest float. */
const fromHex = (text: string): number => {
  const s = text.trim();
  const special = /^([+-])?(inf|infinity|nan)$/i.exec(s);
  if (special) {
    const v = special[2]?.toLowerCase() === 'nan' ? Number.NaN : Number.POSITIVE_INFINITY;
    return special[1] === '-' ? -v : v;
  }
  const m = HEX_FLOAT.exec(s);
  const whole = m?.[2] ?? '';
  const fraction = m?.[3] ?? '';
  if (!m || whole.length + fraction.length === 0 || (!/^[+-]?0x/i.test(s) && m[0] !== s))
    throw valueError('invalid hexadecimal floating-point string');
  let mantissa = BigInt(`0x${whole || '0'}${fraction}`);
  let exp = Number(m[4] ?? 0) - 4 * fraction.length;
  if (mantissa === 0n) return m[1] === '-' ? -0 : 0;
  // Keep 53 significant bits (55 with guard bits), rounding half to even with a sticky bit.
  const bits = bitLength(mantissa);
  const minExp = -1074;
  let keep = Math.max(53, 0);
  if (exp + bits - keep < minExp) keep = Math.max(0, bits - (minExp - exp));
  if (bits > keep) {
    const drop = BigInt(bits - keep);
    const rest = mantissa & ((1n << drop) - 1n);
    const half = 1n << (drop - 1n);
    mantissa >>= drop;
    exp += Number(drop);
    if (rest > half || (rest === half && (mantissa & 1n) === 1n)) mantissa += 1n;
  }
  let value = Number(mantissa);
  // Scale in steps that stay exact: 2^exp may be out of range on its own.
  while (exp > 0) {
    const step = Math.min(exp, 1000);
    value *= 2 ** step;
    exp -= step;
  }
  while (exp < 0) {
    const step = Math.max(exp, -1000);
    value *= 2 ** step;
    exp -= step;
  }
  if (!Number.isFinite(value))
    throw new PyError('OverflowError', 'hexadecimal value too large to represent as a float');
  return m[1] === '-' ? -value : value;
};

export const FLOAT_METHODS = new Map<string, Method>([
  ['is_integer', nullary('is_integer', (self) => Number.isInteger((self as PyFloat).v))],
  ['hex', nullary('hex', (self) => floatHex((self as PyFloat).v))],
  ['as_integer_ratio', nullary('as_integer_ratio', (self) => integerRatio((self as PyFloat).v))],
  ['conjugate', nullary('conjugate', (self) => self)],
  [
    'fromhex',
    (_s, _self, a, k) => {
      const [text] = bind('fromhex', ['string'], [undefined], a, k);
      if (typeof text !== 'string') throw typeError(`must be str, not ${typeName(text as Value)}`);
      return new PyFloat(fromHex(text));
    },
  ],
]);

/** range's start, stop and step. */
export const rangeAttribute = (self: Value[], name: string): Value | undefined => {
  const info = RANGES.get(self);
  if (!info || (name !== 'start' && name !== 'stop' && name !== 'step')) return undefined;
  return info[name];
};

/** dict_keys and dict_items: isdisjoint (their `mapping` is not kept: see README). */
export const viewMethod = (self: Value[], name: string): Method | undefined => {
  const kind = VIEWS.get(self);
  if (name !== 'isdisjoint' || kind === 'dict_values') return undefined;
  return (_s, me, a, k) => {
    const [other] = bind('isdisjoint', ['other'], [undefined], a, k);
    const items = iterate(me);
    return !iterate(other as Value).some((x) => items.some((y) => eq(x, y)));
  };
};

/** list.index / tuple.index with Python's optional start and stop (range.index takes neither). */
export const seqIndexOf: Method = (_s, self, a, k) => {
  if (k.size > 0) throw typeError('index() takes no keyword arguments');
  const isRange = Array.isArray(self) && RANGES.has(self);
  if (a.length === 0 || a.length > (isRange ? 1 : 3)) {
    throw typeError(
      isRange
        ? `index() takes exactly one argument (${a.length} given)`
        : `index expected at least 1 argument, got ${a.length}`,
    );
  }
  const items = iterate(self);
  const bound = (v: Value | undefined, fallback: number): number => {
    if (v === undefined) return fallback;
    if (typeof v === 'boolean') v = v ? 1 : 0;
    if (typeof v === 'bigint') return v < 0n ? 0 : items.length;
    if (typeof v !== 'number') throw typeError('slice indices must be integers or have an __index__ method');
    const i = v < 0 ? v + items.length : v;
    return Math.min(Math.max(i, 0), items.length);
  };
  const x = a[0] as Value;
  const start = bound(a[1], 0);
  const stop = bound(a[2], items.length);
  for (let i = start; i < stop; i++) if (eq(items[i] as Value, x)) return i;
  if (self instanceof PyTuple) throw valueError('tuple.index(x): x not in tuple');
  throw valueError(`${str(x)} is not in ${typeName(self)}`);
};
