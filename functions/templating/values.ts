/**
 * The values a template sees: Python's, as Jinja2 shows them, built only from JSON and from the
 * template's own literals. A template never holds a JavaScript object of the host: strings,
 * numbers, booleans and null are primitives; everything else is one of the classes below, whose
 * members are looked up in explicit tables (attributes.ts), never through JavaScript properties.
 *
 * - int: a JavaScript number that is an integer, or a bigint beyond the safe range (|n| > 2^53 - 1),
 *   so that int arithmetic is exact as in Python; float: PyFloat (so 2.0 prints as `2.0`).
 * - str: a string; Markup (safe HTML) is its own class.
 * - list: a JavaScript array created by the engine; tuple: PyTuple; dict: PyDict (a Map).
 * - None: null; an undefined name or member: Undefined, which fails when used (StrictUndefined).
 */

export class PyFloat {
  constructor(readonly v: number) {}
}

export class Markup {
  constructor(readonly s: string) {}
}

export class PyTuple {
  /** Named fields (groupby's `grouper` and `list`), readable as attributes. */
  fields?: readonly string[];
  constructor(readonly items: Value[]) {}
}

/** A dict: insertion-ordered, keys compared as Python compares them (1 == 1.0 == True). */
export class PyDict {
  private readonly map = new Map<unknown, [Value, Value]>();

  static from(entries: Iterable<readonly [Value, Value]>): PyDict {
    const d = new PyDict();
    for (const [k, v] of entries) d.set(k, v);
    return d;
  }

  private static norm(key: Value): unknown {
    if (key === null || typeof key === 'string' || typeof key === 'number') return key;
    if (typeof key === 'boolean') return key ? 1 : 0;
    if (typeof key === 'bigint') return BigInt(Number(key)) === key ? Number(key) : `i:${key}`;
    if (key instanceof PyFloat) return Number.isInteger(key.v) ? key.v : `f:${key.v}`;
    if (key instanceof Markup) return key.s;
    if (key instanceof PyTuple) return `t:${key.items.map((i) => String(PyDict.norm(i))).join('\u0000')}`;
    throw new PyError('TypeError', `unhashable type: '${typeName(key)}'`);
  }

  get size(): number {
    return this.map.size;
  }
  has(key: Value): boolean {
    return this.map.has(PyDict.norm(key));
  }
  get(key: Value): Value | undefined {
    return this.map.get(PyDict.norm(key))?.[1];
  }
  set(key: Value, value: Value): void {
    const k = PyDict.norm(key);
    const existing = this.map.get(k);
    if (existing) existing[1] = value;
    else this.map.set(k, [key, value]);
  }
  delete(key: Value): boolean {
    return this.map.delete(PyDict.norm(key));
  }
  clear(): void {
    this.map.clear();
  }
  keys(): Value[] {
    return [...this.map.values()].map((e) => e[0]);
  }
  values(): Value[] {
    return [...this.map.values()].map((e) => e[1]);
  }
  entries(): [Value, Value][] {
    return [...this.map.values()].map((e) => [e[0], e[1]]);
  }
}

/** A missing name or member. Any use other than `is defined`/`default` raises (StrictUndefined). */
export class Undefined {
  constructor(
    readonly message: string,
    /** Jinja2's plain Undefined (an inline `if` without `else`): prints empty, is false. */
    readonly lenient = false,
  ) {}
  fail(): never {
    throw new PyError('UndefinedError', this.message, { undefinedName: undefinedNameOf(this.message) });
  }
}
const undefinedNameOf = (message: string): string | undefined =>
  /^'([^']*)' is undefined$/.exec(message)?.[1];

export const undefinedName = (name: string) => new Undefined(`'${name}' is undefined`);
export const undefinedMember = (obj: Value, name: Value) =>
  new Undefined(
    typeof name === 'string'
      ? `'${typeName(obj)} object' has no attribute '${name}'`
      : `'${typeName(obj)} object' has no element ${repr(name)}`,
  );

