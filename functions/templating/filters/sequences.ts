/** Jinja2's filters over sequences and mappings (jinja2/filters.py). */

import { getattr } from '../members.js';
import { chars, compare, eq, iterate, length, truthy } from '../protocols.js';
import { bind, define, type Environment, type FilterFn, type RenderState } from '../runtime.js';
import {
  isString,
  type Kwargs,
  Markup,
  markupEscape,
  num,
  PyCallable,
  PyDict,
  PyError,
  PyTuple,
  str,
  strParts,
  typeError,
  Undefined,
  type Value,
  valueError,
} from '../values.js';
import { attrGetter, ignoreCase, multiAttrGetter, sortBy } from './common.js';

export const SEQUENCE_FILTERS = new Map<string, FilterFn>();
const def = define(SEQUENCE_FILTERS);

// --- filters ------------------------------------------------------------------------------------

const selectOrReject = (
  state: RenderState,
  value: Value,
  args: Value[],
  kwargs: Kwargs,
  env: Environment,
  byAttr: boolean,
  modfunc: (b: boolean) => boolean,
): Value[] => {
  const items = iterate(value);
  let rest = [...args];
  let getter: (v: Value) => Value = (v) => v;
  if (byAttr) {
    if (!rest.length) throw new PyError('FilterArgumentError', 'Missing parameter for attribute name');
    getter = attrGetter(state, rest[0] as Value);
    rest = rest.slice(1);
  }
  let check: (v: Value) => boolean;
  if (rest.length) {
    const name = str(rest[0] as Value);
    const test = env.test(name);
    if (!test) throw new PyError('TemplateRuntimeError', `No test named '${name}'.`);
    const testArgs = rest.slice(1);
    check = (v) => test(state, v, testArgs, kwargs, env);
  } else {
    check = (v) => truthy(v);
  }
  return items.filter((item) => {
    state.tick();
    return modfunc(check(getter(item)));
  });
};

const minMax = (
  state: RenderState,
  value: Value,
  args: Value[],
  kwargs: Kwargs,
  sign: number,
  fname: string,
): Value => {
  const [caseSensitive, attribute] = bind(
    fname,
    ['case_sensitive', 'attribute'],
    [false, null],
    args,
    kwargs,
  );
  const items = iterate(value);
  if (!items.length) return new Undefined('No aggregated item, sequence was empty.');
  const key =
    attribute !== null
      ? attrGetter(state, attribute as Value, null, !caseSensitive)
      : caseSensitive
        ? (v: Value) => v
        : ignoreCase;
  let best = items[0] as Value;
  let bestKey = key(best);
  for (const item of items.slice(1)) {
    const k = key(item);
    if (compare(k, bestKey) * sign > 0) {
      best = item;
      bestKey = k;
    }
  }
  return best;
};

