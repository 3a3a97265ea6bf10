/**
 * Member and item access, Python's way, over the values of values.ts only. A dict's members are
 * its keys and the dict methods below; a string's, list's and tuple's are their methods; nothing
 * is ever read from a JavaScript object's properties, so no key or name (`constructor`,
 * `__proto__`, anything computed at run time) can reach the host.
 */
import { DICT_METHODS, LIST_METHODS, SEQ_METHODS } from './collection-methods.js';
import { FLOAT_METHODS, INT_METHODS, intAttribute, rangeAttribute, viewMethod } from './number-methods.js';
import { chars, iterate } from './protocols.js';
import type { MemberAccess, Method, RenderState } from './runtime.js';
import { seqIndex } from './slices.js';
import { MARKUP_ONLY, STR_METHODS } from './str-methods.js';
import {
  isInt,
  isString,
  Markup,
  num,
  PyCallable,
  PyDict,
  PyFloat,
  PyObject,
  PyTuple,
  RANGES,
  str,
  Undefined,
  undefinedMember,
  type Value,
  VIEW_DICTS,
  VIEWS,
} from './values.js';

const bound = (state: RenderState, name: string, self: Value, method: Method): PyCallable =>
  new PyCallable(name, (args, kwargs) => method(state, self, args, kwargs, memberAccess));

/** `obj.name`: Jinja2 tries the attribute first, then the item. */
export const getattr = (state: RenderState, obj: Value, name: string): Value => {
  if (obj instanceof Undefined) return obj.fail();
  const method = methodOf(obj, name);
  if (method) return bound(state, name, obj, method);
  if (obj instanceof PyDict) {
    const v = obj.get(name);
    if (v !== undefined) return v;
  } else if (obj instanceof PyObject) {
    const v = obj.getter ? obj.getter(name) : undefined;
    if (v !== undefined) return v;
    const a = obj.attrs.get(name);
    if (a !== undefined) return a;
  } else if (obj instanceof PyTuple && obj.fields?.includes(name)) {
    return obj.items[obj.fields.indexOf(name)] as Value;
  } else if (obj instanceof PyCallable && obj.attrs) {
    const a = obj.attrs.get(name);
    if (a !== undefined) return a;
  } else if (
    obj instanceof PyFloat ||
    typeof obj === 'number' ||
    typeof obj === 'bigint' ||
    typeof obj === 'boolean'
  ) {
    if (name === 'real') return typeof obj === 'boolean' ? num(obj) : obj;
    if (name === 'imag') return obj instanceof PyFloat ? new PyFloat(0) : 0;
    if (!(obj instanceof PyFloat)) {
      const v = intAttribute(obj, name);
      if (v !== undefined) return v;
    }
  } else if (Array.isArray(obj) && RANGES.has(obj)) {
    const v = rangeAttribute(obj, name);
    if (v !== undefined) return v;
  } else if (Array.isArray(obj) && name === 'mapping') {
    // A view's read-only mappingproxy: a copy, which prints as the dict does.
    const d = VIEW_DICTS.get(obj);
    if (d) return PyDict.from(d.entries());
  }
  return undefinedMember(obj, name);
};

const methodOf = (obj: Value, name: string): Method | undefined => {
  if (isString(obj))
    return obj instanceof Markup || !MARKUP_ONLY.has(name) ? STR_METHODS.get(name) : undefined;
  if (Array.isArray(obj)) {
    if (VIEWS.has(obj)) return viewMethod(obj, name);
    if (RANGES.has(obj)) return SEQ_METHODS.get(name);
    return LIST_METHODS.get(name) ?? SEQ_METHODS.get(name);
  }
  if (obj instanceof PyTuple) return SEQ_METHODS.get(name);
  if (obj instanceof PyDict) return DICT_METHODS.get(name);
  if (obj instanceof PyFloat) return FLOAT_METHODS.get(name);
  if (typeof obj === 'number' || typeof obj === 'bigint' || typeof obj === 'boolean')
    return INT_METHODS.get(name);
  return undefined;
};

/** `obj[key]`: Jinja2 tries the item first, then (for a string key) the attribute. */
export const getitem = (state: RenderState, obj: Value, key: Value): Value => {
  if (obj instanceof Undefined) return obj.fail();
  if (key instanceof Undefined) return key.fail();
  if (obj instanceof PyDict) {
    if (Array.isArray(key) || key instanceof PyDict) return undefinedMember(obj, key);
    const v = obj.get(key);
    if (v !== undefined) return v;
  } else if ((Array.isArray(obj) || obj instanceof PyTuple || isString(obj)) && isInt(key)) {
    // dict views are not subscriptable: Jinja2 turns the TypeError into an undefined.
    if (Array.isArray(obj) && VIEWS.has(obj)) return undefinedMember(obj, key);
    const items = isString(obj) ? chars(str(obj)) : iterate(obj);
    const i = seqIndex(key, items.length);
    if (i >= 0 && i < items.length) {
      const v = items[i] as Value;
      return obj instanceof Markup ? new Markup(v as string) : v;
    }
    return undefinedMember(obj, key);
  }
  if (typeof key === 'string') return getattr(state, obj, key);
  return undefinedMember(obj, key);
};

/** Handed to the methods that look members up themselves (str.format's `{0.name}`). */
const memberAccess: MemberAccess = { getattr, getitem };
