/**
 * The Jinja2 engine: templates mean what Jinja2 3.1 makes of them with
 * `Environment(autoescape=True, undefined=StrictUndefined)`, and they only ever see data.
 *
 * - parseTemplate: syntax check and introspection; never executes anything. The API uses it.
 * - renderTemplate: executes a template, bounded in time and output. Only the renderer's
 *   templating worker calls it (functions/renderer), where a compromise would gain nothing.
 *
 * Laid out along Jinja2's own modules, each layer importing only the ones below it:
 * - lexer.ts, expression-parser.ts, parser.ts → nodes.ts: the template as a plain tree (on
 *   nunjucks' tokenizer); introspect.ts walks it (meta.py).
 * - evaluator.ts walks it (compiler.py's place) with runtime.ts (RenderState, frames, loops) and
 *   operators.ts.
 * - filters/, tests.ts, defaults.ts: Jinja2's builtins; members.ts with str-methods.ts and
 *   collection-methods.ts: the attributes a template may read (sandbox.py's place).
 * - format.ts, str-functions.ts, slices.ts, protocols.ts, numbers.ts, values.ts: Python's
 *   semantics for the values a template sees.
 */

import { type CompileError, compileError } from './compile-checks.js';
import type { TemplateData } from './data.js';
import { Evaluator } from './evaluator.js';
import { TemplateSyntaxError } from './exceptions.js';
import { introspect } from './introspect.js';
import type { DeclaredNames } from './meta.js';
import type { TemplateAst } from './nodes.js';
import { parse } from './parser.js';
import { RenderState } from './runtime.js';
import { fromJson, LimitError, PyDict, PyError, type Value } from './values.js';

export type TemplateErrorKind = 'syntax' | 'undefined' | 'runtime' | 'limit';

/** A template problem whose message is safe to show the template's author. */
export class TemplateError extends Error {
  constructor(
    message: string,
    readonly kind: TemplateErrorKind,
    /** 1-based line in the template, when known. */
    readonly line?: number,
    /** The undefined variable's name, for kind 'undefined'. */
    readonly variable?: string,
    /** For kind 'limit': the output passed `maxOutputBytes` (HTML_CONTENT_TOO_LARGE). */
    readonly outputTooLarge = false,
  ) {
    super(message);
    this.name = 'TemplateError';
  }
}

export interface ParsedTemplate {
  /** Sorted top-level names the template reads without defining them (Jinja2's meta.find_undeclared_variables). */
  readonly undeclared: readonly string[];
  /**
   * The subset of `undeclared` used somewhere without a guard (`is defined`, `default`), with the
   * first line (1-based) each is used on: a render whose variables lack one of them fails.
   */
  readonly required: readonly { readonly name: string; readonly line: number }[];
}

export interface RenderOptions {
  /** Output above this many UTF-8 bytes fails with kind 'limit' as soon as it is exceeded. */
  readonly maxOutputBytes?: number;
  /** Epoch ms after which rendering stops with kind 'limit'. */
  readonly deadline?: number;
  /** The time limit named in the message when the deadline passes. @default 2000 */
  readonly timeLimitMs?: number;
}

/** The contract's limits, used when the caller gives none. */
export const DEFAULT_MAX_OUTPUT_BYTES = 10 * 1024 * 1024;
export const DEFAULT_DEADLINE_MS = 2_000;

interface Parsed {
  readonly ast: TemplateAst;
  readonly info: ParsedTemplate;
  readonly declared: DeclaredNames;
  /** What Jinja2 refuses when it compiles the parsed template: every render fails with it. */
  readonly compileError: CompileError | undefined;
}

const CACHE_ENTRIES = 128;
const CACHE_CHARS = 32 * 1024 * 1024;
const cache = new Map<string, Parsed>();
/** The cached sources' length, in UTF-16 code units. */
const cached = { chars: 0 };

const syntaxError = (e: TemplateSyntaxError) =>
  new TemplateError(`Template syntax error (line ${e.line}): ${e.message}`, 'syntax', e.line);

