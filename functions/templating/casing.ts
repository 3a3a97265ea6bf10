/**
 * Python's case operations on str, with its full and special case mappings. Upper- and lowercasing
 * are JavaScript's own: full mappings like Python's (`ß` → `SS`, `İ` → `i̇`), final sigma included,
 * and with no locale. Titlecase and case folding, which JavaScript lacks, come from tables of
 * CPython's (case-tables.ts); the character properties (cased, case-ignorable, lowercase,
 * uppercase, titlecase) are the Unicode ones CPython's str methods read.
 */
import { CASEFOLD, TITLECASE } from './case-tables.js';

const CASED = /\p{Cased}/u;
const CASE_IGNORABLE = /\p{Case_Ignorable}/u;
const LOWERCASE = /\p{Lowercase}/u;
const UPPERCASE = /\p{Uppercase}/u;
const TITLECASE_LETTER = /\p{Lt}/u;

const upperChar = (ch: string): string => ch.toUpperCase();
const titleChar = (ch: string): string => TITLECASE.get(ch) ?? ch.toUpperCase();

/**
 * The lowercase of chars[i], with Python's Final_Sigma rule for `Σ`: `ς` after a cased character
 * (case-ignorable ones skipped) and not before one, else `σ`.
 */
const lowerAt = (chars: readonly string[], i: number): string => {
  const ch = chars[i] as string;
  if (ch !== 'Σ') return ch.toLowerCase();
  let j = i - 1;
  while (j >= 0 && CASE_IGNORABLE.test(chars[j] as string)) j--;
  if (j < 0 || !CASED.test(chars[j] as string)) return 'σ';
  j = i + 1;
  while (j < chars.length && CASE_IGNORABLE.test(chars[j] as string)) j++;
  return j === chars.length || !CASED.test(chars[j] as string) ? 'ς' : 'σ';
};

export const pyUpper = (s: string): string => s.toUpperCase();
export const pyLower = (s: string): string => s.toLowerCase();

/** str.capitalize(): the first character in titlecase (`ß` → `Ss`, `ǆ` → `ǅ`), the rest lowercase. */
export const pyCapitalize = (s: string): string => {
  const chars = [...s];
  let out = '';
  for (let i = 0; i < chars.length; i++) out += i === 0 ? titleChar(chars[0] as string) : lowerAt(chars, i);
  return out;
};

/** str.title(): a character after a cased one is lowercased, any other titlecased ("They'Re"). */
export const pyTitle = (s: string): string => {
  const chars = [...s];
  let out = '';
  let previousCased = false;
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    out += previousCased ? lowerAt(chars, i) : titleChar(ch);
    previousCased = CASED.test(ch);
  }
  return out;
};

/** str.swapcase(): uppercase characters lowered, lowercase ones uppered, titlecase ones (`ǅ`) kept. */
export const pySwapcase = (s: string): string => {
  const chars = [...s];
  let out = '';
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    out += UPPERCASE.test(ch) ? lowerAt(chars, i) : LOWERCASE.test(ch) ? upperChar(ch) : ch;
  }
  return out;
};

/** str.casefold(): full case folding, character by character (`ß` → `ss`, `ς` → `σ`). */
export const pyCasefold = (s: string): string => {
  let out = '';
  for (const ch of s) out += CASEFOLD.get(ch) ?? ch.toLowerCase();
  return out;
};

/** str.islower(): some cased character, and none uppercase or titlecase. */
export const pyIsLower = (s: string): boolean => {
  let cased = false;
  for (const ch of s) {
    if (UPPERCASE.test(ch) || TITLECASE_LETTER.test(ch)) return false;
    if (LOWERCASE.test(ch)) cased = true;
  }
  return cased;
};

/** str.isupper(): some cased character, and none lowercase or titlecase. */
export const pyIsUpper = (s: string): boolean => {
  let cased = false;
  for (const ch of s) {
    if (LOWERCASE.test(ch) || TITLECASE_LETTER.test(ch)) return false;
    if (UPPERCASE.test(ch)) cased = true;
  }
  return cased;
};

/** str.istitle(): uppercase and titlecase characters only after uncased ones, lowercase only after cased ones. */
export const pyIsTitle = (s: string): boolean => {
  let cased = false;
  let previousCased = false;
  for (const ch of s) {
    if (UPPERCASE.test(ch) || TITLECASE_LETTER.test(ch)) {
      if (previousCased) return false;
      previousCased = true;
      cased = true;
    } else if (LOWERCASE.test(ch)) {
      if (!previousCased) return false;
      previousCased = true;
      cased = true;
    } else {
      previousCased = false;
    }
  }
  return cased;
};
