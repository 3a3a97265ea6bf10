/** CPython's str algorithms the str methods and the string filters share (Objects/unicodeobject.c). */
import { decodeHTML } from 'entities';
import { chars } from './protocols.js';
import type { RenderState } from './runtime.js';
import { seqIndex } from './slices.js';
import { num, str, typeError, type Value, valueError } from './values.js';

export const stripChars = (s: string, chs: Value, left: boolean, right: boolean): string => {
  if (chs === null || chs === undefined) {
    let out = s;
    if (left) out = out.replace(/^[\s\u0085]+/, '');
    if (right) out = out.replace(/[\s\u0085]+$/, '');
    return out;
  }
  const set = new Set(chars(str(chs)));
  const cs = chars(s);
  let a = 0;
  let b = cs.length;
  if (left) while (a < b && set.has(cs[a] as string)) a++;
  if (right) while (b > a && set.has(cs[b - 1] as string)) b--;
  return cs.slice(a, b).join('');
};

const splitWhitespace = (s: string, max: number, fromRight: boolean): string[] => {
  const words = s.split(/[\s\u0085]+/).filter(Boolean);
  if (max < 0) return words;
  if (!fromRight) {
    // The rest keeps its inner whitespace.
    const out: string[] = [];
    let rest = s.replace(/^\s+/, '');
    for (let i = 0; i < max; i++) {
      const m = /^(\S+)\s+/.exec(rest);
      if (!m) break;
      out.push(m[1] as string);
      rest = rest.slice(m[0].length);
    }
    if (rest) out.push(rest);
    return out;
  }
  const out: string[] = [];
  let rest = s.replace(/\s+$/, '');
  for (let i = 0; i < max; i++) {
    const m = /\s+(\S+)$/.exec(rest);
    if (!m) break;
    out.unshift(m[1] as string);
    rest = rest.slice(0, rest.length - m[0].length);
  }
  if (rest) out.unshift(rest);
  return out;
};

export const split = (s: string, sep: Value, maxsplit: Value, fromRight: boolean): string[] => {
  const max = num(maxsplit ?? -1);
  if (sep === null) return splitWhitespace(s, max, fromRight);
  const d = str(sep);
  if (!d) throw valueError('empty separator');
  const parts = s.split(d);
  if (max < 0 || parts.length <= max + 1) return parts;
  if (!fromRight) return [...parts.slice(0, max), parts.slice(max).join(d)];
  return [parts.slice(0, parts.length - max).join(d), ...parts.slice(parts.length - max)];
};

export { pyCapitalize, pyIsTitle as isTitle, pyTitle } from './casing.js';

/** Python's str.expandtabs(): each tab up to the next multiple of tabsize, columns restart at \n and \r. */
export const expandTabs = (state: RenderState, s: string, tabsize: number): string => {
  if (!s.includes('\t')) return s;
  let out = '';
  let column = 0;
  for (const ch of s) {
    if (ch === '\t') {
      if (tabsize > 0) {
        const n = tabsize - (column % tabsize);
        state.guardString(out.length + n);
        out += ' '.repeat(n);
        column += n;
      }
    } else {
      out += ch;
      column = ch === '\n' || ch === '\r' ? 0 : column + 1;
    }
  }
  return out;
};

export const pad = (
  state: RenderState,
  s: string,
  width: Value,
  fill: Value,
  where: 'left' | 'right' | 'center',
): string => {
  const w = num(width);
  const f = fill === null || fill === undefined ? ' ' : str(fill);
  if (chars(f).length !== 1) throw typeError('The fill character must be exactly one character long');
  const len = chars(s).length;
  if (w <= len) return s;
  state.guardString(w);
  const total = w - len;
  if (where === 'right') return s + f.repeat(total);
  if (where === 'left') return f.repeat(total) + s;
  // CPython: left = total/2 + (total & width & 1)
  const left = Math.floor(total / 2) + (total & w & 1);
  return f.repeat(left) + s + f.repeat(total - left);
};

export const find = (s: string, sub: Value, start: Value, end: Value, fromRight: boolean): number => {
  const cs = chars(s);
  const a = start === null || start === undefined ? 0 : Math.max(0, seqIndex(start, cs.length));
  const b = end === null || end === undefined ? cs.length : Math.min(cs.length, seqIndex(end, cs.length));
  const hay = cs.slice(a, b).join('');
  const needle = str(sub);
  const at = fromRight ? hay.lastIndexOf(needle) : hay.indexOf(needle);
  if (at < 0 || a > b) return -1;
  return a + chars(hay.slice(0, at)).length;
};

/** Python's str.splitlines(). */
export const pySplitlines = (text: string, keepends: boolean): string[] => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: Python's line boundaries include them
  const parts = text.split(/(\r\n|[\n\r\v\f\u001c-\u001e\u0085\u2028\u2029])/);
  const out: string[] = [];
  for (let i = 0; i < parts.length; i += 2) {
    const line = parts[i] as string;
    if (i === parts.length - 1 && line === '') break;
    out.push(keepends ? line + (parts[i + 1] ?? '') : line);
  }
  return out;
};

export const pyReplace = (state: RenderState, s: string, old: string, rep: string, count: number): string => {
  const max = count < 0 ? Number.POSITIVE_INFINITY : count;
  if (old === '') {
    const cs = chars(s);
    state.guardString(s.length + rep.length * (cs.length + 1));
    let out = '';
    let n = 0;
    for (let i = 0; i <= cs.length; i++) {
      if (n < max) {
        out += rep;
        n++;
      }
      if (i < cs.length) out += cs[i];
    }
    return out;
  }
  const parts = s.split(old);
  const occurrences = Math.min(parts.length - 1, max);
  state.guardString(s.length + (rep.length - old.length) * occurrences);
  if (occurrences === parts.length - 1) return parts.join(rep);
  return parts.slice(0, occurrences + 1).join(rep) + old + parts.slice(occurrences + 1).join(old);
};

/** Python's html.unescape (markupsafe's unescape): every HTML5 named and numeric reference, as a browser reads text. */
export const unescapeHtml = (s: string): string => (s.includes('&') ? decodeHTML(s) : s);

/** What Python's str.split() and str.isspace() count as whitespace. */
export const PY_WHITESPACE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: Python's whitespace includes \x1c-\x1f
  /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

/** markupsafe 3's striptags: drop comments, then tags, collapse whitespace, then unescape. */
export const striptagsOf = (s: string): string =>
  unescapeHtml(
    s
      .replace(/<!--[\s\S]*?-->/g, '')
      .replace(/<[^>]*>/g, '')
      .split(PY_WHITESPACE)
      .filter(Boolean)
      .join(' '),
  );

/** Python's len() of a string: code points. */
export const cpLength = (s: string): number => {
  if (!/[\ud800-\udbff]/.test(s)) return s.length;
  return chars(s).length;
};
