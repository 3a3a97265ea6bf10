/**
 * str.format() and Python's format-spec mini-language (`[[fill]align][sign][z][#][0][width]
 * [grouping][.precision][type]`), as CPython 3.11's formatter applies it to str, int (bool) and
 * float: every presentation type, `n` as in the C locale (no grouping), `,` and `_` grouping (in
 * fours for b, o, x, X), zero padding that groups its zeros too, `z`, `#`, and the same refusals.
 */
import { absDigits, toExponential, toFixed, toGeneral } from './format.js';
import { chars } from './protocols.js';
import type { MemberAccess, RenderState } from './runtime.js';
import {
  floatRepr,
  isInt,
  isString,
  type Kwargs,
  PyError,
  PyFloat,
  repr,
  str,
  typeError,
  typeName,
  Undefined,
  type Value,
  valueError,
} from './values.js';

interface Spec {
  readonly fill: string;
  readonly fillGiven: boolean;
  readonly align: string | undefined;
  readonly sign: string | undefined;
  readonly z: boolean;
  readonly alt: boolean;
  readonly zero: boolean;
  readonly width: number;
  readonly grouping: string | undefined;
  readonly precision: number | undefined;
  readonly type: string | undefined;
}

const SPEC = /^(?:(.)?([<>=^]))?([-+ ])?(z)?(#)?(0)?(\d+)?([,_])?(?:\.(\d+))?(.)?$/su;

const parseSpec = (spec: string, value: Value): Spec => {
  const m = SPEC.exec(spec);
  if (!m) {
    if (/[,_][,_]/.test(spec)) throw valueError("Cannot specify both ',' and '_'.");
    if (/\.(?!\d)/.test(spec)) throw valueError('Format specifier missing precision');
    throw valueError(`Invalid format specifier '${spec}' for object of type '${typeName(value)}'`);
  }
  const [, fill, align, sign, z, alt, zero, width, grouping, precision, type] = m;
  if ((width?.length ?? 0) > 18 || (precision?.length ?? 0) > 18)
    throw valueError('Too many decimal digits in format string');
  return {
    fill: fill ?? ' ',
    fillGiven: fill !== undefined,
    align,
    sign,
    z: !!z,
    alt: !!alt,
    zero: !!zero,
    width: width ? Number(width) : 0,
    grouping,
    precision: precision !== undefined ? Number(precision) : undefined,
    type,
  };
};

/** Thousands separators on the digits, padded with zeros (and separators) to minWidth: CPython's grouping. */
const group = (digits: string, sep: string, size: number, minWidth: number): string => {
  let out = '';
  let remaining = digits.length;
  let min = minWidth;
  let first = true;
  for (;;) {
    const l = Math.min(size, Math.max(remaining, min, 1));
    const zeros = Math.max(0, l - remaining);
    const n = Math.max(0, Math.min(remaining, l));
    out = '0'.repeat(zeros) + digits.slice(remaining - n, remaining) + (first ? '' : sep) + out;
    first = false;
    remaining -= n;
    min -= l;
    if (remaining <= 0 && min <= 0) return out;
    min -= sep.length;
  }
};

/** The padded result: sign and prefix, digits (grouped), the rest (fraction, exponent, `%`). */
const layOut = (spec: Spec, left: string, digits: string, rest: string, numeric: boolean): string => {
  let fill = spec.fill;
  let align = spec.align;
  if (spec.zero && !spec.fillGiven) {
    fill = '0';
    if (!align && numeric) align = '=';
  }
  align ??= numeric ? '>' : '<';
  let body = digits;
  if (numeric) {
    const size = spec.grouping === '_' && spec.type && 'boxX'.includes(spec.type) ? 4 : 3;
    const minWidth = fill === '0' && align === '=' ? spec.width - left.length - chars(rest).length : 0;
    if (digits)
      body = spec.grouping ? group(digits, spec.grouping, size, minWidth) : digits.padStart(minWidth, '0');
  }
  const len = chars(left + body + rest).length;
  const pad = Math.max(0, spec.width - len);
  switch (align) {
    case '<':
      return left + body + rest + fill.repeat(pad);
    case '^':
      return fill.repeat(Math.floor(pad / 2)) + left + body + rest + fill.repeat(pad - Math.floor(pad / 2));
    case '=':
      return left + fill.repeat(pad) + body + rest;
    default:
      return fill.repeat(pad) + left + body + rest;
  }
};

const unknown = (type: string, value: Value) =>
  valueError(`Unknown format code '${type}' for object of type '${typeName(value)}'`);

const checkGrouping = (spec: Spec, type: string): void => {
  if (!spec.grouping) return;
  if ('defgEGF%'.includes(type) || type === '') return;
  if ('boxX'.includes(type) && spec.grouping === '_') return;
  throw valueError(`Cannot specify '${spec.grouping}' with '${type}'.`);
};

const formatString = (spec: Spec, s: string, value: Value): string => {
  const type = spec.type ?? 's';
  if (type !== 's') throw unknown(type, value);
  checkGrouping(spec, 's');
  if (spec.sign) throw valueError('Sign not allowed in string format specifier');
  if (spec.z) throw valueError('Negative zero coercion (z) not allowed in string format specifier');
  if (spec.alt) throw valueError('Alternate form (#) not allowed in string format specifier');
  if (spec.align === '=') throw valueError("'=' alignment not allowed in string format specifier");
  const body = spec.precision !== undefined ? chars(s).slice(0, spec.precision).join('') : s;
  return layOut(spec, '', '', body, false);
};

const signOf = (spec: Spec, negative: boolean): string =>
  negative ? '-' : spec.sign === '+' ? '+' : spec.sign === ' ' ? ' ' : '';

const formatInt = (spec: Spec, n: number | bigint | boolean, value: Value): string => {
  const type = spec.type === 'n' ? 'd' : (spec.type ?? 'd');
  if ('eEfFgG%'.includes(type)) {
    const x = Number(typeof n === 'boolean' ? (n ? 1 : 0) : n);
    if (!Number.isFinite(x)) throw new PyError('OverflowError', 'int too large to convert to float');
    return formatFloat(spec, x, value);
  }
  if (!'dboxXc'.includes(type)) throw unknown(type, value);
  checkGrouping(spec, spec.type ?? 'd');
  if (spec.precision !== undefined) throw valueError('Precision not allowed in integer format specifier');
  if (spec.z) throw valueError('Negative zero coercion (z) not allowed in integer format specifier');
  const negative = typeof n !== 'boolean' && n < 0;
  if (type === 'c') {
    if (spec.sign) throw valueError("Sign not allowed with integer format specifier 'c'");
    if (spec.alt) throw valueError("Alternate form (#) not allowed with integer format specifier 'c'");
    const code = typeof n === 'boolean' ? (n ? 1 : 0) : n;
    if (code < 0 || code > 0x10ffff) throw new PyError('OverflowError', '%c arg not in range(0x110000)');
    return layOut(spec, '', '', String.fromCodePoint(Number(code)), true);
  }
  const radix = type === 'b' ? 2 : type === 'o' ? 8 : type === 'd' ? 10 : 16;
  let digits = absDigits(n, radix);
  if (type === 'X') digits = digits.toUpperCase();
  const prefix = spec.alt && type !== 'd' ? `0${type}` : '';
  return layOut(spec, signOf(spec, negative) + prefix, digits, '', true);
};

const formatFloat = (spec: Spec, x: number, value: Value): string => {
  const type = spec.type ?? '';
  if (!'eEfFgGn%'.includes(type)) throw unknown(type, value);
  checkGrouping(spec, type);
  const abs = Math.abs(x);
  const p = spec.precision;
  let body: string;
  switch (type) {
    case 'f':
    case 'F':
      body = toFixed(abs, p ?? 6);
      if (type === 'F') body = body.toUpperCase();
      break;
    case 'e':
    case 'E':
      body = toExponential(abs, p ?? 6, type === 'E');
      break;
    case 'g':
    case 'G':
    case 'n':
      body = toGeneral(abs, p ?? 6, spec.alt, type === 'G');
      break;
    case '%':
      body = `${toFixed(abs * 100, p ?? 6)}%`;
      break;
    default:
      if (p === undefined) body = floatRepr(abs);
      else body = addDotZero(abs, p, spec.alt);
  }
  // #: a decimal point always.
  if (spec.alt && Number.isFinite(abs) && !body.includes('.')) body = body.replace(/(?=[eE%]|$)/, '.');
  let negative = x < 0 || Object.is(x, -0);
  // z: a negative zero, as rounded, loses its sign.
  if (negative && spec.z && Number.isFinite(x) && !/[1-9]/.test(body.replace(/e.*$/i, ''))) negative = false;
  if (Number.isNaN(x)) negative = false;
  const m = /^(\d*)([\s\S]*)$/.exec(body) as RegExpExecArray;
  return layOut(spec, signOf(spec, negative), m[1] as string, m[2] as string, true);
};

/** No type, with a precision: like 'g', but scientific from exponent p-1, and a fixed-point result keeps a decimal. */
const addDotZero = (abs: number, precision: number, alt: boolean): string => {
  if (!Number.isFinite(abs)) return toExponential(abs, 0);
  const p = precision === 0 ? 1 : precision;
  const e = toExponential(abs, p - 1);
  const exp = Number(e.slice(e.indexOf('e') + 1));
  if (exp >= -4 && exp < p - 1) {
    let body = toFixed(abs, p - 1 - exp);
    if (!alt && body.includes('.')) body = body.replace(/0+$/, '').replace(/\.$/, '.0');
    if (!body.includes('.')) body += '.0';
    return body;
  }
  return alt ? e : stripZeros(e);
};

/** A mantissa's trailing zeros, and then its point, dropped: `1.500e+07` → `1.5e+07`, `0e+00` stays. */
export const stripZeros = (e: string): string =>
  e.replace(/\.(\d*?)0*(?=e)/i, (_, kept: string) => (kept ? `.${kept}` : ''));

/** format(value, spec). */
export const formatValue = (state: RenderState, value: Value, spec: string): string => {
  if (value instanceof Undefined) return value.fail();
  if (spec === '') return str(value);
  const parsed = parseSpec(spec, value);
  state.guardString(parsed.width);
  if (isString(value)) return formatString(parsed, str(value), value);
  if (value instanceof PyFloat) return formatFloat(parsed, value.v, value);
  if (isInt(value)) return formatInt(parsed, value, value);
  throw typeError(`unsupported format string passed to ${typeName(value)}.__format__`);
};

/** ascii(): repr with every non-ASCII character escaped. */
const asciiRepr = (v: Value): string =>
  [...repr(v)]
    .map((ch) => {
      const c = ch.codePointAt(0) as number;
      if (c < 0x80) return ch;
      if (c < 0x100) return `\\x${c.toString(16).padStart(2, '0')}`;
      if (c < 0x10000) return `\\u${c.toString(16).padStart(4, '0')}`;
      return `\\U${c.toString(16).padStart(8, '0')}`;
    })
    .join('');

/** str.format(*args, **kwargs). */
export const strFormat = (
  state: RenderState,
  format: string,
  args: Value[],
  kwargs: Kwargs,
  access: MemberAccess,
  /** How a field's value is written: Markup.format escapes each (MarkupSafe's EscapeFormatter). */
  writeField: (value: Value, spec: string) => string = (value, spec) => formatValue(state, value, spec),
): string => {
  let auto = 0;
  let out = '';
  let i = 0;
  while (i < format.length) {
    const ch = format[i] as string;
    if (ch === '{' && format[i + 1] === '{') {
      out += '{';
      i += 2;
      continue;
    }
    if (ch === '}' && format[i + 1] === '}') {
      out += '}';
      i += 2;
      continue;
    }
    if (ch === '}') throw valueError("Single '}' encountered in format string");
    if (ch !== '{') {
      out += ch;
      i++;
      continue;
    }
    // A field, with one level of nested fields in its spec.
    let depth = 1;
    let j = i + 1;
    while (j < format.length && depth > 0) {
      if (format[j] === '{') depth++;
      else if (format[j] === '}') depth--;
      j++;
    }
    if (depth > 0) throw valueError("expected '}' before end of string");
    const field = format.slice(i + 1, j - 1);
    i = j;
    const m = /^([^!:]*)(?:!([rsa]))?(?::([\s\S]*))?$/.exec(field);
    if (!m) throw valueError('bad format field');
    const [, nameText = '', conversion, specText = ''] = m;
    const spec = specText.replace(/\{([^{}]*)\}/g, (_, inner: string) =>
      str(resolveField(state, inner, args, kwargs, access, () => auto++)),
    );
    let value = resolveField(state, nameText, args, kwargs, access, () => auto++);
    if (conversion === 'r') value = repr(value);
    else if (conversion === 'a') value = asciiRepr(value);
    else if (conversion === 's') value = str(value);
    out += writeField(value, spec);
    state.guardString(out.length);
  }
  return out;
};

const resolveField = (
  state: RenderState,
  text: string,
  args: Value[],
  kwargs: Kwargs,
  access: MemberAccess,
  nextAuto: () => number,
): Value => {
  const m = /^([^.[]*)((?:\.[^.[]+|\[[^\]]*\])*)$/.exec(text);
  if (!m) throw valueError(`bad field name '${text}'`);
  const [, first = '', rest = ''] = m;
  let value: Value;
  if (first === '') {
    const n = nextAuto();
    if (n >= args.length)
      throw new PyError('IndexError', `Replacement index ${n} out of range for positional args tuple`);
    value = args[n] as Value;
  } else if (/^\d+$/.test(first)) {
    const n = Number(first);
    if (n >= args.length)
      throw new PyError('IndexError', `Replacement index ${n} out of range for positional args tuple`);
    value = args[n] as Value;
  } else {
    const v = kwargs.get(first);
    if (v === undefined) throw new PyError('KeyError', repr(first));
    value = v;
  }
  for (const part of rest.match(/\.[^.[]+|\[[^\]]*\]/g) ?? []) {
    if (part.startsWith('.')) value = access.getattr(state, value, part.slice(1));
    else {
      const key = part.slice(1, -1);
      value = access.getitem(state, value, /^\d+$/.test(key) ? Number(key) : key);
    }
    if (value instanceof Undefined) value.fail();
  }
  return value;
};
