/**
 * What Jinja2 refuses when it compiles a template to Python, after the template parsed: a call
 * that names the same keyword argument twice (`dict(a=1, a=2)`, `x|round(precision=2,
 * precision=1)`) is Python's `SyntaxError: keyword argument repeated`, raised before anything
 * renders, even where the call is never reached. Jinja2 gets past it in two ways, followed here:
 * - when a keyword of the call is a Python keyword (`dict(class=1, class=2)`), it passes them all
 *   as one `**{...}` dict, where the last one wins;
 * - a filter or test whose value and arguments are all constant is folded at compile time, with
 *   the keywords gathered in a dict (the last one wins), unless the filter reads the render's
 *   context or fails, or its value is a generator (then it is compiled, and refused).
 */
import { Evaluator } from './evaluator.js';
import { PYTHON_KEYWORDS } from './keywords.js';
import type { CallArgs, Expr, Stmt, TemplateAst } from './nodes.js';
import { RenderState } from './runtime.js';

/** Filters Jinja2 never folds (they take the render's context), or whose value is a generator. */
const NOT_FOLDED = new Set([
  'map',
  'select',
  'reject',
  'selectattr',
  'rejectattr',
  'random',
  'batch',
  'slice',
  'unique',
  'reverse',
  'items',
]);

export interface CompileError {
  readonly message: string;
  readonly line: number;
}

const repeated = (call: CallArgs): string | undefined => {
  const seen = new Set<string>();
  let twice: string | undefined;
  for (const [name] of call.kwargs) {
    if (PYTHON_KEYWORDS.has(name)) return undefined;
    if (seen.has(name)) twice ??= name;
    seen.add(name);
  }
  return twice;
};

/** Whether an expression reads nothing of the render (no name, no call, no context filter). */
const constant = (e: Expr | null): boolean => {
  if (e === null) return true;
  switch (e.t) {
    case 'const':
      return true;
    case 'name':
    case 'call':
      return false;
    case 'tuple':
    case 'list':
    case 'concat':
      return e.items.every(constant);
    case 'dict':
      return e.pairs.every(([k, v]) => constant(k) && constant(v));
    case 'getattr':
      return constant(e.obj);
    case 'getitem':
      return constant(e.obj) && constant(e.key);
    case 'slice':
      return constant(e.start) && constant(e.stop) && constant(e.step);
    case 'filter':
    case 'test':
      return (
        e.node !== null &&
        !NOT_FOLDED.has(e.name) &&
        constant(e.node) &&
        e.args.every(constant) &&
        e.kwargs.every(([, v]) => constant(v)) &&
        constant(e.dynArgs) &&
        constant(e.dynKwargs)
      );
    case 'not':
    case 'neg':
    case 'pos':
      return constant(e.node);
    case 'bin':
    case 'and':
    case 'or':
      return constant(e.left) && constant(e.right);
    case 'compare':
      return constant(e.expr) && e.ops.every(([, v]) => constant(v));
    case 'cond':
      return constant(e.test) && constant(e.body) && constant(e.else_);
  }
};

/** Whether Jinja2 folds this constant filter or test: evaluating it alone succeeds. */
const folds = (e: Expr): boolean => {
  if (!constant(e)) return false;
  const ast: TemplateAst = {
    body: [{ t: 'output', expr: e, line: e.line }],
    blocks: new Map(),
    extends: false,
  };
  const state = new RenderState({ maxOutputBytes: 1024 * 1024, deadline: Date.now() + 200, deadlineMs: 200 });
  try {
    new Evaluator(ast, new Map(), state).render();
    return true;
  } catch {
    return false;
  }
};

/** The first call Jinja2 would refuse to compile, in the order of the source; undefined when none. */
export const compileError = (body: readonly Stmt[]): CompileError | undefined => {
  let found: CompileError | undefined;
  const seen = new Set<unknown>();
  const visit = (node: unknown): void => {
    if (found || typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    const e = node as { t?: unknown; line?: unknown };
    if (e.t === 'const') return;
    if ((e.t === 'call' || e.t === 'filter' || e.t === 'test') && typeof e.line === 'number') {
      const expr = node as Expr & CallArgs;
      const name = repeated(expr);
      if (name !== undefined && (expr.t === 'call' || !folds(expr))) {
        found = { message: `keyword argument repeated: ${name}`, line: expr.line };
        return;
      }
    }
    for (const value of Object.values(node)) visit(value);
  };
  visit(body);
  return found;
};
