/**
 * Python's number and string formatting: the `%` operator (and Jinja2's `format` filter), and
 * str.format() with the format-spec mini-language. Decimal rounding is exact and half-even on
 * the double's true value, as CPython's is (`'%.2f' % 0.125` is `0.12`, `round(2.5)` is `2.0`).
 * Field lookups in format strings go through the template's own member access, never the host's,
 * and every width is bounded by the render's string limit.
 */
import { chars } from './protocols.js';
import type { MemberAccess, RenderState } from './runtime.js';
import {
  floatRepr,
  isInt,
  isNumber,
  isString,
  type Kwargs,
  Markup,
  markupEscape,
  num,
  PyDict,
  PyError,
  PyTuple,
  repr,
  str,
  typeError,
  typeName,
  Undefined,
  type Value,
  valueError,
} from './values.js';

// --- exact decimals ---------------------------------------------------------------------------

/** The exact decimal value of a finite double: digits (no sign) and the position of the point. */
const exactDecimal = (x: number): { digits: string; point: number } => {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const expBits = Number((bits >> 52n) & 0x7ffn);
  let mantissa = bits & 0xfffffffffffffn;
  let exp: number;
  if (expBits === 0) exp = -1074;
  else {
    mantissa |= 1n << 52n;
    exp = expBits - 1075;
  }
  if (mantissa === 0n) return { digits: '0', point: 1 };
  if (exp >= 0) {
    const digits = (mantissa << BigInt(exp)).toString();
    return { digits, point: digits.length };
  }
  const digits = (mantissa * 5n ** BigInt(-exp)).toString();
  return { digits, point: digits.length + exp };
};

/** Round digits×10^(point-len) to `keep` digits after the point, half-even. Returns digits, point. */
const roundDigits = (digits: string, point: number, keep: number): { digits: string; point: number } => {
  const cut = point + keep; // number of digits to keep
  if (cut >= digits.length) return { digits, point };
  if (cut < 0) return { digits: '0', point: 1 };
  const kept = digits.slice(0, cut) || '0';
  const rest = digits.slice(cut);
  const first = rest.charCodeAt(0) - 48;
  const tail = /[1-9]/.test(rest.slice(1));
  const lastKept = cut > 0 ? kept.charCodeAt(kept.length - 1) - 48 : 0;
  const up = first > 5 || (first === 5 && (tail || lastKept % 2 === 1));
  if (!up) return { digits: cut > 0 ? kept : '0', point: cut > 0 ? point : 1 };
  const bumped = (BigInt(cut > 0 ? kept : '0') + 1n).toString();
  if (cut <= 0) return { digits: bumped, point: bumped.length - keep };
  return { digits: bumped, point: point + (bumped.length - kept.length) };
};

/** `x` with `precision` decimals, exactly as Python's '%.Nf'. */
export const toFixed = (x: number, precision: number): string => {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf';
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  // JavaScript's toFixed rounds the exact value too, but ties up; only a near-tie needs the slow path.
  if (Math.abs(x) < 1e21 && precision <= 100) {
    const scaled = Math.abs(x) * 10 ** precision;
    if (Math.abs((scaled % 1) - 0.5) > 1e-7) return sign + Math.abs(x).toFixed(precision);
  }
  const exact = exactDecimal(x);
  const { digits, point } = roundDigits(exact.digits, exact.point, precision);
  let whole: string;
  let frac: string;
  if (point <= 0) {
    whole = '0';
    frac = '0'.repeat(-point) + digits;
  } else {
    whole = digits.slice(0, point).padEnd(point, '0');
    frac = digits.slice(point);
  }
  frac = frac.padEnd(precision, '0').slice(0, precision);
  whole = whole.replace(/^0+(?=\d)/, '');
  return sign + whole + (precision > 0 ? `.${frac}` : '');
};

/** Round to an integer, ties to even. */
const halfEven = (r: number): number => {
  const fl = Math.floor(r);
  const diff = r - fl;
  if (diff > 0.5) return fl + 1;
  if (diff < 0.5) return fl;
  return fl % 2 === 0 ? fl : fl + 1;
};

/** Python's round(x, n) for floats: the nearest double to the half-even decimal rounding. */
export const pyRound = (x: number, precision: number): number => {
  if (!Number.isFinite(x)) return x;
  if (precision > 300) return x;
  if (precision >= 0) return Number(toFixed(x, precision));
  const f = 10 ** -precision;
  return halfEven(x / f) * f;
};

