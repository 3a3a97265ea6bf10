/** Python's int and float arithmetic: ints exact at any size (within a bound), floor division and modulo toward -∞. */
import { bitLength, LimitError, normInt } from './values.js';

/**
 * The largest int a template may build, in bits: about 30,000 digits (Python has no limit; a
 * service must, and Python 3.11 prints no int of more than 4,300 digits anyway).
 */
const MAX_INT_BITS = 100_000;

export const bigOf = (v: number | bigint | boolean): bigint =>
  typeof v === 'bigint' ? v : BigInt(typeof v === 'boolean' ? (v ? 1 : 0) : v);

const guardBits = (bits: number): void => {
  if (bits > MAX_INT_BITS)
    throw new LimitError(`Template builds an integer of over ${MAX_INT_BITS} bits; that is the limit`);
};

type IntOp = '+' | '-' | '*' | '//' | '%' | '**';

/**
 * `a op b` on ints, exact as Python's (floor division and modulo round toward -∞); b ≠ 0 for //
 * and %, b ≥ 0 for **. Work on bigints is counted on `state`'s step counter, by size.
 */
export const intArith = (
  op: IntOp,
  a: number | bigint | boolean,
  b: number | bigint | boolean,
  state?: { tick(n?: number): void },
): number | bigint => {
  if (typeof a !== 'bigint' && typeof b !== 'bigint' && op !== '**') {
    const x = +a;
    const y = +b;
    if (Number.isSafeInteger(x) && Number.isSafeInteger(y)) {
      let r: number;
      if (op === '+') r = x + y;
      else if (op === '-') r = x - y;
      else if (op === '*') r = x * y;
      else if (op === '//') r = Math.floor(x / y);
      else r = x - Math.floor(x / y) * y;
      if (Number.isSafeInteger(r)) return r === 0 ? 0 : r;
    }
  }
  const x = bigOf(a);
  const y = bigOf(b);
  state?.tick(1 + Math.ceil((bitLength(x) + (op === '**' ? 0 : bitLength(y))) / 4096));
  let r: bigint;
  switch (op) {
    case '+':
      r = x + y;
      break;
    case '-':
      r = x - y;
      break;
    case '*':
      guardBits(bitLength(x) + bitLength(y));
      r = x * y;
      break;
    case '//':
      r = x / y;
      if (x % y !== 0n && x < 0n !== y < 0n) r -= 1n;
      break;
    case '%':
      r = x % y;
      if (r !== 0n && r < 0n !== y < 0n) r += y;
      break;
    case '**':
      if (x === 0n || x === 1n || y === 0n) r = y === 0n ? 1n : x;
      else if (x === -1n) r = y % 2n === 0n ? 1n : -1n;
      else {
        const bits = bitLength(x);
        guardBits(Number(y) * (bits <= 53 ? Math.log2(Math.abs(Number(x))) : bits));
        r = x ** y;
      }
      break;
  }
  return normInt(r);
};

/** -n for an int. */
export const intNeg = (v: number | bigint | boolean): number | bigint =>
  typeof v === 'bigint' ? normInt(-v) : 0 - +v;

/** Python's float `%`: C's fmod (JavaScript's `%`), with the sign of the divisor. */
export const floatMod = (x: number, y: number): number => {
  let m = x % y;
  if (m !== 0) {
    if (y < 0 !== m < 0) m += y;
  } else {
    m = y < 0 ? -0 : 0;
  }
  return m;
};

/** Python's float `//` (float_floor_div in CPython). */
export const floatFloorDiv = (x: number, y: number): number => {
  let mod = x % y;
  let div = (x - mod) / y;
  if (mod && y < 0 !== mod < 0) {
    mod += y;
    div -= 1;
  }
  if (div) {
    const floor = Math.floor(div);
    return div - floor > 0.5 ? floor + 1 : floor;
  }
  const q = x / y;
  return q < 0 || Object.is(q, -0) ? -0 : 0;
};