const parsed = (source: string, useCache = true): Parsed => {
  const hit = useCache ? cache.get(source) : undefined;
  if (hit) {
    cache.delete(source);
    cache.set(source, hit);
    return hit;
  }
  let entry: Parsed;
  try {
    const ast = parse(source);
    const { undeclared, required, declared } = introspect(ast.body);
    entry = { ast, info: { undeclared, required }, declared, compileError: compileError(ast.body) };
  } catch (e) {
    if (e instanceof TemplateSyntaxError) throw syntaxError(e);
    if (e instanceof RangeError)
      throw new TemplateError('Template syntax error: the template is nested too deeply', 'syntax');
    throw e;
  }
  if (!useCache) return entry;
  cache.set(source, entry);
  cached.chars += source.length;
  while (cache.size > CACHE_ENTRIES || cached.chars > CACHE_CHARS) {
    const oldest = cache.keys().next().value as string;
    cache.delete(oldest);
    cached.chars -= oldest.length;
  }
  return entry;
};

/**
 * Parse only: throws TemplateError (kind 'syntax') for a template that does not parse. `cache`:
 * keep the parse for a later render of the same source (a renderer's); the API's parse workers
 * parse each template once, and keep nothing.
 */
export const parseTemplate = (
  source: string,
  { cache = true }: { readonly cache?: boolean } = {},
): ParsedTemplate => parsed(source, cache).info;

const lineNote = (line: number | undefined) => (line ? ` (line ${line})` : '');

const toTemplateError = (e: unknown, line: number | undefined): TemplateError => {
  if (e instanceof TemplateError) return e;
  if (e instanceof LimitError) return new TemplateError(e.message, 'limit', undefined, undefined, e.output);
  if (e instanceof TemplateSyntaxError) return syntaxError(e);
  if (e instanceof PyError) {
    if (e.type === 'UndefinedError') {
      if (e.undefinedName !== undefined) {
        return new TemplateError(
          `Variable '${e.undefinedName}' is undefined${lineNote(line)}`,
          'undefined',
          line,
          e.undefinedName,
        );
      }
      return new TemplateError(`Template error${lineNote(line)}: ${e.message}`, 'undefined', line);
    }
    if (e.type === 'TemplateAssertionError')
      return new TemplateError(`Template syntax error${lineNote(line)}: ${e.message}`, 'syntax', line);
    if (e.type === 'RecursionError')
      return new TemplateError(
        `Template error${lineNote(line)}: maximum recursion depth exceeded`,
        'runtime',
        line,
      );
    return new TemplateError(`Template error${lineNote(line)}: ${e.type}: ${e.message}`, 'runtime', line);
  }
  if (e instanceof RangeError && /call stack/i.test(e.message)) {
    return new TemplateError(
      `Template error${lineNote(line)}: maximum recursion depth exceeded`,
      'runtime',
      line,
    );
  }
  // A fault of the engine itself: its text is ours, not the template's, so it is not shown.
  return new TemplateError(
    `Template error${lineNote(line)}: the template could not be rendered`,
    'runtime',
    line,
  );
};

export {
  hasNumbersJsonParseChanges,
  MAX_TEMPLATE_DATA_DEPTH,
  parseTemplateData,
  readTemplateDataText,
  stringifyTemplateData,
  type TemplateData,
  TemplateDataError,
  type TemplateDataText,
} from './data.js';

/**
 * Execute a template with `variables`: TemplateData (parseTemplateData: key order, floats and big
 * ints as JSON sent them) or a JavaScript object (as JSON.parse made it); throws TemplateError.
 */
export const renderTemplate = (
  source: string,
  variables: TemplateData | Record<string, unknown>,
  options: RenderOptions = {},
): string => {
  const { ast, declared, compileError: refused } = parsed(source);
  if (refused) {
    // Python's own SyntaxError, raised by Jinja2 while compiling: not a TemplateSyntaxError.
    throw new TemplateError(
      `Template error${lineNote(refused.line)}: SyntaxError: ${refused.message}`,
      'runtime',
      refused.line,
    );
  }
  const deadlineMs = options.timeLimitMs ?? DEFAULT_DEADLINE_MS;
  const state = new RenderState({
    maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
    deadline: options.deadline ?? Date.now() + deadlineMs,
    deadlineMs,
  });
  try {
    const context = new Map<string, Value>();
    if (variables instanceof PyDict) for (const [key, v] of variables.entries()) context.set(String(key), v);
    else for (const key of Object.keys(variables)) context.set(key, fromJson(variables[key]));
    return new Evaluator(ast, context, state, declared).render();
  } catch (e) {
    throw toTemplateError(e, state.line || undefined);
  }
};
