/**
 * JSON kept as the caller wrote it: a template's `sample_variables` keep their key order (integer-like
 * keys too, which a JavaScript object moves to the front) and every number's spelling (`10.0`, `1e3`,
 * integers beyond 2^53), which JSON.parse into an object would lose. Stored as text and written into
 * answers as text (core/responses.ts), never through a JavaScript object.
 */
export class JsonText {
  constructor(
    /** Valid JSON (an object, for sample data), without whitespace between tokens. */
    readonly text: string,
  ) {}
}

/**
 * `value` as JSON, with each JsonText inside it written as its text. A placeholder string holds
 * each one's place through JSON.stringify; a random one, so no string of the value can be taken for it.
 */
export const stringifyWithJsonText = (value: unknown): string => {
  const kept: string[] = [];
  const tag = `\u0000json-text-${crypto.randomUUID()}:`;
  const out = JSON.stringify(value, (_key, v: unknown) => {
    if (!(v instanceof JsonText)) return v;
    kept.push(v.text);
    return `${tag}${kept.length - 1}`;
  });
  if (kept.length === 0) return out;
  // JSON.stringify writes the tag's NUL as \u0000: match it written so.
  const written = JSON.stringify(tag).slice(1, -1);
  return out.replace(
    new RegExp(`"${written.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')}(\\d+)"`, 'g'),
    (_m, i: string) => kept[Number(i)] as string,
  );
};

/** A JSON string token, or a run of whitespace (which outside strings means nothing). */
const STRING_OR_SPACE = /"(?:[^"\\]|\\.)*"|[ \t\n\r]+/g;

/** Valid JSON `text` without the whitespace between its tokens; nothing else changes. */
export const compactJson = (text: string): string =>
  text.replace(STRING_OR_SPACE, (token) => (token[0] === '"' ? token : ''));
