/**
 * Template data read from JSON text as JSON means it, straight into the values a template sees:
 * object keys keep the order they were sent in (integer-like keys included, which a JavaScript
 * object would move to the front), `10.0` and `1e3` stay floats, and integers keep every digit.
 *
 * No maintained reader is both lossless and fast. On 1 MiB of invoice-like variables (CPU time,
 * best of 11, a loaded 2-core machine): JSON.parse 5-6 ms, JSON.parse + converting walk 6.5-7 ms,
 * jsonc-parser's visitor about 30 ms, lossless-json about 33 ms (and it reorders integer-like keys),
 * JSON.parse with a source-reading reviver about 45 ms. JSON.parse loses exactly three things: the
 * place of an integer-like key, the float-ness of an integral float (`10.0`, `1e3`) and the digits of
 * an integer beyond 2^53. One pass over the text finds each (numbersToKeep, INDEX_KEY_TEXT_TEST), so:
 * - nothing found (the common case): JSON.parse (or the caller's), then a walk that converts it;
 * - otherwise each such key and number is marked in the text (a key as `"\u0001<digits>"`, a number
 *   as the string `"\u0002<number>"`), the marked text is parsed once, and the walk takes the marks
 *   off: still one JSON.parse, but marking thousands of spans and the walk that reads each back cost
 *   about 30-45 ms CPU per MiB of such values (test/bench/template-data.ts);
 * - the text already holds a mark's escape: jsonc-parser's visitor, which reports every key in order
 *   and every number with its text.
 */
// The ES module build: its UMD main (what a CommonJS bundle would pick) requires its parts at
// run time by computed paths, which a bundle cannot carry (the renderer's worker is CommonJS).
import { visit } from 'jsonc-parser/lib/esm/main.js';
import { normInt, PyDict, PyFloat, type Value } from './values.js';

/** The most objects and arrays nested in one another that template data may have. */
export const MAX_TEMPLATE_DATA_DEPTH = 64;

/** Why a text is not template data: not JSON, not an object, or nested too deeply. */
export class TemplateDataError extends Error {
  constructor(
    message: string,
    readonly reason: 'json' | 'object' | 'depth',
  ) {
    super(message);
    this.name = 'TemplateDataError';
  }
}

/** Template variables as JSON sent them; renderTemplate takes them as they are. */
export type TemplateData = PyDict & { readonly __templateData: true };

/** An array index, which a JavaScript object orders before every other key. */
const INDEX_KEY = /^(?:0|[1-9][0-9]*)$/;

/** Why the first reading could not keep what the text says. */
class NeedsSource extends Error {
  constructor(readonly reason: 'key' | 'number') {
    super(reason);
  }
}