const groupTuple = (grouper: Value, list: Value[]) => {
  const t = new PyTuple([grouper, list]);
  t.fields = ['grouper', 'list'];
  return t;
};
def('attr', (state, v, a, k) => {
  const [name] = bind('attr', ['name'], [undefined], a, k);
  if (v instanceof Undefined) return v.fail();
  const r = getattr(state, v, str(name as Value));
  // attr() reads attributes only: a dict's keys are items, not attributes.
  if (v instanceof PyDict && !(r instanceof PyCallable))
    return new Undefined(`'dict object' has no attribute '${str(name as Value)}'`);
  return r;
});
def('batch', (state, v, a, k) => {
  const [n, fill] = bind('batch', ['linecount', 'fill_with'], [undefined, null], a, k);
  const size = num(n as Value);
  if (size <= 0) throw valueError('batch size must be positive');
  const items = iterate(v);
  const out: Value[] = [];
  for (let i = 0; i < items.length; i += size) {
    state.tick();
    const chunk = items.slice(i, i + size);
    if (fill !== null && chunk.length < size) while (chunk.length < size) chunk.push(fill as Value);
    out.push(chunk);
  }
  return out;
});
def(['count', 'length'], (_s, v) => length(v));
def(['default', 'd'], (_s, v, a, k) => {
  const [dflt, boolean] = bind('default', ['default_value', 'boolean'], ['', false], a, k);
  if (v instanceof Undefined || (truthy(boolean as Value) && !truthy(v))) return dflt as Value;
  return v;
});
def('dictsort', (state, v, a, k) => {
  const [cs, by, rev] = bind('dictsort', ['case_sensitive', 'by', 'reverse'], [false, 'key', false], a, k);
  if (!(v instanceof PyDict)) {
    if (v instanceof Undefined) return v.fail();
    throw typeError('dictsort() needs a mapping');
  }
  const pos = str(by as Value) === 'key' ? 0 : str(by as Value) === 'value' ? 1 : -1;
  if (pos < 0) throw new PyError('FilterArgumentError', 'You can only sort by either "key" or "value"');
  const items: Value[] = v.entries().map(([key, x]) => new PyTuple([key, x]));
  return sortBy(
    state,
    items,
    (item) => {
      const x = (item as PyTuple).items[pos] as Value;
      return truthy(cs as Value) ? x : ignoreCase(x);
    },
    truthy(rev as Value),
  );
});
def('first', (_s, v) => {
  const items = iterate(v);
  return items.length ? (items[0] as Value) : new Undefined('No first item, sequence was empty.');
});
def('last', (_s, v) => {
  const items = iterate(v);
  return items.length
    ? (items[items.length - 1] as Value)
    : new Undefined('No last item, sequence was empty.');
});
def('groupby', (state, v, a, k) => {
  const [attribute, dflt, cs] = bind(
    'groupby',
    ['attribute', 'default', 'case_sensitive'],
    [undefined, null, false],
    a,
    k,
  );
  const key = attrGetter(state, attribute as Value, dflt as Value, !truthy(cs as Value));
  const out = attrGetter(state, attribute as Value, dflt as Value, false);
  const sorted = sortBy(state, iterate(v), key, false);
  const groups: Value[] = [];
  let current: Value[] = [];
  let currentKey: Value | undefined;
  for (const item of sorted) {
    const kv = key(item);
    if (currentKey === undefined || !eq(kv, currentKey)) {
      if (current.length) groups.push(groupTuple(out(current[0] as Value), current));
      current = [];
      currentKey = kv;
    }
    current.push(item);
  }
  if (current.length) groups.push(groupTuple(out(current[0] as Value), current));
  return groups;
});
def('items', (_s, v) => {
  if (v instanceof Undefined) return [];
  if (!(v instanceof PyDict)) throw typeError('Can only get item pairs from a mapping.');
  return v.entries().map(([key, x]) => new PyTuple([key, x]));
});
def('join', (state, v, a, k) => {
  const [d, attribute] = bind('join', ['d', 'attribute'], ['', null], a, k);
  let items = iterate(v);
  if (attribute !== null) items = items.map(attrGetter(state, attribute as Value));
  if (!state.autoescape) {
    const parts = items.map(str);
    state.guardString(parts.reduce((n, p) => n + p.length, 0) + str(d as Value).length * parts.length);
    return parts.join(str(d as Value));
  }
  const markup = d instanceof Markup || items.some((i) => i instanceof Markup);
  const parts = items.map((i) => (markup ? markupEscape(i).s : str(i)));
  const sep = markup ? markupEscape(d as Value).s : str(d as Value);
  state.guardString(parts.reduce((n, p) => n + p.length, 0) + sep.length * parts.length);
  const joined = parts.join(sep);
  return markup ? new Markup(joined) : joined;
});
def('list', (_s, v) => [...iterate(v)]);
def('map', (state, v, a, k, env) => {
  const items = iterate(v);
  if (!a.length && k.has('attribute')) {
    const [attribute, dflt] = bind('map', ['attribute', 'default'], [undefined, null], [], k);
    return items.map(attrGetter(state, attribute as Value, dflt as Value));
  }
  if (!a.length) throw new PyError('FilterArgumentError', 'map requires a filter argument');
  const name = str(a[0] as Value);
  const filter = env.filter(name);
  if (!filter) throw new PyError('TemplateRuntimeError', `No filter named '${name}'.`);
  const rest = a.slice(1);
  return items.map((item) => {
    state.tick();
    return filter(state, item, rest, k, env);
  });
});
def('max', (state, v, a, k) => minMax(state, v, a, k, 1, 'max'));
def('min', (state, v, a, k) => minMax(state, v, a, k, -1, 'min'));
def('random', (_s, v) => {
  const items = iterate(v);
  if (!items.length) return new Undefined('No random item, sequence was empty.');
  return items[Math.floor(Math.random() * items.length)] as Value;
});
def('select', (state, v, a, k, env) => selectOrReject(state, v, a, k, env, false, (b) => b));
def('reject', (state, v, a, k, env) => selectOrReject(state, v, a, k, env, false, (b) => !b));
def('selectattr', (state, v, a, k, env) => selectOrReject(state, v, a, k, env, true, (b) => b));
def('rejectattr', (state, v, a, k, env) => selectOrReject(state, v, a, k, env, true, (b) => !b));
def('reverse', (_s, v) => {
  if (isString(v)) {
    const [s, wrap] = strParts(v);
    return wrap(chars(s).reverse().join(''));
  }
  return [...iterate(v)].reverse();
});
def('slice', (_s, v, a, k) => {
  const [slices, fill] = bind('slice', ['slices', 'fill_with'], [undefined, null], a, k);
  const seq = iterate(v);
  const n = num(slices as Value);
  if (n <= 0) throw valueError('slices must be positive');
  const per = Math.floor(seq.length / n);
  const extra = seq.length % n;
  let offset = 0;
  const out: Value[] = [];
  for (let i = 0; i < n; i++) {
    const start = offset + i * per;
    if (i < extra) offset += 1;
    const end = offset + (i + 1) * per;
    const tmp = seq.slice(start, end);
    if (fill !== null && i >= extra) tmp.push(fill as Value);
    out.push(tmp);
  }
  return out;
});
def('sort', (state, v, a, k) => {
  const [rev, cs, attribute] = bind(
    'sort',
    ['reverse', 'case_sensitive', 'attribute'],
    [false, false, null],
    a,
    k,
  );
  const lower = !truthy(cs as Value);
  const key =
    attribute !== null
      ? multiAttrGetter(state, attribute as Value, lower)
      : lower
        ? ignoreCase
        : (x: Value) => x;
  return sortBy(state, [...iterate(v)], key, truthy(rev as Value));
});
def('unique', (state, v, a, k) => {
  const [cs, attribute] = bind('unique', ['case_sensitive', 'attribute'], [false, null], a, k);
  const lower = !truthy(cs as Value);
  const key =
    attribute !== null
      ? attrGetter(state, attribute as Value, null, lower)
      : lower
        ? ignoreCase
        : (x: Value) => x;
  const seen = new PyDict();
  const out: Value[] = [];
  for (const item of iterate(v)) {
    state.tick();
    const kv = key(item);
    if (!seen.has(kv)) {
      seen.set(kv, true);
      out.push(item);
    }
  }
  return out;
});