/** Keyword arguments as a call passes them. */
export type Kwargs = Map<string, Value>;

/** Something a template can call: a macro, a global, a bound method. Never a host function. */
export class PyCallable {
  constructor(
    readonly name: string,
    readonly call: (args: Value[], kwargs: Kwargs) => Value,
    /** Macros are callable objects with a few attributes of their own. */
    readonly attrs?: ReadonlyMap<string, Value>,
  ) {}
}

/** An object with named attributes only (loop, cycler, joiner, namespace, self). */
export class PyObject {
  /** Attributes computed on access (the loop object's). */
  getter?: (name: string) => Value | undefined;
  constructor(
    readonly typeName: string,
    readonly attrs: Map<string, Value>,
    /** A namespace's attributes can be assigned with `{% set ns.x = … %}`. */
    readonly assignable = false,
    readonly callable?: PyCallable,
  ) {}
}

export type Value =
  | null
  | boolean
  | number
  | bigint
  | string
  | PyFloat
  | Markup
  | Value[]
  | PyTuple
  | PyDict
  | Undefined
  | PyCallable
  | PyObject;

/** A Python exception raised while rendering; `type` is the Python class name. */
export class PyError extends Error {
  readonly type: string;
  readonly undefinedName?: string;
  constructor(type: string, message: string, extra: { undefinedName?: string } = {}) {
    super(message);
    this.type = type;
    if (extra.undefinedName !== undefined) this.undefinedName = extra.undefinedName;
  }
}

/** A limit of the service (time, size, depth) was passed. */
export class LimitError extends Error {
  constructor(
    message: string,
    readonly output = false,
  ) {
    super(message);
  }
}

export const typeError = (message: string) => new PyError('TypeError', message);
export const valueError = (message: string) => new PyError('ValueError', message);

// ---------------------------------------------------------------------------------------------
// Conversion from JSON

/** JSON variables as template values. Own keys only; `__proto__` is just a key of a dict. */
export const fromJson = (value: unknown): Value => {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isInteger(value) ? value : new PyFloat(value);
    case 'bigint':
      return normInt(value);
    case 'object': {
      if (Array.isArray(value)) return value.map(fromJson);
      const d = new PyDict();
      for (const key of Object.keys(value)) d.set(key, fromJson((value as Record<string, unknown>)[key]));
      return d;
    }
    default:
      return null;
  }
};

// ---------------------------------------------------------------------------------------------
// Types and predicates

/** Array.push of many items without spreading them into arguments (which has a size limit). */
export const pushAll = (target: Value[], items: readonly Value[]): void => {
  const n = items.length; // `items` may be `target` itself (`l.extend(l)`)
  for (let i = 0; i < n; i++) target.push(items[i] as Value);
};

export const isUndefined = (v: Value): v is Undefined => v instanceof Undefined;
export const isInt = (v: Value): v is number | bigint | boolean =>
  typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint';
export const isNumber = (v: Value): v is number | bigint | boolean | PyFloat =>
  typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' || v instanceof PyFloat;
export const isString = (v: Value): v is string | Markup => typeof v === 'string' || v instanceof Markup;
export const isList = (v: Value): v is Value[] => Array.isArray(v);

export const typeName = (v: Value): string => {
  if (v === null) return 'NoneType';
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'number':
    case 'bigint':
      return 'int';
    case 'string':
      return 'str';
  }
  if (v instanceof PyFloat) return 'float';
  if (v instanceof Markup) return 'Markup';
  if (Array.isArray(v)) return VIEWS.get(v) ?? (RANGES.has(v) ? 'range' : 'list');
  if (v instanceof PyTuple) return 'tuple';
  if (v instanceof PyDict) return 'dict';
  if (v instanceof Undefined) return 'StrictUndefined';
  if (v instanceof PyCallable) return v.attrs ? 'Macro' : 'function';
  return v.typeName;
};

/** The number in a numeric value (bool counts as int). */
export const num = (v: Value): number => {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof PyFloat) return v.v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Undefined) v.fail();
  throw typeError(`expected a number, got '${typeName(v)}'`);
};

