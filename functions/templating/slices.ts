/** Python's indexing and slicing of str, list, tuple and range (Jinja2 slices without its getitem). */
import { chars, iterate } from './protocols.js';
import {
  isInt,
  isString,
  Markup,
  num,
  PyTuple,
  RANGES,
  str,
  typeError,
  typeName,
  Undefined,
  type Value,
  VIEWS,
  valueError,
} from './values.js';
export const seqIndex = (i: Value, len: number): number => {
  const n = num(i);
  return n < 0 ? n + len : n;
};

const sliceBound = (v: Value): number | null => {
  if (v === null) return null;
  if (v instanceof Undefined) return v.fail();
  if (!isInt(v)) throw typeError('slice indices must be integers or None or have an __index__ method');
  return num(v);
};

/** Python's slice semantics on str, list, tuple and range (Jinja2 slices without its getitem). */
export const sliceValue = (obj: Value, start: Value, stop: Value, step: Value): Value => {
  if (obj instanceof Undefined) return obj.fail();
  const items = isString(obj)
    ? chars(str(obj))
    : (Array.isArray(obj) && !VIEWS.has(obj)) || obj instanceof PyTuple
      ? iterate(obj)
      : null;
  if (!items) throw typeError(`'${typeName(obj)}' object is not subscriptable`);
  const st = sliceBound(step) ?? 1;
  const first = sliceBound(start);
  const last = sliceBound(stop);
  if (st === 0) throw valueError('slice step cannot be zero');
  const len = items.length;
  const norm = (v: number | null, dflt: number, lo: number, hi: number) => {
    if (v === null) return dflt;
    const x = v < 0 ? v + len : v;
    return Math.max(lo, Math.min(hi, x));
  };
  const out: Value[] = [];
  const a = st > 0 ? norm(first, 0, 0, len) : norm(first, len - 1, -1, len - 1);
  const b = st > 0 ? norm(last, len, 0, len) : norm(last, -1, -1, len - 1);
  if (st > 0) for (let i = a; i < b; i += st) out.push(items[i] as Value);
  else for (let i = a; i > b; i += st) out.push(items[i] as Value);
  if (isString(obj)) {
    const s = (out as string[]).join('');
    return obj instanceof Markup ? new Markup(s) : s;
  }
  const range = Array.isArray(obj) ? RANGES.get(obj) : undefined;
  if (range) {
    // A slice of a range is a range: range(10)[2:5] is range(2, 5).
    RANGES.set(out, {
      start: range.start + a * range.step,
      stop: range.start + b * range.step,
      step: range.step * st,
    });
  }
  return obj instanceof PyTuple ? new PyTuple(out) : out;
};
