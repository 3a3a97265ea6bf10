import { chars } from '../protocols.js';
import type { RenderState } from '../runtime.js';
import { cpLength } from '../str-functions.js';
import { valueError } from '../values.js';

// textwrap's chunking (Lib/textwrap.py): only ASCII whitespace separates words; \w is Unicode's.
const TW_WS = '[\\t\\n\\x0b\\x0c\\r ]';
const TW_NWS = '[^\\t\\n\\x0b\\x0c\\r ]';
const TW_WORD = '[\\p{L}\\p{N}_]';
const TW_PUNCT = '[\\p{L}\\p{N}_!"\'&.,?]';
const TW_LETTER = '[\\p{L}\\p{Nl}\\p{No}_]';
/** textwrap.TextWrapper.wordsep_re: whitespace, em-dashes, words split after their hyphens. */
const WORDSEP_RE = new RegExp(
  `(${TW_WS}+|(?<=${TW_PUNCT})-{2,}(?=${TW_WORD})|${TW_NWS}+?(?:-(?:(?<=${TW_LETTER}{2}-)|(?<=${TW_LETTER}-${TW_LETTER}-))(?=${TW_LETTER}-?${TW_LETTER})|(?=${TW_WS}|$)|(?<=${TW_PUNCT})(?=-{2,}${TW_WORD})))`,
  'u',
);
const WORDSEP_SIMPLE_RE = new RegExp(`(${TW_WS}+)`);
/** What str.strip() removes: a chunk of only these is whitespace to textwrap. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: Python's whitespace includes \x1c-\x1f
const PY_SPACE_ONLY = /^[\s\u0085\u001c-\u001f]*$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: as above
const PY_SPACE = /^[\s\u0085\u001c-\u001f]$/;

interface WrapChunk {
  text: string;
  /** Code points left. */
  len: number;
  /** Whether what is left is whitespace only (str.strip() leaves nothing). */
  space: boolean;
  /** The code points, once the chunk is being cut (a long word), and how many are used up. */
  cps?: string[];
  off: number;
  /** Index of its last code point that is not whitespace. */
  lastNonSpace: number;
}

/**
 * Python's textwrap.wrap(expand_tabs=False, replace_whitespace=False) for one line. Linear: a long
 * word is cut from its code points by an offset, not by copying what is left of it each time.
 */
export const textwrap = (
  state: RenderState,
  text: string,
  width: number,
  breakLong: boolean,
  onHyphens: boolean,
): string[] => {
  if (width <= 0) throw valueError(`invalid width ${width} (must be > 0)`);
  const stack: WrapChunk[] = text
    .split(onHyphens ? WORDSEP_RE : WORDSEP_SIMPLE_RE)
    .filter(Boolean)
    .map((t) => ({ text: t, len: cpLength(t), space: PY_SPACE_ONLY.test(t), off: 0, lastNonSpace: -1 }))
    .reverse();
  const top = () => stack[stack.length - 1] as WrapChunk;
  const textOf = (c: WrapChunk) => (c.cps ? c.cps.slice(c.off).join('') : c.text);
  const lines: string[] = [];
  while (stack.length) {
    state.tick();
    const cur: string[] = [];
    let curLen = 0;
    let lastIsSpace = false;
    if (lines.length && top().space) stack.pop();
    while (stack.length) {
      const c = top();
      if (curLen + c.len > width) break;
      cur.push(textOf(c));
      lastIsSpace = c.space;
      curLen += c.len;
      stack.pop();
    }
    if (stack.length && top().len > width) {
      // textwrap's _handle_long_word
      const spaceLeft = width < 1 ? 1 : width - curLen;
      if (breakLong) {
        const c = top();
        if (!c.cps) {
          c.cps = chars(c.text);
          let i = c.cps.length - 1;
          while (i >= 0 && PY_SPACE.test(c.cps[i] as string)) i--;
          c.lastNonSpace = i;
        }
        let end = spaceLeft;
        if (onHyphens && c.len > spaceLeft) {
          // Break after the last hyphen in reach, if something other than hyphens precedes it.
          let hyphen = -1;
          for (let i = Math.min(spaceLeft, c.len) - 1; i > 0; i--) {
            if (c.cps[c.off + i] === '-') {
              hyphen = i;
              break;
            }
          }
          if (hyphen > 0) {
            for (let i = 0; i < hyphen; i++) {
              if (c.cps[c.off + i] !== '-') {
                end = hyphen + 1;
                break;
              }
            }
          }
        }
        const taken = Math.min(end, c.len);
        const piece = c.cps.slice(c.off, c.off + taken).join('');
        cur.push(piece);
        lastIsSpace = PY_SPACE_ONLY.test(piece);
        c.off += taken;
        c.len -= taken;
        c.space = c.off > c.lastNonSpace;
        if (c.len === 0) stack.pop();
      } else if (!cur.length) {
        const c = stack.pop() as WrapChunk;
        cur.push(textOf(c));
        lastIsSpace = c.space;
      }
    }
    if (cur.length && lastIsSpace) cur.pop();
    if (cur.length) lines.push(cur.join(''));
  }
  return lines;
};