export const float = (n: number): PyFloat => new PyFloat(n);

/** A range() as Python shows it: the list of its items remembers its start, stop and step. */
export interface RangeInfo {
  readonly start: number;
  readonly stop: number;
  readonly step: number;
}
/** Lists made by range(), which print and slice as Python's range objects do. */
export const RANGES = new WeakMap<Value[], RangeInfo>();

/** range(start, stop, step)'s items (the caller bounds their number). */
export const makeRange = (start: number, stop: number, step: number): Value[] => {
  const n = Math.max(0, Math.ceil((stop - start) / step));
  const list: Value[] = new Array(n);
  for (let i = 0; i < n; i++) list[i] = start + i * step;
  RANGES.set(list, { start, stop, step });
  return list;
};

/** Lists returned by dict.keys(), .values() and .items(): printed as views, not subscriptable. */
export type ViewKind = 'dict_keys' | 'dict_values' | 'dict_items';
export const VIEWS = new WeakMap<Value[], ViewKind>();
export const dictView = (kind: ViewKind, items: Value[]): Value[] => {
  VIEWS.set(items, kind);
  return items;
};

/** An int result of an int-valued double (float → int conversions): the double's exact value. */
export const intResult = (n: number): Value => (Number.isInteger(n) ? n : new PyFloat(n));

// ---------------------------------------------------------------------------------------------
// Exact int arithmetic

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/**
 * The largest int a template may build, in bits: about 30,000 digits (Python has no limit; a
 * service must, and Python 3.11 prints no int of more than 4,300 digits anyway).
 */
export const MAX_INT_BITS = 100_000;

export const bigOf = (v: number | bigint | boolean): bigint =>
  typeof v === 'bigint' ? v : BigInt(typeof v === 'boolean' ? (v ? 1 : 0) : v);

/** An exact int: a number while it is a safe integer, a bigint beyond. */
export const normInt = (b: bigint): number | bigint => (b <= MAX_SAFE && b >= -MAX_SAFE ? Number(b) : b);

/** The number of bits of |b|. */
const bitLength = (b: bigint): number => {
  const hex = (b < 0n ? -b : b).toString(16);
  return (hex.length - 1) * 4 + (32 - Math.clz32(Number.parseInt(hex[0] as string, 16)));
};

const guardBits = (bits: number): void => {
  if (bits > MAX_INT_BITS)
    throw new LimitError(`Template builds an integer of over ${MAX_INT_BITS} bits; that is the limit`);
};

export type IntOp = '+' | '-' | '*' | '//' | '%' | '**';

/**
 * `a op b` on ints, exact as Python's (floor division and modulo round toward -∞); b ≠ 0 for //
 * and %, b ≥ 0 for **. Work on bigints is counted on `state`'s step counter, by size.
 */
export const intArith = (
  op: IntOp,
  a: number | bigint | boolean,
  b: number | bigint | boolean,
  state?: { tick(n?: number): void },
): number | bigint => {
  if (typeof a !== 'bigint' && typeof b !== 'bigint' && op !== '**') {
    const x = +a;
    const y = +b;
    if (Number.isSafeInteger(x) && Number.isSafeInteger(y)) {
      let r: number;
      if (op === '+') r = x + y;
      else if (op === '-') r = x - y;
      else if (op === '*') r = x * y;
      else if (op === '//') r = Math.floor(x / y);
      else r = x - Math.floor(x / y) * y;
      if (Number.isSafeInteger(r)) return r === 0 ? 0 : r;
    }
  }
  const x = bigOf(a);
  const y = bigOf(b);
  state?.tick(1 + Math.ceil((bitLength(x) + (op === '**' ? 0 : bitLength(y))) / 4096));
  let r: bigint;
  switch (op) {
    case '+':
      r = x + y;
      break;
    case '-':
      r = x - y;
      break;
    case '*':
      guardBits(bitLength(x) + bitLength(y));
      r = x * y;
      break;
    case '//':
      r = x / y;
      if (x % y !== 0n && x < 0n !== y < 0n) r -= 1n;
      break;
    case '%':
      r = x % y;
      if (r !== 0n && r < 0n !== y < 0n) r += y;
      break;
    case '**':
      if (x === 0n || x === 1n || y === 0n) r = y === 0n ? 1n : x;
      else if (x === -1n) r = y % 2n === 0n ? 1n : -1n;
      else {
        const bits = bitLength(x);
        guardBits(Number(y) * (bits <= 53 ? Math.log2(Math.abs(Number(x))) : bits));
        r = x ** y;
      }
      break;
  }
  return normInt(r);
};

