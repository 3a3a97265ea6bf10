/**
 * What a template needs, found by walking its tree without executing it: the top-level names it
 * reads without defining them (Jinja2's meta.find_undeclared_variables, meta.ts), which of those
 * every execution reads (at the top level, outside any branch, loop body or macro, with no guard
 * such as `is defined` or `default`: a render without one of them fails, whatever else it gets),
 * and whether every filter and test it names exists (Jinja2 checks those when it compiles, so an
 * unknown one is a syntax error).
 */

import { TemplateSyntaxError } from './exceptions.js';
import { FILTERS } from './filters/index.js';
import { analyseSymbols, type DeclaredNames } from './meta.js';
import type { CallArgs, Expr, MacroDef, Stmt, Target } from './nodes.js';
import { TESTS } from './tests.js';

const GLOBAL_NAMES = new Set(['range', 'dict', 'lipsum', 'cycler', 'joiner', 'namespace', 'self', 'asset']);
const GUARD_TESTS = new Set(['defined', 'undefined']);
const GUARD_FILTERS = new Set(['default', 'd']);
/** Filters that take an undefined value without failing (`items` gives nothing, `pprint` its repr). */
const PASSING_FILTERS = new Set(['items', 'pprint']);
/** Tests that fail on an undefined value under StrictUndefined (the others answer False or True). */
const CONSUMING_TESTS = new Set(
  ['odd', 'even', 'divisibleby', 'lower', 'upper', 'eq', 'equalto', '==', 'ne', '!='].concat([
    'lt',
    'lessthan',
    '<',
    'le',
    '<=',
    'gt',
    'greaterthan',
    '>',
    'ge',
    '>=',
  ]),
);

interface Introspection {
  readonly undeclared: string[];
  readonly required: { name: string; line: number }[];
  /** For the evaluator: the names each frame declares (meta.ts). */
  readonly declared: DeclaredNames;
}

