/** Python's object protocols over template values: truth, equality, order, iteration, length, membership. */
import {
  isNumber,
  isString,
  Markup,
  num,
  PyDict,
  PyFloat,
  PyTuple,
  str,
  typeError,
  typeName,
  Undefined,
  type Value,
} from './values.js';
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