/** -n for an int. */
export const intNeg = (v: number | bigint | boolean): number | bigint =>
  typeof v === 'bigint' ? normInt(-v) : 0 - +v;

/** Python's float `%`: C's fmod (JavaScript's `%`), with the sign of the divisor. */
export const floatMod = (x: number, y: number): number => {
  let m = x % y;
  if (m !== 0) {
    if (y < 0 !== m < 0) m += y;
  } else {
    m = y < 0 ? -0 : 0;
  }
  return m;
};

/** Python's float `//` (float_floor_div in CPython). */
export const floatFloorDiv = (x: number, y: number): number => {
  let mod = x % y;
  let div = (x - mod) / y;
  if (mod && y < 0 !== mod < 0) {
    mod += y;
    div -= 1;
  }
  if (div) {
    const floor = Math.floor(div);
    return div - floor > 0.5 ? floor + 1 : floor;
  }
  const q = x / y;
  return q < 0 || Object.is(q, -0) ? -0 : 0;
};

// ---------------------------------------------------------------------------------------------
// Strings

/** Python's str(): what `{{ value }}` prints before escaping. */
export const str = (v: Value): string => {
  if (typeof v === 'string') return v;
  if (v === null) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return intRepr(v);
  if (typeof v === 'bigint') return intRepr(v);
  if (v instanceof PyFloat) return floatRepr(v.v);
  if (v instanceof Markup) return v.s;
  if (v instanceof Undefined) return v.lenient ? '' : v.fail();
  return repr(v);
};

/** Python 3.11 refuses to print an int of more than 4,300 digits (sys.get_int_max_str_digits()). */
const MAX_STR_DIGITS = 4300;

export const intRepr = (n: number | bigint): string => {
  if (typeof n === 'number' && Number.isSafeInteger(n)) return String(n);
  const b = BigInt(n);
  const text = bitLength(b) > MAX_STR_DIGITS * 3.33 + 16 ? '' : b.toString();
  if (!text || text.replace('-', '').length > MAX_STR_DIGITS) {
    throw valueError(
      `Exceeds the limit (${MAX_STR_DIGITS} digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit`,
    );
  }
  return text;
};

