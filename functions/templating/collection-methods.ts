/** The methods of list, tuple, range and dict, as a template calls them. */
import { seqIndexOf } from './number-methods.js';
import { compare, eq, iterate } from './protocols.js';
import { bind, type Method } from './runtime.js';
import { seqIndex } from './slices.js';
import {
  dictView,
  PyCallable,
  PyDict,
  PyError,
  PyObject,
  PyTuple,
  pushAll,
  str,
  typeName,
  Undefined,
  type Value,
  valueError,
} from './values.js';
export const LIST_METHODS = new Map<string, Method>([
  [
    'append',
    (state, self, a, k) => {
      const [x] = bind('append', ['object'], [undefined], a, k);
      state.guardList((self as Value[]).length + 1);
      (self as Value[]).push(x as Value);
      return null;
    },
  ],
  [
    'extend',
    (state, self, a, k) => {
      const [x] = bind('extend', ['iterable'], [undefined], a, k);
      const items = iterate(x as Value);
      state.guardList((self as Value[]).length + items.length);
      pushAll(self as Value[], items);
      return null;
    },
  ],
  [
    'insert',
    (state, self, a, k) => {
      const [i, x] = bind('insert', ['index', 'object'], [undefined, undefined], a, k);
      const l = self as Value[];
      state.guardList(l.length + 1);
      l.splice(Math.max(0, Math.min(l.length, seqIndex(i as Value, l.length))), 0, x as Value);
      return null;
    },
  ],
  [
    'pop',
    (_s, self, a, k) => {
      const [i] = bind('pop', ['index'], [-1], a, k);
      const l = self as Value[];
      if (!l.length) throw new PyError('IndexError', 'pop from empty list');
      const at = seqIndex(i as Value, l.length);
      if (at < 0 || at >= l.length) throw new PyError('IndexError', 'pop index out of range');
      return l.splice(at, 1)[0] as Value;
    },
  ],
  [
    'remove',
    (_s, self, a, k) => {
      const [x] = bind('remove', ['value'], [undefined], a, k);
      const l = self as Value[];
      const at = l.findIndex((v) => eq(v, x as Value));
      if (at < 0) throw valueError('list.remove(x): x not in list');
      l.splice(at, 1);
      return null;
    },
  ],
  [
    'clear',
    (_s, self) => {
      (self as Value[]).length = 0;
      return null;
    },
  ],
  ['copy', (_s, self) => [...(self as Value[])]],
  [
    'reverse',
    (_s, self) => {
      (self as Value[]).reverse();
      return null;
    },
  ],
  [
    'sort',
    (_s, self, a, k) => {
      const [key, rev] = bind('sort', ['key', 'reverse'], [null, false], a, k);
      const l = self as Value[];
      // Descending by the reversed comparison, not by reversing: equal items keep their order, as in Python.
      const order = rev ? (x: Value, y: Value) => compare(y, x) : compare;
      if (key === null || key === undefined) {
        l.sort(order);
        return null;
      }
      const keyed = l.map((item) => [callKey(key, item), item] as const);
      keyed.sort((x, y) => order(x[0], y[0]));
      for (const [i, [, item]] of keyed.entries()) l[i] = item;
      return null;
    },
  ],
]);

/** `key=` of list.sort: a macro (or another callable) called with each item, as Python calls it. */
const callKey = (fn: Value, item: Value): Value => {
  if (fn instanceof PyCallable) return fn.call([item], new Map());
  if (fn instanceof PyObject && fn.callable) return fn.callable.call([item], new Map());
  if (fn instanceof Undefined) return fn.fail();
  throw new PyError('TypeError', `'${typeName(fn)}' object is not callable`);
};

export const SEQ_METHODS = new Map<string, Method>([
  ['index', seqIndexOf],
  [
    'count',
    (_s, self, a, k) => {
      const [x] = bind('count', ['value'], [undefined], a, k);
      return iterate(self).filter((v) => eq(v, x as Value)).length;
    },
  ],
]);

export const DICT_METHODS = new Map<string, Method>([
  [
    'get',
    (_s, self, a, k) => {
      const [key, d] = bind('get', ['key', 'default'], [undefined, null], a, k);
      const v = (self as PyDict).get(key as Value);
      return v === undefined ? (d as Value) : v;
    },
  ],
  [
    'items',
    (_s, self) =>
      dictView(
        'dict_items',
        (self as PyDict).entries().map(([key, v]) => new PyTuple([key, v])),
        self as PyDict,
      ),
  ],
  ['keys', (_s, self) => dictView('dict_keys', (self as PyDict).keys(), self as PyDict)],
  ['values', (_s, self) => dictView('dict_values', (self as PyDict).values(), self as PyDict)],
  ['copy', (_s, self) => PyDict.from((self as PyDict).entries())],
  [
    'fromkeys',
    (_s, _self, a, k) => {
      const [keys, value] = bind('fromkeys', ['iterable', 'value'], [undefined, null], a, k);
      return PyDict.from(iterate(keys as Value).map((key) => [key, value as Value] as const));
    },
  ],
  [
    'setdefault',
    (_s, self, a, k) => {
      const [key, d] = bind('setdefault', ['key', 'default'], [undefined, null], a, k);
      const dict = self as PyDict;
      const v = dict.get(key as Value);
      if (v !== undefined) return v;
      dict.set(key as Value, d as Value);
      return d as Value;
    },
  ],
  [
    'pop',
    (_s, self, a, k) => {
      const [key, d] = bind('pop', ['key', 'default'], [undefined, new Undefined('')], a, k);
      const dict = self as PyDict;
      const v = dict.get(key as Value);
      if (v !== undefined) {
        dict.delete(key as Value);
        return v;
      }
      if (d instanceof Undefined) throw new PyError('KeyError', str(key as Value));
      return d as Value;
    },
  ],
  [
    'update',
    (_s, self, a, k) => {
      const dict = self as PyDict;
      const other = a[0];
      if (other instanceof PyDict) for (const [key, v] of other.entries()) dict.set(key, v);
      else if (other !== undefined && other !== null) {
        for (const pair of iterate(other)) {
          const [key, v] = iterate(pair);
          dict.set(key as Value, v as Value);
        }
      }
      for (const [key, v] of k) dict.set(key, v);
      return null;
    },
  ],
  [
    'clear',
    (_s, self) => {
      (self as PyDict).clear();
      return null;
    },
  ],
  [
    'popitem',
    (_s, self) => {
      const dict = self as PyDict;
      const last = dict.entries().pop();
      if (!last) throw new PyError('KeyError', 'popitem(): dictionary is empty');
      dict.delete(last[0]);
      return new PyTuple(last);
    },
  ],
]);
