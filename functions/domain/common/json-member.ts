/**
 * One member of a JSON object's text, as written: what a body's `sample_variables` are stored as
 * (json-text.ts). jsonc-parser's visitor reports every token with its offset; its ES module build,
 * as templating/data.ts explains, and the dashboard reads answers with it too.
 */
import { visit } from 'jsonc-parser/lib/esm/main.js';
import { compactJson } from './json-text.js';

/**
 * The text of member `member` of `text` (a JSON object already known to be valid) exactly as sent,
 * but for the whitespace between tokens: key order and every number's spelling (`10.0`, `1e3`, 18
 * digits) kept. Undefined when the member is absent or null (or not an object or array); the last
 * one when given twice, as JSON.parse takes it.
 */
export const jsonMemberText = (text: string, member: string): string | undefined => {
  let depth = 0;
  let wanted = false;
  let start = -1;
  let span: [number, number] | undefined;
  const begin = (offset: number) => {
    depth++;
    if (depth === 2 && wanted) start = offset;
  };
  const end = (offset: number, length: number) => {
    if (depth === 2 && start >= 0) {
      span = [start, offset + length];
      start = -1;
      wanted = false;
    }
    depth--;
  };
  visit(
    text,
    {
      onObjectBegin: begin,
      onArrayBegin: begin,
      onObjectEnd: end,
      onArrayEnd: end,
      onObjectProperty: (property) => {
        if (depth === 1) wanted = property === member;
      },
      onLiteralValue: () => {
        if (depth === 1 && wanted) {
          span = undefined;
          wanted = false;
        }
      },
    },
    { disallowComments: true, allowTrailingComma: false },
  );
  return span && compactJson(text.slice(span[0], span[1]));
};
