/**
 * Python's `\N{NAME}` escape: a character by its Unicode name, case-insensitively, as CPython's
 * unicode-escape codec (which Jinja2's lexer decodes string literals with) resolves it. The names
 * are CPython's own (unicode-names-data.ts, written by test/templating/generate-unicode-names.py),
 * read once, on the first escape; CJK unified ideographs and Hangul syllables are named by rule.
 * Name aliases (`NBSP`, `BYTE ORDER MARK`) are not resolved: Python does not list them.
 */
import { inflateRawSync } from 'node:zlib';
import { CJK_UNIFIED_RANGES, NAMES_DEFLATED } from './unicode-names-data.js';

let names: Map<string, number> | undefined;

const HANGUL_L = 'G GG N D DD R M B BB S SS  J JJ C K T P H'.split(' ');
const HANGUL_V = 'A AE YA YAE EO E YEO YE O WA WAE OE YO U WEO WE WI YU EU YI I'.split(' ');
const HANGUL_T = ' G GG GS N NJ NH D L LG LM LB LS LT LP LH M B BS S SS NG J C K T P H'.split(' ');

let hangul: Map<string, number> | undefined;

const load = (): Map<string, number> => {
  const map = new Map<string, number>();
  const text = inflateRawSync(Buffer.from(NAMES_DEFLATED, 'base64')).toString('latin1');
  let cp = 0;
  let from = 0;
  while (from < text.length) {
    let to = text.indexOf('\n', from);
    if (to < 0) to = text.length;
    const at = text.indexOf(' ', from);
    cp += Number.parseInt(text.slice(from, at), 16);
    map.set(text.slice(at + 1, to), cp);
    from = to + 1;
  }
  return map;
};

const loadHangul = (): Map<string, number> => {
  const map = new Map<string, number>();
  let s = 0xac00;
  for (const l of HANGUL_L)
    for (const v of HANGUL_V) for (const t of HANGUL_T) map.set(`HANGUL SYLLABLE ${l}${v}${t}`, s++);
  return map;
};

/** The character named `name`, or undefined when Python knows no such name. */
export const lookupUnicodeName = (name: string): string | undefined => {
  // Python reads the names it computes in capitals only, the others in any case.
  const cjk = /^CJK UNIFIED IDEOGRAPH-([0-9A-F]{4,5})$/.exec(name);
  if (cjk) {
    const code = Number.parseInt(cjk[1] as string, 16);
    return CJK_UNIFIED_RANGES.some(([a, b]) => code >= a && code <= b)
      ? String.fromCodePoint(code)
      : undefined;
  }
  let code: number | undefined;
  if (name.startsWith('HANGUL SYLLABLE ')) {
    hangul ??= loadHangul();
    code = hangul.get(name);
  } else {
    names ??= load();
    code = names.get(name.toUpperCase());
  }
  return code === undefined ? undefined : String.fromCodePoint(code);
};
