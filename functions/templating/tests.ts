/** Jinja2 3.1's builtin tests (jinja2/tests.py). */
import { pyIsLower, pyIsUpper } from './casing.js';
import { floatMod, intArith } from './numbers.js';
import { compare, contains, eq, isIterable } from './protocols.js';
import { bind, type TestFn } from './runtime.js';
import {
  isInt,
  isNumber,
  isString,
  type Kwargs,
  Markup,
  num,
  PyCallable,
  PyDict,
  PyError,
  PyFloat,
  PyObject,
  str,
  Undefined,
  type Value,
  VIEWS,
} from './values.js';
// --- tests ------------------------------------------------------------------------------------

export const T = new Map<string, TestFn>();
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
// A sequence has a length and items by index: a dict view has the one, not the other.
defTest('sequence', (_s, v) => isIterable(v) && !(Array.isArray(v) && VIEWS.has(v)));
defTest('iterable', (_s, v) => isIterable(v));
defTest('callable', (_s, v) => v instanceof PyCallable || (v instanceof PyObject && !!v.callable));
defTest('sameas', (_s, v, a, k) => {
  const other = arg0(a, k, 'other');
  if (v instanceof PyFloat && other instanceof PyFloat) return v === other;
  return v === other;
});
defTest('escaped', (_s, v) => v instanceof Markup);
defTest('lower', (_s, v) => pyIsLower(str(v)));
defTest('upper', (_s, v) => pyIsUpper(str(v)));
defTest('in', (_s, v, a, k) => contains(arg0(a, k, 'seq'), v));
defTest(['eq', 'equalto', '=='], (_s, v, a, k) => eq(v, arg0(a, k, 'other')));
defTest(['ne', '!='], (_s, v, a, k) => !eq(v, arg0(a, k, 'other')));
defTest(['lt', 'lessthan', '<'], (_s, v, a, k) => compare(v, arg0(a, k, 'other'), '<') < 0);
defTest(['le', '<='], (_s, v, a, k) => compare(v, arg0(a, k, 'other'), '<=') <= 0);
defTest(['gt', 'greaterthan', '>'], (_s, v, a, k) => compare(v, arg0(a, k, 'other'), '>') > 0);
defTest(['ge', '>='], (_s, v, a, k) => compare(v, arg0(a, k, 'other'), '>=') >= 0);
defTest('filter', (_s, v, _a, _k, env) => isString(v) && env.filter(str(v)) !== undefined);
defTest('test', (_s, v, _a, _k, env) => isString(v) && env.test(str(v)) !== undefined);

export const TESTS: ReadonlyMap<string, TestFn> = T;
