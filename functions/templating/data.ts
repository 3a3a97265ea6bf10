/**
 * Template data read from JSON text as JSON means it, straight into the values a template sees:
 * object keys keep the order they were sent in (integer-like keys included, which a JavaScript
 * object would move to the front), `10.0` and `1e3` stay floats, and integers keep every digit.
 *
 * No maintained reader is both lossless and fast. On 1 MiB of invoice-like variables (CPU time,
 * best of 11, a loaded 2-core machine): JSON.parse 5-6 ms, JSON.parse + converting walk 6.5-7 ms,
 * jsonc-parser's visitor about 30 ms, lossless-json about 33 ms (and it reorders integer-like keys),
 * JSON.parse with a source-reading reviver about 45 ms. So, three paths:
 * - JSON.parse, then a walk that converts its result (1 MiB: about 2 ms over JSON.parse). JSON.parse
 *   loses exactly three things, and the walk or one scan of the text notices each: an integer-like
 *   key (it comes first in Object.keys), an integer beyond 2^53 (no longer a safe integer), and a
 *   float that is integral (`10.0`, `1e3`: the scan looks for a number with `.0` or an exponent).
 * - Integer-like keys only: each is marked in the text (it cannot occur inside a string) so that
 *   JSON.parse keeps its place, then parsed and walked again (1 MiB: about 20 ms over JSON.parse).
 * - Otherwise jsonc-parser's visitor, which reports every key in order and every number with its
 *   text (1 MiB: about 25-40 ms over JSON.parse).
 */
import { visit } from 'jsonc-parser';
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

/**
 * A number with only zeros after its point, or with an exponent: JSON.parse may make an int of it.
 * Looks like a JSON number (after `:`, `,`, `[` or space, before `,`, `}`, `]` or space), so CSS
 * such as `1.0em` or `#2e3a4b` in a request's HTML does not count; inside a string it may still.
 */
const INTEGRAL_FLOAT_HINT = /[:,[\s-][0-9]+(?:\.0+|(?:\.[0-9]+)?[eE][+-]?[0-9]+)[\s,}\]]/;
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
/**
 * Marks such a key, as the JSON escape of U+0001, so that JSON.parse keeps it in place (and the walk
 * takes the mark off). Not used when the text has that escape already: the key could be real.
 */
const KEY_MARK = '\\u0001';

const tooDeep = (max: number) =>
  new TemplateDataError(`must not nest objects and arrays more than ${max} levels deep`, 'depth');

const fromParsed = (value: unknown, depth: number, max: number, marked = false): Value => {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (Number.isSafeInteger(value)) return value === 0 ? 0 : value;
      if (Number.isInteger(value)) throw new NeedsSource('number');
      return new PyFloat(value);
    case 'object': {
      if (value === null) return null;
      if (depth > max) throw tooDeep(max);
      if (Array.isArray(value)) {
        const list: Value[] = new Array(value.length);
        for (let i = 0; i < value.length; i++) list[i] = fromParsed(value[i], depth + 1, max, marked);
        return list;
      }
      const keys = Object.keys(value);
      if (keys.length && INDEX_KEY.test(keys[0] as string)) throw new NeedsSource('key');
      const d = new PyDict();
      for (const key of keys) {
        const v = fromParsed((value as Record<string, unknown>)[key], depth + 1, max, marked);
        d.set(marked && key.charCodeAt(0) === 1 ? key.slice(1) : key, v);
      }
      return d;
    }
    default:
      return null;
  }
};

/** A JSON number's text as Python's json module reads it: int when it has no fraction or exponent. */
const numberOf = (text: string): Value => {
  if (/[.eE]/.test(text)) return new PyFloat(Number(text));
  const n = Number(text);
  if (Number.isSafeInteger(n)) return n === 0 ? 0 : n;
  return normInt(BigInt(text));
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
  let parsed: unknown;
  if (options.parsed !== undefined) parsed = options.parsed;
  else {
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new TemplateDataError(e instanceof Error ? e.message : 'not valid JSON', 'json');
    }
  }
  const member = options.member;
  if (member !== undefined) {
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new TemplateDataError('must be a JSON object', 'object');
    }
    // The member is one level below the body: it may nest one level less.
    parsed = Object.hasOwn(parsed, member) ? (parsed as Record<string, unknown>)[member] : null;
    if (parsed === null) return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new TemplateDataError('must be a JSON object', 'object');
  }
  let value: Value;
  try {
    if (INTEGRAL_FLOAT_HINT.test(text)) throw new NeedsSource('number');
    try {
      value = fromParsed(parsed, 1, max);
    } catch (e) {
      // Integer-like keys only: mark them so that JSON.parse keeps their place, and read again.
      if (!(e instanceof NeedsSource && e.reason === 'key') || text.includes(KEY_MARK)) throw e;
      let again = JSON.parse(text.replace(INDEX_KEY_TEXT, `$1"${KEY_MARK}$2"$3`)) as unknown;
      if (member !== undefined) again = (again as Record<string, unknown>)[member];
      value = fromParsed(again, 1, max, true);
    }
  } catch (e) {
    if (!(e instanceof NeedsSource)) throw e;
    const all = fromSource(text, member === undefined ? max : max + 1);
    value = member === undefined ? all : ((all as PyDict).get(member) as Value);
  }
  return value as TemplateData;
}

const jsonString = (s: string) => JSON.stringify(s);

/**
 * JSON text that parseTemplateData reads back to the same data (key order, floats, big ints): for
 * handing template data to another process, which JSON.stringify of a JavaScript object cannot do.
 * With `sortKeys`, every object's keys in code-unit order instead (a text that does not depend on
 * the order keys were sent in).
 */
export const stringifyTemplateData = (data: TemplateData, options: { sortKeys?: boolean } = {}): string => {
  const parts: string[] = [];
  const write = (v: Value): void => {
    if (v === null || typeof v === 'boolean') parts.push(String(v));
    else if (typeof v === 'number' || typeof v === 'bigint') parts.push(String(v));
    else if (typeof v === 'string') parts.push(jsonString(v));
    else if (v instanceof PyFloat) {
      const x = v.v;
      if (!Number.isFinite(x)) parts.push(x > 0 ? '1e999' : x < 0 ? '-1e999' : 'null');
      else {
        const s = String(x);
        parts.push(/[.eE]/.test(s) ? s : `${s}.0`);
      }
    } else if (Array.isArray(v)) {
      parts.push('[');
      v.forEach((item, i) => {
        if (i) parts.push(',');
        write(item);
      });
      parts.push(']');
    } else if (v instanceof PyDict) {
      parts.push('{');
      const entries = v.entries();
      if (options.sortKeys)
        entries.sort(([a], [b]) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0));
      entries.forEach(([k, item], i) => {
        if (i) parts.push(',');
        parts.push(jsonString(String(k)), ':');
        write(item);
      });
      parts.push('}');
    } else parts.push('null');
  };
  write(data);
  return parts.join('');
};

/** Whether JSON.parse would have read a number of `data` differently: an integral float (`10.0`, `1e3`) or an integer beyond 2^53. */
export const hasNumbersJsonParseChanges = (data: TemplateData): boolean => {
  const changed = (v: Value): boolean => {
    if (typeof v === 'bigint') return true;
    if (v instanceof PyFloat) return Number.isInteger(v.v);
    if (Array.isArray(v)) return v.some(changed);
    if (v instanceof PyDict) return v.values().some(changed);
    return false;
  };
  return changed(data);
};
