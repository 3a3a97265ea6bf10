/** Python's binary and comparison operators, as a template's expressions apply them. */
import { percentFormat } from './format.js';
import { floatFloorDiv, floatMod, intArith } from './numbers.js';
import { compare, contains, eq, iterate } from './protocols.js';
import type { RenderState } from './runtime.js';
import {
  float,
  isInt,
  isNumber,
  isString,
  Markup,
  markupEscape,
  num,
  PyError,
  PyTuple,
  pushAll,
  str,
  typeError,
  typeName,
  Undefined,
  type Value,
} from './values.js';
export const BIN_OPS: Record<string, (s: RenderState, a: Value, b: Value) => Value> = {
  '+': (s, a, b) => add(s, a, b),
  '-': (s, a, b) => arith(s, a, b, '-', (x, y) => x - y),
  '*': (s, a, b) => mul(s, a, b),
  '/': (_s, a, b) => {
    const y = numOperand(b, '/', a);
    const x = numOperand(a, '/', b);
    if (y === 0) throw new PyError('ZeroDivisionError', 'division by zero');
    return float(x / y);
  },
  '//': (s, a, b) => {
    const y = numOperand(b, '//', a);
    const x = numOperand(a, '//', b);
    if (y === 0) {
      throw new PyError(
        'ZeroDivisionError',
        isInt(a) && isInt(b) ? 'integer division or modulo by zero' : 'float floor division by zero',
      );
    }
    return isInt(a) && isInt(b) ? intArith('//', a, b, s) : float(floatFloorDiv(x, y));
  },
  '%': (s, a, b) => {
    if (isString(a)) return percentFormat(s, a, b);
    const y = numOperand(b, '%', a);
    const x = numOperand(a, '%', b);
    if (y === 0) {
      throw new PyError(
        'ZeroDivisionError',
        isInt(a) && isInt(b) ? 'integer division or modulo by zero' : 'float modulo',
      );
    }
    return isInt(a) && isInt(b) ? intArith('%', a, b, s) : float(floatMod(x, y));
  },
  '**': (s, a, b) => {
    const y = numOperand(b, '**', a);
    const x = numOperand(a, '**', b);
    if (isInt(a) && isInt(b) && y >= 0) return intArith('**', a, b, s);
    if (x === 0 && y < 0) throw new PyError('ZeroDivisionError', '0.0 cannot be raised to a negative power');
    return float(x ** y);
  },
};

const numOperand = (v: Value, op: string, other: Value): number => {
  if (v instanceof Undefined) return v.fail();
  if (!isNumber(v) || !isNumber(other)) {
    if (other instanceof Undefined) return other.fail();
    throw typeError(`unsupported operand type(s) for ${op}: '${typeName(v)}' and '${typeName(other)}'`);
  }
  return num(v);
};

const arith = (
  s: RenderState,
  a: Value,
  b: Value,
  op: '+' | '-' | '*',
  f: (x: number, y: number) => number,
): Value => {
  const x = numOperand(a, op, b);
  const y = numOperand(b, op, a);
  return isInt(a) && isInt(b) ? intArith(op, a, b, s) : float(f(x, y));
};

const add = (s: RenderState, a: Value, b: Value): Value => {
  if (isNumber(a) && isNumber(b)) return arith(s, a, b, '+', (x, y) => x + y);
  if (isString(a) && isString(b)) {
    s.guardString(str(a).length + str(b).length);
    if (a instanceof Markup || b instanceof Markup) return new Markup(markupEscape(a).s + markupEscape(b).s);
    return (a as string) + (b as string);
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    s.guardList(a.length + b.length);
    return [...a, ...b];
  }
  if (a instanceof PyTuple && b instanceof PyTuple) return new PyTuple([...a.items, ...b.items]);
  if (a instanceof Undefined) return a.fail();
  if (b instanceof Undefined) return b.fail();
  if (isString(a)) throw typeError(`can only concatenate str (not "${typeName(b)}") to str`);
  if (Array.isArray(a)) throw typeError(`can only concatenate list (not "${typeName(b)}") to list`);
  throw typeError(`unsupported operand type(s) for +: '${typeName(a)}' and '${typeName(b)}'`);
};

/** `*`: numbers, or a str/list/tuple repeated. */
const mul = (s: RenderState, a: Value, b: Value): Value => {
  if (isNumber(a) && isNumber(b)) return arith(s, a, b, '*', (x, y) => x * y);
  const [seq, times] = isInt(b) ? [a, b] : isInt(a) ? [b, a] : [a, b];
  if (isInt(times)) {
    const n = Math.max(0, num(times));
    if (isString(seq)) {
      const text = str(seq);
      s.guardString(text.length * n);
      const out = text.repeat(n);
      return seq instanceof Markup ? new Markup(out) : out;
    }
    if (Array.isArray(seq) || seq instanceof PyTuple) {
      const items = iterate(seq);
      s.guardList(items.length * n);
      const out: Value[] = [];
      for (let i = 0; i < n; i++) pushAll(out, items);
      return Array.isArray(seq) ? out : new PyTuple(out);
    }
  }
  if (a instanceof Undefined) return a.fail();
  if (b instanceof Undefined) return b.fail();
  throw typeError(`unsupported operand type(s) for *: '${typeName(a)}' and '${typeName(b)}'`);
};

export const COMPARE: Record<string, (a: Value, b: Value) => boolean> = {
  '==': (a, b) => eq(a, b),
  '!=': (a, b) => !eq(a, b),
  '<': (a, b) => compare(a, b, '<') < 0,
  '<=': (a, b) => compare(a, b, '<=') <= 0,
  '>': (a, b) => compare(a, b, '>') > 0,
  '>=': (a, b) => compare(a, b, '>=') >= 0,
  in: (a, b) => contains(b, a),
  notin: (a, b) => !contains(b, a),
};