/** Python's repr() of a float: shortest round-trip digits, exponent outside 1e-4 ≤ |x| < 1e16. */
export const floatRepr = (x: number): string => {
  if (Number.isNaN(x)) return 'nan';
  if (x === Number.POSITIVE_INFINITY) return 'inf';
  if (x === Number.NEGATIVE_INFINITY) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa = '', expText = '0'] = x.toExponential().split('e');
  const exp = Number(expText);
  const digits = mantissa.replace('-', '').replace('.', '');
  const sign = x < 0 ? '-' : '';
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = String(Math.abs(exp)).padStart(2, '0');
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${e}`;
  }
  if (exp >= 0) {
    const whole = digits.length > exp + 1 ? digits.slice(0, exp + 1) : digits.padEnd(exp + 1, '0');
    const frac = digits.length > exp + 1 ? digits.slice(exp + 1) : '0';
    return `${sign}${whole}.${frac}`;
  }
  return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
};

/** What Python's str.isprintable() refuses: other (C*) and separator (Z*) characters but the space. */
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;
const REPR_SPECIAL = /[\\'"]|(?! )[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** Python's repr() of a str: non-printable characters as \xhh, \uhhhh or \Uhhhhhhhh. */
export const strRepr = (s: string): string => {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  if (!REPR_SPECIAL.test(s)) return quote + s + quote;
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0) as number;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === ' ' || !NON_PRINTABLE.test(ch)) out += ch;
    else if (code < 0x100) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code < 0x10000) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += `\\U${code.toString(16).padStart(8, '0')}`;
  }
  return out + quote;
};

/** Python's repr(). */
export const repr = (v: Value): string => {
  if (typeof v === 'string') return strRepr(v);
  if (Array.isArray(v)) {
    const range = RANGES.get(v);
    if (range) {
      const { start, stop, step } = range;
      return step === 1 ? `range(${start}, ${stop})` : `range(${start}, ${stop}, ${step})`;
    }
    const view = VIEWS.get(v);
    if (view) return `${view}([${v.map(repr).join(', ')}])`;
  }
  if (v instanceof Markup) return `Markup(${strRepr(v.s)})`;
  if (Array.isArray(v)) return `[${v.map(repr).join(', ')}]`;
  if (v instanceof PyTuple) {
    return v.items.length === 1 ? `(${repr(v.items[0] as Value)},)` : `(${v.items.map(repr).join(', ')})`;
  }
  if (v instanceof PyDict)
    return `{${v
      .entries()
      .map(([k, x]) => `${repr(k)}: ${repr(x)}`)
      .join(', ')}}`;
  if (v instanceof Undefined) return v.fail();
  if (v instanceof PyCallable) return `<${v.attrs ? 'Macro' : 'function'} '${v.name}'>`;
  if (v instanceof PyObject) {
    if (v.typeName === 'Namespace') return `<Namespace ${repr(PyDict.from([...v.attrs.entries()]))}>`;
    return `<${v.typeName} object>`;
  }
  return str(v);
};

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&#34;',
  "'": '&#39;',
};
const ESCAPE_RE = /[&<>"']/g;
const NEEDS_ESCAPE = /[&<>"']/;

/** markupsafe.escape of a plain string. */
export const escapeString = (s: string): string =>
  NEEDS_ESCAPE.test(s) ? s.replace(ESCAPE_RE, (c) => ESCAPES[c] as string) : s;

/** markupsafe.escape(): Markup stays, anything else is str()'d and escaped. */
export const markupEscape = (v: Value): Markup =>
  v instanceof Markup ? v : new Markup(escapeString(str(v)));

/** soft_str: Markup stays Markup, anything else becomes str. */
export const softStr = (v: Value): string | Markup => (v instanceof Markup ? v : str(v));

/** The string of a str or Markup, with a function that wraps a result like the input. */
export const strParts = (v: Value): [string, (s: string) => string | Markup] =>
  v instanceof Markup ? [v.s, (s) => new Markup(s)] : [str(v), (s) => s];

// ---------------------------------------------------------------------------------------------
// Truth, equality, order

export const truthy = (v: Value): boolean => {
  if (v === null) return false;
  switch (typeof v) {
    case 'boolean':
      return v;
    case 'number':
      return v !== 0;
    case 'bigint':
      return true;
    case 'string':
      return v.length > 0;
  }
  if (v instanceof PyFloat) return v.v !== 0;
  if (v instanceof Markup) return v.s.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof PyTuple) return v.items.length > 0;
  if (v instanceof PyDict) return v.size > 0;
  if (v instanceof Undefined) return v.lenient ? false : v.fail();
  return true;
};

export const eq = (a: Value, b: Value): boolean => {
  if (a instanceof Undefined) return a.fail();
  if (b instanceof Undefined) return b.fail();
  if (isNumber(a) && isNumber(b)) return numCompare(a, b) === 0;
  if (isString(a) && isString(b)) return str(a) === str(b);
  if (a === null || b === null) return a === b;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => eq(x, b[i] as Value));
  if (a instanceof PyTuple && b instanceof PyTuple) {
    return a.items.length === b.items.length && a.items.every((x, i) => eq(x, b.items[i] as Value));
  }
  if (a instanceof PyDict && b instanceof PyDict) {
    if (a.size !== b.size) return false;
    return a.entries().every(([k, v]) => b.has(k) && eq(v, b.get(k) as Value));
  }
  return a === b;
};

/** Numbers compared exactly, as Python compares int and float: -1, 0, 1, or NaN (unordered). */
const numCompare = (
  a: number | bigint | boolean | PyFloat,
  b: number | bigint | boolean | PyFloat,
): number => {
  if (typeof a === 'bigint' || typeof b === 'bigint') {
    const x = num(a);
    const y = num(b);
    // A bigint against an integral double: compare exactly; anything else is told apart by its double.
    if (Number.isInteger(x) && Number.isInteger(y)) {
      const bx = typeof a === 'bigint' ? a : BigInt(x);
      const by = typeof b === 'bigint' ? b : BigInt(y);
      return bx < by ? -1 : bx > by ? 1 : 0;
    }
    return x < y ? -1 : x > y ? 1 : x === y ? 0 : Number.NaN;
  }
  const x = num(a);
  const y = num(b);
  return x < y ? -1 : x > y ? 1 : x === y ? 0 : Number.NaN;
};

/** Python's ordering: <0, 0, >0; TypeError between types that do not compare. */
export const compare = (a: Value, b: Value, op = '<'): number => {
  if (a instanceof Undefined) return a.fail();
  if (b instanceof Undefined) return b.fail();
  if (isNumber(a) && isNumber(b)) {
    const c = numCompare(a, b);
    return Number.isNaN(c) ? 0 : c;
  }
  if (isString(a) && isString(b)) {
    const x = str(a);
    const y = str(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  const seqA = Array.isArray(a) ? a : a instanceof PyTuple ? a.items : undefined;
  const seqB = Array.isArray(b) ? b : b instanceof PyTuple ? b.items : undefined;
  if (seqA && seqB && Array.isArray(a) === Array.isArray(b)) {
    for (let i = 0; i < Math.min(seqA.length, seqB.length); i++) {
      if (!eq(seqA[i] as Value, seqB[i] as Value)) return compare(seqA[i] as Value, seqB[i] as Value, op);
    }
    return seqA.length - seqB.length;
  }
  throw typeError(`'${op}' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
};

