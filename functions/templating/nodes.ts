/**
 * The syntax tree of a Jinja2 template, as the parser (parser.ts) builds it and the evaluator
 * (evaluator.ts) and the introspection (introspect.ts) walk it. Plain data: no code is generated.
 */
import type { Value } from './values.js';

export interface CallArgs {
  readonly args: Expr[];
  readonly kwargs: [string, Expr][];
  readonly dynArgs: Expr | null;
  readonly dynKwargs: Expr | null;
}

export type Expr = { readonly line: number } & (
  | { readonly t: 'const'; readonly value: Value }
  | { readonly t: 'name'; readonly name: string }
  | { readonly t: 'tuple'; readonly items: Expr[] }
  | { readonly t: 'list'; readonly items: Expr[] }
  | { readonly t: 'dict'; readonly pairs: [Expr, Expr][] }
  | { readonly t: 'getattr'; readonly obj: Expr; readonly name: string }
  | { readonly t: 'getitem'; readonly obj: Expr; readonly key: Expr }
  | {
      readonly t: 'slice';
      readonly start: Expr | null;
      readonly stop: Expr | null;
      readonly step: Expr | null;
    }
  | ({ readonly t: 'call'; readonly fn: Expr } & CallArgs)
  | ({ readonly t: 'filter'; readonly node: Expr | null; readonly name: string } & CallArgs)
  | ({ readonly t: 'test'; readonly node: Expr; readonly name: string } & CallArgs)
  | { readonly t: 'not'; readonly node: Expr }
  | { readonly t: 'neg'; readonly node: Expr }
  | { readonly t: 'pos'; readonly node: Expr }
  | { readonly t: 'bin'; readonly op: string; readonly left: Expr; readonly right: Expr }
  | { readonly t: 'and'; readonly left: Expr; readonly right: Expr }
  | { readonly t: 'or'; readonly left: Expr; readonly right: Expr }
  | { readonly t: 'compare'; readonly expr: Expr; readonly ops: [string, Expr][] }
  | { readonly t: 'concat'; readonly items: Expr[] }
  | { readonly t: 'cond'; readonly test: Expr; readonly body: Expr; readonly else_: Expr | null }
);

/** Where `{% set %}`, `{% for %}` and `{% with %}` store: a name, a tuple of targets, `ns.attr`. */
export type Target =
  | { readonly t: 'name'; readonly name: string; readonly line: number }
  | { readonly t: 'tuple'; readonly items: Target[]; readonly line: number }
  | { readonly t: 'nsattr'; readonly ns: string; readonly attr: string; readonly line: number };

export interface MacroDef {
  readonly name: string;
  readonly params: { readonly name: string; readonly default: Expr | null }[];
  readonly body: Stmt[];
  readonly line: number;
}

export type Stmt = { readonly line: number } & (
  | { readonly t: 'data'; readonly text: string }
  | { readonly t: 'output'; readonly expr: Expr }
  | {
      readonly t: 'for';
      readonly target: Target;
      readonly iter: Expr;
      readonly test: Expr | null;
      readonly recursive: boolean;
      readonly body: Stmt[];
      readonly else_: Stmt[];
    }
  | {
      readonly t: 'if';
      readonly test: Expr;
      readonly body: Stmt[];
      readonly else_: Stmt[];
      /** An `elif`: the only statement of the else_ of the `if` before it. */
      readonly elif?: true;
    }
  | { readonly t: 'set'; readonly target: Target; readonly expr: Expr }
  | { readonly t: 'setblock'; readonly target: Target; readonly filter: Expr | null; readonly body: Stmt[] }
  | { readonly t: 'with'; readonly targets: Target[]; readonly values: Expr[]; readonly body: Stmt[] }
  | ({ readonly t: 'macro' } & MacroDef)
  | { readonly t: 'callblock'; readonly call: Expr; readonly macro: MacroDef }
  | { readonly t: 'filterblock'; readonly filter: Expr; readonly body: Stmt[] }
  | { readonly t: 'block'; readonly name: string; readonly scoped: boolean; readonly body: Stmt[] }
  | { readonly t: 'autoescape'; readonly expr: Expr; readonly body: Stmt[] }
  | { readonly t: 'load'; readonly what: string; readonly exprs: Expr[]; readonly names: string[] }
);

export interface TemplateAst {
  readonly body: Stmt[];
  /** `{% block %}` definitions by name, for `self.<name>()`. */
  readonly blocks: ReadonlyMap<string, Stmt & { t: 'block' }>;
  /** Whether the template has `{% extends %}` (Jinja2 then outputs only through the parent). */
  readonly extends: boolean;
}