/** An object key of digits only (`,"2024":`): it cannot be inside a string, where quotes are escaped. */
const INDEX_KEY_TEXT = /([{,]\s*)"((?:0|[1-9][0-9]*))"(\s*:)/g;
const INDEX_KEY_TEXT_TEST = /[{,]\s*"(?:0|[1-9][0-9]*)"\s*:/;
/**
 * Marks such a key, as the JSON escape of U+0001, so that JSON.parse keeps it in place (and the walk
 * takes the mark off). Not used when the text has that escape already: the key could be real.
 */
const KEY_MARK = '\\u0001';
/** Marks a number JSON.parse would change, written as a string `"\u0002<number>"` (the walk reads it back). */
const NUMBER_MARK = '\\u0002';
/**
 * Where a number that JSON.parse would change may be: a fraction of zeros only (`10.0`), an
 * exponent (`1e3`), or 16 digits in a row (2^53 has 16). Inside strings too: each hit is checked.
 */
const NUMBER_HINT = /[0-9]\.0+(?![0-9])|[0-9][eE]|[0-9]{16}/g;
const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

const isNumberChar = (c: number) =>
  (c >= 48 && c <= 57) || c === 46 || c === 43 || c === 45 || c === 101 || c === 69;
const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;

/**
 * The spans [start, end) of the numbers of `text` (valid JSON) that JSON.parse would read
 * differently: integral floats and integers beyond 2^53. One regular-expression pass finds where
 * they may be; whether a hit is inside a string is told by the quotes before it, counted once.
 */
const numbersToKeep = (text: string): number[] => {
  const spans: number[] = [];
  let quotesTo = 0;
  let inString = false;
  NUMBER_HINT.lastIndex = 0;
  for (let hit = NUMBER_HINT.exec(text); hit; hit = NUMBER_HINT.exec(text)) {
    let start = hit.index;
    while (start > 0 && isNumberChar(text.charCodeAt(start - 1))) start--;
    let end = hit.index;
    while (end < text.length && isNumberChar(text.charCodeAt(end))) end++;
    NUMBER_HINT.lastIndex = end;
    let before = start - 1;
    while (before >= 0 && isSpace(text.charCodeAt(before))) before--;
    const b = text.charCodeAt(before);
    if (b !== 58 && b !== 44 && b !== 91) continue; // : , [
    for (let q = text.indexOf('"', quotesTo); q !== -1 && q < start; q = text.indexOf('"', q + 1)) {
      let slashes = 0;
      while (text.charCodeAt(q - 1 - slashes) === 92) slashes++;
      if (slashes % 2 === 0) inString = !inString;
      quotesTo = q + 1;
    }
    if (inString) continue;
    const token = text.slice(start, end);
    if (!JSON_NUMBER.test(token)) continue;
    const n = Number(token);
    // An integral float (`10.0`, `-0.0`, which JSON.parse makes -0, an int to JSON.stringify) or
    // one beyond the doubles (`1e400`, Python's inf, JSON.stringify's null); a long int.
    if (/[.eE]/.test(token) ? Number.isInteger(n) || !Number.isFinite(n) : !Number.isSafeInteger(n))
      spans.push(start, end);
  }
  return spans;
};

/** `text` with each of `spans` written as a marked string, and each integer-like key marked. */
const marked = (text: string, spans: readonly number[], keys: boolean): string => {
  let out = text;
  if (spans.length > 0) {
    const parts: string[] = [];
    let from = 0;
    for (let i = 0; i < spans.length; i += 2) {
      const start = spans[i] as number;
      const end = spans[i + 1] as number;
      parts.push(text.slice(from, start), `"${NUMBER_MARK}`, text.slice(start, end), '"');
      from = end;
    }
    parts.push(text.slice(from));
    out = parts.join('');
  }
  return keys ? out.replace(INDEX_KEY_TEXT, `$1"${KEY_MARK}$2"$3`) : out;
};

const tooDeep = (max: number) =>
  new TemplateDataError(`must not nest objects and arrays more than ${max} levels deep`, 'depth');

/** A JSON number's text as Python's json module reads it: int when it has no fraction or exponent. */
const numberOf = (text: string): Value => {
  if (/[.eE]/.test(text)) return new PyFloat(Number(text));
  const n = Number(text);
  if (Number.isSafeInteger(n)) return n === 0 ? 0 : n;
  return normInt(BigInt(text));
};

/**
 * What JSON.parse made of the text, as template data. `own`: the parse is this reader's own, so its
 * arrays are converted in place rather than copied (a caller's parsed body is left as it was).
 * `marked`: the text was marked (numbersToKeep, INDEX_KEY_TEXT), and the marks are taken off.
 */
const fromParsed = (value: unknown, depth: number, max: number, marked: boolean, own: boolean): Value => {
  if (typeof value !== 'object') {
    if (typeof value === 'number') {
      if (Number.isSafeInteger(value)) return value === 0 ? 0 : value;
      if (Number.isInteger(value)) throw new NeedsSource('number');
      return new PyFloat(value);
    }
    if (marked && typeof value === 'string' && value.charCodeAt(0) === 2) return numberOf(value.slice(1));
    return value as Value;
  }
  if (value === null) return null;
  if (depth > max) throw tooDeep(max);
  if (Array.isArray(value)) {
    const list: Value[] = own ? value : new Array(value.length);
    for (let i = 0; i < value.length; i++) list[i] = fromParsed(value[i], depth + 1, max, marked, own);
    return list;
  }
  const d = new PyDict();
  let first = true;
  // JSON.parse's objects have their own keys only, each once.
  for (const key in value) {
    if (first) {
      if (INDEX_KEY.test(key)) throw new NeedsSource('key');
      first = false;
    }
    const v = fromParsed((value as Record<string, unknown>)[key], depth + 1, max, marked, own);
    if (!marked) d.addNew(key, v);
    else {
      const mark = key.charCodeAt(0);
      // A marked number is a string where a number was: valid JSON unless it was a key.
      if (mark === 2) throw new TemplateDataError('a number is not a key', 'json');
      d.addNew(mark === 1 ? key.slice(1) : key, v);
    }
  }
  return d;
};

/** Every key in order and every number from its text; `text` is already known to be valid JSON. */
const fromSource = (text: string, max: number): Value => {
  const containers: (Value[] | PyDict)[] = [];
  const keys: string[] = [];
  let key = '';
  let root: Value = null;
  const put = (v: Value) => {
    const top = containers[containers.length - 1];
    if (!top) root = v;
    else if (Array.isArray(top)) top.push(v);
    else top.set(key, v);
  };
  const open = (c: Value[] | PyDict) => {
    put(c);
    if (containers.length >= max) throw tooDeep(max);
    containers.push(c);
    keys.push(key);
  };
  const close = () => {
    containers.pop();
    key = keys.pop() ?? '';
  };
  visit(
    text,
    {
      onObjectBegin: () => open(new PyDict()),
      onObjectEnd: close,
      onArrayBegin: () => open([]),
      onArrayEnd: close,
      onObjectProperty: (property) => {
        key = property;
      },
      onLiteralValue: (value: unknown, offset, length) => {
        put(typeof value === 'number' ? numberOf(text.slice(offset, offset + length)) : (value as Value));
      },
    },
    { disallowComments: true, allowTrailingComma: false },
  );
  return root;
};

interface ReadOptions {
  /** @default MAX_TEMPLATE_DATA_DEPTH */
  readonly maxDepth?: number;
  /**
   * What JSON.parse made of `text`, when the caller has it already (the API parses each body once):
   * read from it when it lost nothing, so the text is not parsed a second time.
   */
  readonly parsed?: unknown;
}

/** The scan finds every number and key JSON.parse would change; should one slip past it, the source reader reads all. */
const orFromSource = (read: () => Value, fromSource_: () => Value): Value => {
  try {
    return read();
  } catch (e) {
    if (!(e instanceof NeedsSource)) throw e;
    return fromSource_();
  }
};

/**
 * Reads `text`, a JSON object, as template data. With `member`, reads that member of the object
 * instead (`variables` of a whole request body); undefined when it is absent or null.
 * Throws TemplateDataError.
 */
export function parseTemplateData(text: string): TemplateData;
export function parseTemplateData(
  text: string,
  options: { member: string } & ReadOptions,
): TemplateData | undefined;
export function parseTemplateData(text: string, options: ReadOptions): TemplateData;
export function parseTemplateData(
  text: string,
  options: { member?: string } & ReadOptions = {},
): TemplateData | undefined {
  const max = options.maxDepth ?? MAX_TEMPLATE_DATA_DEPTH;
  const member = options.member;
  const json = (read: () => unknown): unknown => {
    try {
      return read();
    } catch (e) {
      throw new TemplateDataError(e instanceof Error ? e.message : 'not valid JSON', 'json');
    }
  };
  /** The object to read: the text's, or its member's (absent or null: undefined). */
  const objectOf = (root: unknown): object | undefined => {
    let v = root;
    if (member !== undefined) {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) {
        throw new TemplateDataError('must be a JSON object', 'object');
      }
      v = Object.hasOwn(v, member) ? (v as Record<string, unknown>)[member] : null;
      if (v === null) return undefined;
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      throw new TemplateDataError('must be a JSON object', 'object');
    }
    return v;
  };
  const spans = numbersToKeep(text);
  const keys = INDEX_KEY_TEXT_TEST.test(text);
  // A real string or key could start with a mark: then only the source reader is sure.
  const markable = !text.includes(KEY_MARK) && !text.includes(NUMBER_MARK);
  const fromSourceOf = (): Value => {
    const all = fromSource(text, member === undefined ? max : max + 1);
    return member === undefined ? all : ((all as PyDict).get(member) as Value);
  };
  let value: Value;
  if (spans.length === 0 && !keys) {
    const own = options.parsed === undefined;
    const object = objectOf(own ? json(() => JSON.parse(text)) : options.parsed);
    if (object === undefined) return undefined;
    value = orFromSource(() => fromParsed(object, 1, max, false, own), fromSourceOf);
  } else if (markable) {
    // One JSON.parse, of the marked text (which is valid exactly when the text is: see fromParsed).
    const object = objectOf(json(() => JSON.parse(marked(text, spans, keys))));
    if (object === undefined) return undefined;
    value = orFromSource(() => fromParsed(object, 1, max, true, true), fromSourceOf);
  } else {
    if (
      objectOf(options.parsed !== undefined ? options.parsed : json(() => JSON.parse(text))) === undefined
    ) {
      return undefined;
    }
    value = fromSourceOf();
  }
  return value as TemplateData;
}

/**
 * Template data on its way to the process that renders it: what the API needs of `variables` (the
 * text to send, the names they define) without reading them into a template's values, which only
 * the renderer does (parseTemplateData, from `text`).
 */
export interface TemplateDataText {
  /** JSON text that parseTemplateData reads back to the data as sent. */
  readonly text: string;
  /** Whether the data defines this top-level name. */
  has(name: string): boolean;
  /** The data read whole, when JSON.parse would have changed it (key order, numbers); else absent. */
  readonly changed?: TemplateData;
}

/**
 * `text` (or its member) as TemplateDataText. When the text holds nothing JSON.parse changes (the
 * common case, found by one scan), the object JSON.parse made (the caller's, or this reader's) is
 * written back as it is: reading and writing a 1 MiB `variables` as template data would cost the
 * API three walks more than it needs. Otherwise it is read whole (parseTemplateData) and written by
 * stringifyTemplateData. The depth limit is checked either way. Throws TemplateDataError.
 */
export function readTemplateDataText(text: string): TemplateDataText;
export function readTemplateDataText(
  text: string,
  options: { member: string } & ReadOptions,
): TemplateDataText | undefined;
export function readTemplateDataText(
  text: string,
  options: { member?: string } & ReadOptions = {},
): TemplateDataText | undefined {
  if (numbersToKeep(text).length > 0 || INDEX_KEY_TEXT_TEST.test(text)) {
    const data = parseTemplateData(text, options as { member: string } & ReadOptions);
    if (data === undefined) return undefined;
    return { text: stringifyTemplateData(data), has: (name) => data.has(name), changed: data };
  }
  let root: unknown = options.parsed;
  if (root === undefined) {
    try {
      root = JSON.parse(text);
    } catch (e) {
      throw new TemplateDataError(e instanceof Error ? e.message : 'not valid JSON', 'json');
    }
  }
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(root)) throw new TemplateDataError('must be a JSON object', 'object');
  const member = options.member;
  const value = member === undefined ? root : Object.hasOwn(root, member) ? root[member] : null;
  if (value === null && member !== undefined) return undefined;
  if (!isObject(value)) throw new TemplateDataError('must be a JSON object', 'object');
  const max = options.maxDepth ?? MAX_TEMPLATE_DATA_DEPTH;
  if (!withinDepth(value, max)) throw tooDeep(max);
  return { text: JSON.stringify(value), has: (name) => Object.hasOwn(value, name) };
}

