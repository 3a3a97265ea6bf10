/**
 * The variables a template reads, from CodeMirror's Jinja parse (@codemirror/lang-jinja's grammar):
 * what the editor lists as missing from the sample while the text changes, before the API's
 * introspection (a saved template's `variables`) knows the text. Loaded with the editor, on demand.
 */
import { jinjaLanguage } from '@codemirror/lang-jinja';

/** Names Jinja gives every template: not the caller's to provide. */
const JINJA_GLOBALS = new Set([
  'loop',
  'range',
  'dict',
  'lipsum',
  'cycler',
  'joiner',
  'namespace',
  'super',
  'caller',
  'varargs',
  'kwargs',
  'self',
  'true',
  'false',
  'none',
  'True',
  'False',
  'None',
]);

/**
 * The top-level names the sources read without defining them, from the editor's own Jinja parse:
 * a hint while typing, before the API's introspection (the saved template's `variables`) knows the
 * text. Simpler than Jinja's scoping: a name defined anywhere (set, for, macro) counts as defined
 * everywhere, and the name after `is` is a test, not a variable.
 */
export const detectVariables = (sources: readonly string[]): string[] => {
  const read = new Set<string>();
  const defined = new Set<string>();
  for (const source of sources) {
    const cursor = jinjaLanguage.parser.parse(source).cursor();
    let afterIs = false;
    do {
      const text = () => source.slice(cursor.from, cursor.to);
      if (cursor.name === 'Definition') defined.add(text());
      else if (cursor.name === 'VariableName' && !afterIs) read.add(text());
      if (cursor.name !== 'BinaryExpression') afterIs = cursor.name === 'is';
    } while (cursor.next());
  }
  return [...read].filter((n) => !defined.has(n) && !JINJA_GLOBALS.has(n)).sort();
};