// ---------------------------------------------------------------------------------------------
// Iteration and length

/** Code points of a string (Python indexes strings by code point). */
export const chars = (s: string): string[] => (/[\ud800-\udfff]/.test(s) ? Array.from(s) : s.split(''));

export const iterate = (v: Value): Value[] => {
  if (Array.isArray(v)) return v;
  if (v instanceof PyTuple) return v.items;
  if (v instanceof PyDict) return v.keys();
  if (typeof v === 'string') return chars(v);
  if (v instanceof Markup) return chars(v.s);
  if (v instanceof Undefined) return v.lenient ? [] : v.fail();
  throw typeError(`'${typeName(v)}' object is not iterable`);
};

export const isIterable = (v: Value): boolean =>
  Array.isArray(v) || v instanceof PyTuple || v instanceof PyDict || isString(v);

export const length = (v: Value): number => {
  if (typeof v === 'string') return chars(v).length;
  if (v instanceof Markup) return chars(v.s).length;
  if (Array.isArray(v)) return v.length;
  if (v instanceof PyTuple) return v.items.length;
  if (v instanceof PyDict) return v.size;
  if (v instanceof Undefined) return v.fail();
  throw typeError(`object of type '${typeName(v)}' has no len()`);
};

export const contains = (container: Value, item: Value): boolean => {
  if (container instanceof Undefined) return container.fail();
  if (isString(container)) {
    if (!isString(item)) {
      if (item instanceof Undefined) return item.fail();
      throw typeError(`'in <string>' requires string as left operand, not ${typeName(item)}`);
    }
    return str(container).includes(str(item));
  }
  if (container instanceof PyDict) return container.has(item);
  return iterate(container).some((x) => eq(x, item));
};
