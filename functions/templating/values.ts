/**
 * The values a template sees: Python's, as Jinja2 shows them, built only from JSON and from the
 * template's own literals. A template never holds a JavaScript object of the host: strings,
 * numbers, booleans and null are primitives; everything else is one of the classes below, whose
 * members are looked up in explicit tables (attributes.ts), never through JavaScript properties.
 *
 * - int: a JavaScript number that is an integer; float: PyFloat (so 2.0 prints as `2.0`).
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
export const isInt = (v: Value): v is number | boolean => typeof v === 'number' || typeof v === 'boolean';
export const isNumber = (v: Value): v is number | boolean | PyFloat =>
  typeof v === 'number' || typeof v === 'boolean' || v instanceof PyFloat;
export const isString = (v: Value): v is string | Markup => typeof v === 'string' || v instanceof Markup;
export const isList = (v: Value): v is Value[] => Array.isArray(v);

export const typeName = (v: Value): string => {
  if (v === null) return 'NoneType';
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'number':
      return 'int';
    case 'string':
      return 'str';
  }
  if (v instanceof PyFloat) return 'float';
  if (v instanceof Markup) return 'Markup';
  if (Array.isArray(v)) return 'list';
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
  if (v instanceof Undefined) v.fail();
  throw typeError(`expected a number, got '${typeName(v)}'`);
};

export const float = (n: number): PyFloat => new PyFloat(n);

/** Lists made by range(), which print as Python's range objects do. */
export const RANGES = new WeakMap<Value[], string>();

/** An int result, or a float when it leaves the range where a double is exact. */
export const intResult = (n: number): Value => (Number.isInteger(n) ? n : new PyFloat(n));

// ---------------------------------------------------------------------------------------------
// Strings

/** Python's str(): what `{{ value }}` prints before escaping. */
export const str = (v: Value): string => {
  if (typeof v === 'string') return v;
  if (v === null) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return intRepr(v);
  if (v instanceof PyFloat) return floatRepr(v.v);
  if (v instanceof Markup) return v.s;
  if (v instanceof Undefined) return v.lenient ? '' : v.fail();
  return repr(v);
};

const intRepr = (n: number): string => (Number.isSafeInteger(n) ? String(n) : BigInt(n).toString());

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

/** Python's repr() of a str. */
export const strRepr = (s: string): string => {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0) as number;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code >= 0x80 && code < 0xa0) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code >= 0xd800 && code < 0xe000) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return out + quote;
};

/** Python's repr(). */
export const repr = (v: Value): string => {
  if (typeof v === 'string') return strRepr(v);
  if (Array.isArray(v)) {
    const range = RANGES.get(v);
    if (range) return range;
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
  if (isNumber(a) && isNumber(b)) return num(a) === num(b);
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

/** Python's ordering: <0, 0, >0; TypeError between types that do not compare. */
export const compare = (a: Value, b: Value, op = '<'): number => {
  if (a instanceof Undefined) return a.fail();
  if (b instanceof Undefined) return b.fail();
  if (isNumber(a) && isNumber(b)) {
    const x = num(a);
    const y = num(b);
    return x < y ? -1 : x > y ? 1 : 0;
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
