/**
 * JSON kept as text in the page, as the API keeps a template's sample data: JSON.parse would move
 * integer-like keys to the front, turn `10.0` into 10 and round an 18-digit id (issue 22). The
 * page's own copy of functions/domain/common/json-text.ts (the page bundles nothing from functions/).
 */
export class JsonText {
  constructor(
    /** Valid JSON, without whitespace between tokens. */
    readonly text: string,
  ) {}
}

/** A JSON string token, or a run of whitespace (which outside strings means nothing). */
const STRING_OR_SPACE = /"(?:[^"\\]|\\.)*"|[ \t\n\r]+/g;

/** Valid JSON `text` without the whitespace between its tokens; nothing else changes. */
export const compactJson = (text: string): string =>
  text.replace(STRING_OR_SPACE, (token) => (token[0] === '"' ? token : ''));

/** `value` as JSON, each JsonText in it written as its text (a random placeholder holds its place). */
export const stringifyWithJsonText = (value: unknown, indent?: number): string => {
  const kept: string[] = [];
  const tag = `json-text-${crypto.randomUUID()}:`;
  const out = JSON.stringify(
    value,
    (_key, v: unknown) => {
      if (!(v instanceof JsonText)) return v;
      kept.push(v.text);
      return `${tag}${kept.length - 1}`;
    },
    indent,
  );
  if (kept.length === 0) return out;
  return out.replace(new RegExp(`"${tag}(\\d+)"`, 'g'), (_m, i: string) => kept[Number(i)] as string);
};

/**
 * The sample as text when JSON.parse would change it (an integer-like key's place, `10.0`, `1e3`,
 * an integer beyond 2^53, or only a number's spelling), else the object: code shown to users then
 * writes ordinary samples as before, and the others as sent.
 */
export const sampleForCode = (
  value: Record<string, unknown>,
  json: JsonText,
): Record<string, unknown> | JsonText => (JSON.stringify(value) === json.text ? value : json);