/** Python's '%.Ne': mantissa with `precision` decimals and a 2+ digit exponent. */
const toExponential = (x: number, precision: number, upper = false): string => {
  if (!Number.isFinite(x)) {
    const s = Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf';
    return upper ? s.toUpperCase() : s;
  }
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  let mant: string;
  let exp: number;
  if (x === 0) {
    mant = '0'.repeat(precision + 1);
    exp = 0;
  } else {
    const exact = exactDecimal(x);
    const lead = exact.digits.replace(/^0+/, '');
    const point = exact.point - (exact.digits.length - lead.length);
    const r = roundDigits(lead, 1, precision);
    mant = r.digits.padEnd(precision + 1, '0').slice(0, precision + 1);
    exp = point - 1 + (r.point - 1);
  }
  const m = precision > 0 ? `${mant[0]}.${mant.slice(1)}` : (mant[0] as string);
  const e = `${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return `${sign}${m}${upper ? 'E' : 'e'}${e}`;
};

/** Python's '%g' / '{:g}'. */
const toGeneral = (x: number, precision: number, alt: boolean, upper: boolean): string => {
  if (!Number.isFinite(x)) return toExponential(x, 0, upper);
  const p = precision === 0 ? 1 : precision;
  const e = toExponential(x, p - 1);
  const exp = Number(e.slice(e.indexOf('e') + 1));
  let out: string;
  if (exp >= -4 && exp < p) {
    out = toFixed(x, p - 1 - exp);
    if (!alt && out.includes('.')) out = out.replace(/\.?0+$/, '');
  } else {
    out = e;
    if (!alt) out = out.replace(/\.?0+e/, 'e');
  }
  return upper ? out.toUpperCase() : out;
};

// --- the % operator ---------------------------------------------------------------------------

const SPEC_RE = /%(?:\(([^)]*)\))?([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?[hlL]?([diouxXeEfFgGcrsa%])?/g;

const applyWidth = (state: RenderState, s: string, width: number, left: boolean, zero: boolean): string => {
  const len = chars(s).length;
  if (width <= len) return s;
  state.guardString(width);
  if (left) return s + ' '.repeat(width - len);
  if (zero) {
    const sign = /^[-+ ]/.test(s) ? (s[0] as string) : '';
    const prefix = /^[-+ ]?0[xXob]/.test(s) ? s.slice(0, sign.length + 2) : sign;
    return prefix + '0'.repeat(width - len) + s.slice(prefix.length);
  }
  return ' '.repeat(width - len) + s;
};

const signed = (s: string, negative: boolean, plus: boolean, space: boolean) =>
  negative ? `-${s}` : plus ? `+${s}` : space ? ` ${s}` : s;

/** The int `%d`, `%x` or `%o` prints: exact for ints, truncated for floats. */
const toIntValue = (v: Value, conv: string): number | bigint => {
  if (v instanceof Undefined) return v.fail();
  if (!isNumber(v)) throw typeError(`%${conv} format: a real number is required, not ${typeName(v)}`);
  if (typeof v === 'bigint') return v;
  const n = Math.trunc(num(v));
  if (Number.isNaN(n)) throw valueError('cannot convert float NaN to integer');
  if (!Number.isFinite(n)) throw new PyError('OverflowError', 'cannot convert float infinity to integer');
  return n;
};

/** |n| in base `radix`, every digit exact (a double's integer value is exact too). */
const absDigits = (n: number | bigint | boolean, radix: number): string => {
  if (typeof n === 'boolean') return n ? '1' : '0';
  if (typeof n === 'number' && Number.isSafeInteger(n)) return Math.abs(n).toString(radix);
  const b = BigInt(n);
  return (b < 0n ? -b : b).toString(radix);
};

const isNegative = (n: number | bigint): boolean => n < 0;

const toFloatValue = (v: Value, conv: string): number => {
  if (v instanceof Undefined) return v.fail();
  if (!isNumber(v)) throw typeError(`must be real number, not ${typeName(v)}`);
  void conv;
  return num(v);
};

/** `format % args` (also Jinja2's `format` filter with positional arguments). */
export const percentFormat = (state: RenderState, format: Value, args: Value): Value => {
  const markup = format instanceof Markup;
  const text = str(format);
  const positional = args instanceof PyTuple ? [...args.items] : [args];
  const mapping = args instanceof PyDict ? args : null;
  let next = 0;
  const take = (): Value => {
    if (next >= positional.length) throw typeError('not enough arguments for format string');
    return positional[next++] as Value;
  };
  let usedMapping = false;
  const out = text.replace(
    SPEC_RE,
    (
      whole,
      key: string | undefined,
      flags: string,
      w: string | undefined,
      p: string | undefined,
      conv: string | undefined,
    ) => {
      if (!conv) throw valueError(`unsupported format character at '${whole}'`);
      if (conv === '%' && key === undefined && !flags && !w && !p) return '%';
      const width = w === '*' ? num(take()) : w ? Number(w) : 0;
      const precision = p === '*' ? num(take()) : p !== undefined ? Number(p) : undefined;
      let value: Value;
      if (key !== undefined) {
        if (!mapping) throw typeError('format requires a mapping');
        usedMapping = true;
        const v = mapping.get(key);
        if (v === undefined) throw new PyError('KeyError', repr(key));
        value = v;
      } else {
        value = conv === '%' ? '' : take();
      }
      const left = flags.includes('-');
      const zero = flags.includes('0') && !left;
      const plus = flags.includes('+');
      const space = flags.includes(' ');
      const alt = flags.includes('#');
      let s: string;
      switch (conv) {
        case 's':
          s = markup ? markupEscape(value).s : str(value);
          if (precision !== undefined) s = chars(s).slice(0, precision).join('');
          return applyWidth(state, s, width, left, false);
        case 'r':
        case 'a':
          s = repr(value);
          if (precision !== undefined) s = chars(s).slice(0, precision).join('');
          return applyWidth(state, s, width, left, false);
        case 'c':
          s = isString(value) ? str(value) : String.fromCodePoint(num(value));
          return applyWidth(state, s, width, left, false);
        case '%':
          return '%';
        case 'd':
        case 'i':
        case 'u': {
          const n = toIntValue(value, conv);
          let digits = absDigits(n, 10);
          if (precision !== undefined) digits = digits.padStart(precision, '0');
          return applyWidth(state, signed(digits, isNegative(n), plus, space), width, left, zero);
        }
        case 'x':
        case 'X':
        case 'o': {
          const n = toIntValue(value, conv);
          let digits = absDigits(n, conv === 'o' ? 8 : 16);
          if (conv === 'X') digits = digits.toUpperCase();
          if (alt) digits = (conv === 'o' ? '0o' : conv === 'x' ? '0x' : '0X') + digits;
          return applyWidth(state, signed(digits, isNegative(n), plus, space), width, left, zero);
        }
        default: {
          const x = toFloatValue(value, conv);
          const prec = precision ?? 6;
          state.guardString(prec);
          const abs = Math.abs(x);
          let body: string;
          if (conv === 'f' || conv === 'F') body = toFixed(abs, prec);
          else if (conv === 'e' || conv === 'E') body = toExponential(abs, prec, conv === 'E');
          else body = toGeneral(abs, prec, alt, conv === 'G');
          if (conv === 'F') body = body.toUpperCase();
          const negative = x < 0 || Object.is(x, -0);
          return applyWidth(
            state,
            signed(body, negative, plus, space),
            width,
            left,
            zero && Number.isFinite(x),
          );
        }
      }
    },
  );
  if (!mapping && next < positional.length && !(positional.length === 1 && args instanceof PyDict)) {
    throw typeError('not all arguments converted during string formatting');
  }
  void usedMapping;
  state.guardString(out.length);
  return markup ? new Markup(out) : out;
};

// --- str.format ---------------------------------------------------------------------------------

const FORMAT_SPEC = /^(?:(.)?([<>=^]))?([-+ ])?(z)?(#)?(0)?(\d+)?([,_])?(?:\.(\d+))?([bcdeEfFgGnosxX%])?$/su;

const group = (digits: string, sep: string, size = 3): string => {
  let out = '';
  for (let i = 0; i < digits.length; i++) {
    if (i > 0 && (digits.length - i) % size === 0) out += sep;
    out += digits[i];
  }
  return out;
};

/** format(value, spec): the format-spec mini-language. */
export const formatValue = (state: RenderState, value: Value, spec: string): string => {
  if (value instanceof Undefined) return value.fail();
  const m = FORMAT_SPEC.exec(spec);
  if (!m) throw valueError(`Invalid format specifier '${spec}' for object of type '${typeName(value)}'`);
  const [, fillCh, alignCh, signCh, , altCh, zeroCh, widthText, groupCh, precText, typeCh] = m;
  const width = widthText ? Number(widthText) : 0;
  state.guardString(width);
  const precision = precText !== undefined ? Number(precText) : undefined;
  let fill = fillCh ?? ' ';
  let align = alignCh;
  if (zeroCh && !alignCh) {
    fill = '0';
    align = '=';
  }
  let body: string;
  let sign = '';
  const numeric = isNumber(value) && typeCh !== 's';
  if (!numeric) {
    if (typeCh && typeCh !== 's') {
      throw valueError(`Unknown format code '${typeCh}' for object of type '${typeName(value)}'`);
    }
    body = str(value);
    if (precision !== undefined) body = chars(body).slice(0, precision).join('');
    align = align ?? '<';
  } else {
    const x = num(value);
    const isIntVal = isInt(value);
    const type = typeCh ?? (isIntVal ? 'd' : '');
    const negative = x < 0 || (Object.is(x, -0) && !isIntVal);
    const abs = Math.abs(x);
    const intDigits = (radix: number) => {
      if (!isIntVal) throw valueError(`Unknown format code '${type}' for object of type 'float'`);
      return absDigits(value as number | bigint | boolean, radix);
    };
    sign = negative ? '-' : signCh === '+' ? '+' : signCh === ' ' ? ' ' : '';
    switch (type) {
      case 'd':
      case 'n':
        if (!isIntVal) throw valueError(`Unknown format code 'd' for object of type 'float'`);
        body = intDigits(10);
        break;
      case 'b':
        body = (altCh ? '0b' : '') + intDigits(2);
        break;
      case 'o':
        body = (altCh ? '0o' : '') + intDigits(8);
        break;
      case 'x':
        body = (altCh ? '0x' : '') + intDigits(16);
        break;
      case 'X':
        body = (altCh ? '0X' : '') + intDigits(16).toUpperCase();
        break;
      case 'c':
        body = String.fromCodePoint(abs);
        break;
      case 'f':
      case 'F':
        body = toFixed(abs, precision ?? 6);
        break;
      case 'e':
      case 'E':
        body = toExponential(abs, precision ?? 6, type === 'E');
        break;
      case 'g':
      case 'G':
        body = toGeneral(abs, precision ?? 6, !!altCh, type === 'G');
        break;
      case '%':
        body = `${toFixed(abs * 100, precision ?? 6)}%`;
        break;
      default:
        // No type: ints print as ints; floats as repr, or like 'g' with at least one decimal.
        if (isIntVal) body = intDigits(10);
        else if (precision === undefined) body = floatRepr(abs);
        else {
          // Like 'g', but scientific from exp >= p - 1, and fixed-point keeps a decimal.
          const p = precision === 0 ? 1 : precision;
          const e = toExponential(abs, p - 1);
          const exp = Number(e.slice(e.indexOf('e') + 1));
          if (exp >= -4 && exp < p - 1) {
            body = toFixed(abs, p - 1 - exp);
            if (!altCh && body.includes('.')) body = body.replace(/0+$/, '').replace(/\.$/, '.0');
            if (!body.includes('.')) body += '.0';
          } else {
            body = altCh ? e : e.replace(/\.?0+e/, 'e');
          }
        }
    }
    if (groupCh && /^\d/.test(body)) {
      const [whole, ...rest] = body.split(/(?=[.eE%])/);
      body = group(whole as string, groupCh) + rest.join('');
    }
    align = align ?? '>';
  }
  const len = chars(sign + body).length;
  if (width <= len) return sign + body;
  const padN = width - len;
  switch (align) {
    case '<':
      return sign + body + fill.repeat(padN);
    case '^': {
      const left = Math.floor(padN / 2);
      return fill.repeat(left) + sign + body + fill.repeat(padN - left);
    }
    case '=':
      return sign + fill.repeat(padN) + body;
    default:
      return fill.repeat(padN) + sign + body;
  }
};

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
    if (conversion === 'r' || conversion === 'a') value = repr(value);
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
