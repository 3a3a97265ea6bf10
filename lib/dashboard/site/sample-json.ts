/**
 * A template's sample data as the API answered it, kept as text: JSON.parse would move its
 * integer-like keys to the front and turn `10.0` into 10 and an 18-digit id into another number
 * (issue 22). Loaded with the template, on demand: jsonc-parser finds the member's text in the
 * answer and indents it for the editor without touching a token.
 */
import { applyEdits, findNodeAtLocation, format, modify, parseTree } from 'jsonc-parser/lib/esm/main.js';

/** The `sample_variables` of a template answer's text, indented for the editor; `{}` when none. */
export const sampleTextOf = (answer: string): string => {
  const root = parseTree(answer, [], { disallowComments: true });
  const node = root && findNodeAtLocation(root, ['sample_variables']);
  const sample = node?.type === 'object' ? answer.slice(node.offset, node.offset + node.length) : '{}';
  return applyEdits(sample, format(sample, undefined, { tabSize: 2, insertSpaces: true, eol: '\n' }));
};

/** `text` (a JSON object) with each of `names` added as an empty string, the rest as written. */
export const withKeys = (text: string, names: readonly string[]): string => {
  let out = text.trim() === '' ? '{}' : text;
  for (const name of names) {
    out = applyEdits(
      out,
      modify(out, [name], '', { formattingOptions: { tabSize: 2, insertSpaces: true, eol: '\n' } }),
    );
  }
  return out;
};
