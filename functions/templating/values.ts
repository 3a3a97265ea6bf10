/**
 * The values a template sees: Python's, as Jinja2 shows them, built only from JSON and from the
 * template's own literals. A template never holds a JavaScript object of the host: strings,
 * numbers, booleans and null are primitives; everything else is one of the classes below, whose
 * members are looked up in explicit tables (members.ts), never through JavaScript properties.
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
  /** Normalized key → value (Python's hash equality: 1, 1.0 and True are one key). */
  private readonly map = new Map<unknown, Value>();
  /**
   * The key as first set, where it is not its normalized form (True, 1.0, Markup, a tuple...):
   * string and int keys, nearly all of them, cost no second entry.
   */
  private written: Map<unknown, Value> | undefined;

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
    return this.map.get(PyDict.norm(key));
  }
  set(key: Value, value: Value): void {
    const k = PyDict.norm(key);
    // An existing key keeps the form it was first set with, as in Python.
    if (k !== key && !this.map.has(k)) {
      this.written ??= new Map();
      this.written.set(k, key);
    }
    this.map.set(k, value);
  }
  /**
   * A string key the dict does not hold yet (a JSON object's, whose keys are unique): set without
   * the look-ups `set` makes, which reading 1 MiB of template data pays for every key.
   */
  addNew(key: string, value: Value): void {
    this.map.set(key, value);
  }
  delete(key: Value): boolean {
    const k = PyDict.norm(key);
    this.written?.delete(k);
    return this.map.delete(k);
  }
  clear(): void {
    this.map.clear();
    this.written = undefined;
  }
  private keyOf(k: unknown): Value {
    const written = this.written;
    return written?.has(k) ? (written.get(k) as Value) : (k as Value);
  }
  keys(): Value[] {
    return Array.from(this.map.keys(), (k) => this.keyOf(k));
  }
  values(): Value[] {
    return [...this.map.values()];
  }
  entries(): [Value, Value][] {
    return Array.from(this.map, ([k, v]) => [this.keyOf(k), v]);
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
/** The dict of each view, for its `mapping`. */
export const VIEW_DICTS = new WeakMap<Value[], PyDict>();
export const dictView = (kind: ViewKind, items: Value[], dict?: PyDict): Value[] => {
  VIEWS.set(items, kind);
  if (dict) VIEW_DICTS.set(items, dict);
  return items;
};

/** An int result of an int-valued double (float → int conversions): the double's exact value. */
export const intResult = (n: number): Value => (Number.isInteger(n) ? n : new PyFloat(n));

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** An exact int: a number while it is a safe integer, a bigint beyond. */
export const normInt = (b: bigint): number | bigint => (b <= MAX_SAFE && b >= -MAX_SAFE ? Number(b) : b);

/** The number of bits of |b|. */
export const bitLength = (b: bigint): number => {
  const hex = (b < 0n ? -b : b).toString(16);
  return (hex.length - 1) * 4 + (32 - Math.clz32(Number.parseInt(hex[0] as string, 16)));
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