export const introspect = (body: readonly Stmt[]): Introspection => {
  const firstLine = new Map<string, number>();
  const guarded = new Set<string>();
  const unguarded = new Set<string>();
  /** Inside an `{% if %}` or inline `if` (not below a statement that opens a frame of its own). */
  let soft = false;
  /** Evaluated by every execution that gets this far (not in a branch, loop body, macro or guard). */
  let definite = true;
  const inDefinite = <T>(value: boolean, fn: () => T): T => {
    const saved = definite;
    definite = definite && value;
    try {
      return fn();
    } finally {
      definite = saved;
    }
  };
  const inSoft = <T>(value: boolean, fn: () => T): T => {
    const saved = soft;
    soft = value;
    try {
      return fn();
    } finally {
      soft = saved;
    }
  };

  const namespaceRefs = (t: Target): string[] =>
    t.t === 'nsattr' ? [t.ns] : t.t === 'tuple' ? t.items.flatMap(namespaceRefs) : [];

  const targetNames = (t: Target, into: Set<string>): void => {
    if (t.t === 'name') into.add(t.name);
    else if (t.t === 'tuple') for (const i of t.items) targetNames(i, into);
  };

  const callArgs = (c: CallArgs, scope: Set<string>) => {
    for (const a of c.args) expr(a, scope);
    for (const [, v] of c.kwargs) expr(v, scope);
    if (c.dynArgs) expr(c.dynArgs, scope);
    if (c.dynKwargs) expr(c.dynKwargs, scope);
  };

  /**
   * How an expression's value is used: `consumed` by an operation that fails on an undefined value
   * (printing, an attribute, arithmetic, a comparison, a truth test, iteration, a call), only
   * `passed` on (an argument, a list item, a `set`), or `guarded` (`is defined`, `default`).
   */
  type Use = 'consumed' | 'passed' | 'guarded';

  const use = (name: string, line: number, scope: Set<string>, how: Use) => {
    if (scope.has(name) || GLOBAL_NAMES.has(name)) return;
    if (how === 'guarded') guarded.add(name);
    else if (how === 'consumed' && definite && !unguarded.has(name)) {
      unguarded.add(name);
      firstLine.set(name, line);
    }
  };

  const expr = (e: Expr | null, scope: Set<string>, how: Use = 'passed'): void => {
    if (!e) return;
    switch (e.t) {
      case 'const':
        return;
      case 'name':
        use(e.name, e.line, scope, how);
        return;
      case 'tuple':
      case 'list':
        for (const i of e.items) expr(i, scope);
        return;
      case 'dict':
        for (const [k, v] of e.pairs) {
          expr(k, scope);
          expr(v, scope);
        }
        return;
      case 'getattr':
        // `a.b|default(…)` fails when `a` is missing, but only when run, as in Jinja2.
        expr(e.obj, scope, how);
        return;
      case 'getitem':
        expr(e.obj, scope, how);
        expr(e.key, scope);
        return;
      case 'slice':
        expr(e.start, scope);
        expr(e.stop, scope);
        expr(e.step, scope);
        return;
      case 'call':
        expr(e.fn, scope, 'consumed');
        callArgs(e, scope);
        return;
      case 'filter':
        if (!soft && !FILTERS.has(e.name))
          throw new TemplateSyntaxError(`No filter named '${e.name}'.`, e.line);
        expr(
          e.node,
          scope,
          GUARD_FILTERS.has(e.name) ? 'guarded' : PASSING_FILTERS.has(e.name) ? 'passed' : 'consumed',
        );
        callArgs(e, scope);
        return;
      case 'test':
        if (!soft && !TESTS.has(e.name)) throw new TemplateSyntaxError(`No test named '${e.name}'.`, e.line);
        expr(
          e.node,
          scope,
          GUARD_TESTS.has(e.name) ? 'guarded' : CONSUMING_TESTS.has(e.name) ? 'consumed' : 'passed',
        );
        callArgs(e, scope);
        return;
      case 'not':
      case 'neg':
      case 'pos':
        expr(e.node, scope, 'consumed');
        return;
      case 'bin':
        expr(e.left, scope, 'consumed');
        expr(e.right, scope, 'consumed');
        return;
      case 'and':
      case 'or':
        expr(e.left, scope, 'consumed');
        inDefinite(false, () => expr(e.right, scope, how));
        return;
      case 'compare':
        expr(e.expr, scope, 'consumed');
        for (const [op, x] of e.ops) expr(x, scope, op === 'in' || op === 'notin' ? 'passed' : 'consumed');
        return;
      case 'concat':
        for (const i of e.items) expr(i, scope, 'consumed');
        return;
      case 'cond':
        inSoft(true, () => {
          expr(e.test, scope, 'consumed');
          inDefinite(false, () => {
            expr(e.body, scope, how);
            expr(e.else_, scope, how);
          });
        });
        return;
    }
  };

  const macro = (m: MacroDef, scope: Set<string>) =>
    inSoft(false, () => inDefinite(false, () => macroBody(m, scope)));
  const macroBody = (m: MacroDef, scope: Set<string>) => {
    const inner = new Set(scope);
    for (const p of m.params) {
      expr(p.default, inner);
      inner.add(p.name);
    }
    for (const n of ['caller', 'varargs', 'kwargs']) inner.add(n);
    stmts(m.body, inner);
  };

  const stmts = (list: readonly Stmt[], scope: Set<string>): void => {
    for (const s of list) {
      switch (s.t) {
        case 'data':
          break;
        case 'output':
          expr(s.expr, scope, 'consumed');
          break;
        case 'if':
          inSoft(true, () => {
            expr(s.test, scope, 'consumed');
            inDefinite(false, () => {
              stmts(s.body, scope);
              stmts(s.else_, scope);
            });
          });
          break;
        case 'for': {
          expr(s.iter, scope, 'consumed');
          const inner = new Set(scope);
          targetNames(s.target, inner);
          inner.add('loop');
          inSoft(false, () =>
            inDefinite(false, () => {
              expr(s.test, inner);
              stmts(s.body, inner);
              stmts(s.else_, scope);
            }),
          );
          break;
        }
        case 'set':
          expr(s.expr, scope);
          for (const ns of namespaceRefs(s.target)) use(ns, s.line, scope, 'consumed');
          targetNames(s.target, scope);
          break;
        case 'setblock':
          inSoft(false, () => {
            stmts(s.body, new Set(scope));
            expr(s.filter, scope);
          });
          targetNames(s.target, scope);
          break;
        case 'with': {
          for (const v of s.values) expr(v, scope);
          const inner = new Set(scope);
          for (const t of s.targets) targetNames(t, inner);
          inSoft(false, () => stmts(s.body, inner));
          break;
        }
        case 'macro':
          scope.add(s.name);
          macro(s, scope);
          break;
        case 'callblock':
          expr(s.call, scope);
          macro(s.macro, scope);
          break;
        case 'filterblock':
          inSoft(false, () => {
            expr(s.filter, scope);
            stmts(s.body, new Set(scope));
          });
          break;
        case 'block':
          inSoft(false, () => stmts(s.body, new Set(scope)));
          break;
        case 'autoescape':
          // Jinja2 wraps the body in a Scope node: a frame of its own, not soft.
          expr(s.expr, scope, 'consumed');
          inSoft(false, () => stmts(s.body, scope));
          break;
        case 'load':
          for (const e of s.exprs) expr(e, scope);
          for (const n of s.names) scope.add(n);
          break;
      }
    }
  };

  stmts(body, new Set());
  const { undeclared, declared } = analyseSymbols(body);
  return {
    undeclared,
    declared,
    required: undeclared
      .filter((n) => unguarded.has(n) && !guarded.has(n))
      .map((name) => ({ name, line: firstLine.get(name) as number })),
  };
};
