/**
 * Python's number and string formatting: the `%` operator (and Jinja2's `format` filter), and the
 * decimal conversions str.format's format specs use (format-spec.ts). Decimal rounding is exact and half-even on
 * the double's true value, as CPython's is (`'%.2f' % 0.125` is `0.12`, `round(2.5)` is `2.0`).
 * Field lookups in format strings go through the template's own member access, never the host's,
 * and every width is bounded by the render's string limit.
 */
import { chars } from './protocols.js';
import type { RenderState } from './runtime.js';
import {
  isNumber,
  isString,
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
export const toExponential = (x: number, precision: number, upper = false): string => {
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
export const toGeneral = (x: number, precision: number, alt: boolean, upper: boolean): string => {
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
    // Trailing zeros of the mantissa's fraction, then its point (`1.50e+07` → `1.5e+07`).
    if (!alt) out = out.replace(/\.(\d*?)0*(?=e)/, (_, kept: string) => (kept ? `.${kept}` : ''));
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
export const absDigits = (n: number | bigint | boolean, radix: number): string => {
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