/** Whether `value` nests objects and arrays at most `max` levels deep; iterative, so any depth is safe to ask. */
const withinDepth = (value: object, max: number): boolean => {
  const stack: [unknown, number][] = [[value, 1]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [v, depth] = next;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return false;
    if (Array.isArray(v)) for (const child of v) stack.push([child, depth + 1]);
    else for (const key in v) stack.push([(v as Record<string, unknown>)[key], depth + 1]);
  }
  return true;
};

const jsonString = (s: string) => JSON.stringify(s);

/**
 * JSON text that parseTemplateData reads back to the same data (key order, floats, big ints): for
 * handing template data to another process, which JSON.stringify of a JavaScript object cannot do.
 * With `sortKeys`, every object's keys in code-unit order instead (a text that does not depend on
 * the order keys were sent in).
 */
export const stringifyTemplateData = (data: TemplateData, options: { sortKeys?: boolean } = {}): string => {
  const sortKeys = options.sortKeys === true;
  // Appended to one string (V8 joins the pieces once, when the text is read): about 8 times faster
  // on 1 MiB than an array of parts and a closure per item.
  const write = (v: Value): string => {
    switch (typeof v) {
      case 'string':
        return jsonString(v);
      case 'number':
      case 'bigint':
      case 'boolean':
        return String(v);
      default:
        break;
    }
    if (v === null) return 'null';
    if (v instanceof PyFloat) {
      const x = v.v;
      if (!Number.isFinite(x)) return x > 0 ? '1e999' : x < 0 ? '-1e999' : 'null';
      // String(-0) is "0": a negative zero keeps its sign, as Python's float keeps it.
      const s = Object.is(x, -0) ? '-0' : String(x);
      return Number.isInteger(x) && !s.includes('e') ? `${s}.0` : s;
    }
    if (Array.isArray(v)) {
      let out = '[';
      for (let i = 0; i < v.length; i++) out += (i ? ',' : '') + write(v[i] as Value);
      return `${out}]`;
    }
    if (v instanceof PyDict) {
      const entries = v.entries();
      if (sortKeys) entries.sort(([a], [b]) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0));
      let out = '{';
      for (let i = 0; i < entries.length; i++) {
        const [k, item] = entries[i] as [Value, Value];
        out += `${i ? ',' : ''}${jsonString(String(k))}:${write(item)}`;
      }
      return `${out}}`;
    }
    return 'null';
  };
  return write(data);
};

/**
 * Whether JSON.parse would have read a number of `data` differently: an integral float (`10.0`,
 * `1e3`, `-0.0`), a float beyond the doubles (`1e400`) or an integer beyond 2^53.
 */
export const hasNumbersJsonParseChanges = (data: TemplateData): boolean => {
  const changed = (v: Value): boolean => {
    if (typeof v === 'bigint') return true;
    if (v instanceof PyFloat) return Number.isInteger(v.v) || !Number.isFinite(v.v);
    if (Array.isArray(v)) return v.some(changed);
    if (v instanceof PyDict) return v.values().some(changed);
    return false;
  };
  return changed(data);
};
