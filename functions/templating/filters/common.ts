/** What several filters share: Jinja2's attribute getters and its stable sort. */
import { getitem } from '../members.js';
import { compare } from '../protocols.js';
import type { RenderState } from '../runtime.js';
import { isInt, isString, num, PyTuple, str, Undefined, type Value } from '../values.js';
/** Jinja2's make_attrgetter: `a.b.0` walks attributes and items; a missing step → default. */
export const attrGetter = (state: RenderState, attribute: Value, dflt: Value = null, lower = false) => {
  const parts = isInt(attribute)
    ? [num(attribute)]
    : str(attribute)
        .split('.')
        .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  return (item: Value): Value => {
    let v = item;
    for (const part of parts) {
      v = getitem(state, v, part);
      if (v instanceof Undefined) {
        if (dflt !== null) {
          v = dflt;
          break;
        }
        return v;
      }
    }
    return lower && isString(v) ? str(v).toLowerCase() : v;
  };
};

/** Several comma-separated attributes (sort, in 3.1): a tuple key. */
export const multiAttrGetter = (state: RenderState, attribute: Value, lower: boolean) => {
  if (!isString(attribute)) return attrGetter(state, attribute, null, lower);
  const getters = str(attribute)
    .split(',')
    .map((a) => attrGetter(state, a.trim(), null, lower));
  if (getters.length === 1) return getters[0] as (v: Value) => Value;
  return (item: Value): Value => new PyTuple(getters.map((g) => g(item)));
};

export const ignoreCase = (v: Value): Value => (isString(v) ? str(v).toLowerCase() : v);

export const sortBy = (
  state: RenderState,
  items: Value[],
  key: (v: Value) => Value,
  reverse: boolean,
): Value[] => {
  state.tick(Math.ceil(items.length / 256));
  const keyed = items.map((v, i) => ({ v, k: key(v), i }));
  keyed.sort((a, b) => {
    const c = compare(a.k, b.k);
    return c !== 0 ? (reverse ? -c : c) : a.i - b.i;
  });
  return keyed.map((x) => x.v);
};
