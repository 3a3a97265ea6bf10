/**
 * Jinja2 templates rendered with nunjucks: autoescaping on, undefined variables an error (as
 * Jinja2's StrictUndefined: using a missing variable fails, except under `is defined` or the
 * `default` filter), compiled templates cached by content hash.
 *
 * Template text comes from strangers. Attribute lookups that lead to JavaScript's machinery
 * (`constructor`, `__proto__`, …) are refused, so `{{ range.constructor("…")() }}` cannot run code.
 */
import { createHash } from 'node:crypto';
import nunjucks from 'nunjucks';
import { sprintf } from 'sprintf-js';
import { ServiceError } from './errors.js';

// Jinja2 syntax and methods nunjucks leaves out: slices, dict.items(), str.upper() and the like.
nunjucks.installJinjaCompat();

const FORBIDDEN_MEMBERS = new Set([
  'constructor',
  '__proto__',
  'prototype',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
  'valueOf',
  'toLocaleString',
  'bind',
  'call',
  'apply',
]);

class ForbiddenMemberError extends Error {}

/** Names looked up during the render in progress (renders are synchronous, so one slot serves). */
let missing: string[] | undefined;

type Runtime = {
  memberLookup: (obj: unknown, name: unknown) => unknown;
  contextOrFrameLookup: (context: unknown, frame: unknown, name: string) => unknown;
};
const runtime = (nunjucks as unknown as { runtime: Runtime }).runtime;
const parser = (
  nunjucks as unknown as { parser: { parse(src: string, ext: unknown[], opts: object): AstNode } }
).parser;
const memberLookup = runtime.memberLookup;
const contextOrFrameLookup = runtime.contextOrFrameLookup;

runtime.memberLookup = (obj, name) => {
  if (typeof name === 'string' && FORBIDDEN_MEMBERS.has(name)) {
    throw new ForbiddenMemberError(`access to '${name}' is not allowed in templates`);
  }
  const value = memberLookup(obj, name);
  if (value === undefined && missing && obj !== undefined && obj !== null) missing.push(String(name));
  return value;
};
runtime.contextOrFrameLookup = (context, frame, name) => {
  const value = contextOrFrameLookup(context, frame, name);
  if (value === undefined && missing) missing.push(name);
  return value;
};

const environment = new nunjucks.Environment(null, { autoescape: true, throwOnUndefined: true });
/** Jinja2's sandbox caps range() at 100,000 items; so do we, so that a template cannot spin for ever on one. */
export const MAX_RANGE = 100_000;
environment.addGlobal('range', (start: number, stop?: number, step = 1) => {
  const [from, to] = stop === undefined ? [0, start] : [start, stop];
  if (typeof from !== 'number' || typeof to !== 'number' || typeof step !== 'number' || step === 0) {
    throw new Error('range() takes numbers and a step other than 0');
  }
  const length = Math.max(0, Math.ceil((to - from) / step));
  if (length > MAX_RANGE) throw new Error(`range() is limited to ${MAX_RANGE} items, got ${length}`);
  return Array.from({ length }, (_, i) => from + i * step);
});
// Python's printf-style formatting, as Jinja2's `"%.2f"|format(total)`.
environment.addFilter('format', (pattern: unknown, ...args: unknown[]) => sprintf(String(pattern), ...args));
environment.addFilter(
  'tojson',
  (value: unknown) =>
    new nunjucks.runtime.SafeString(
      JSON.stringify(value ?? null)
        .replace(/</g, '\\u003c')
        .replace(/>/g, '\\u003e')
        .replace(/&/g, '\\u0026')
        .replace(/'/g, '\\u0027'),
    ),
);

interface AstNode {
  typename: string;
  lineno: number;
  value?: unknown;
  name?: AstNode;
  left?: AstNode;
  target?: AstNode;
  val?: AstNode;
  args?: AstNode;
  children?: AstNode[];
  [field: string]: unknown;
}

interface Compiled {
  readonly template: nunjucks.Template;
  /** Names used only where Jinja2 tolerates undefined: `x is defined`, `x | default(…)`. */
  readonly guarded: ReadonlySet<string>;
  /** First line (1-based) each name appears on, for messages. */
  readonly lines: ReadonlyMap<string, number>;
}

/** The name a Symbol (`x`) or attribute lookup (`a.x`, `a["x"]`) refers to. */
const nameOf = (node: AstNode | undefined): string | undefined => {
  if (!node) return undefined;
  if (node.typename === 'Symbol') return String(node.value);
  if (node.typename === 'LookupVal' && node.val?.typename === 'Literal') return String(node.val.value);
  return undefined;
};

const analyse = (root: AstNode) => {
  const guarded = new Set<string>();
  const lines = new Map<string, number>();
  const seen = new Set<unknown>();
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const child of node) visit(child);
      return;
    }
    const n = node as AstNode;
    if (typeof n.typename === 'string') {
      const name = nameOf(n);
      if (name !== undefined && !lines.has(name)) lines.set(name, n.lineno + 1);
      if (n.typename === 'Is') {
        const guardedName = nameOf(n.left);
        if (guardedName) guarded.add(guardedName);
      }
      if (n.typename === 'Filter' && ['default', 'd'].includes(String(n.name?.value))) {
        const guardedName = nameOf(n.args?.children?.[0]);
        if (guardedName) guarded.add(guardedName);
      }
    }
    for (const [key, child] of Object.entries(n)) {
      if (key !== 'parent' && child && typeof child === 'object') visit(child);
    }
  };
  visit(root);
  return { guarded, lines };
};

const CACHE_LIMIT = 256;
const cache = new Map<string, Compiled>();

/** nunjucks' TemplateError text is "(unknown path) [Line 3, Column 5]\n  message": keep the message. */
const innerMessage = (e: unknown): string => {
  const text = e instanceof Error ? e.message : String(e);
  const lastLine = text.split('\n').pop() ?? text;
  return lastLine.replace(/^\s*(Error: )?/, '').trim();
};
const lineOf = (e: unknown): number | undefined => {
  const lineno = (e as { lineno?: unknown } | null)?.lineno;
  if (typeof lineno === 'number') return lineno;
  const match = /\[Line (\d+)/.exec(e instanceof Error ? e.message : '');
  return match ? Number(match[1]) : undefined;
};
const at = (line: number | undefined) => (line === undefined ? '' : ` (line ${line})`);

const invalid = (message: string, cause?: unknown) =>
  new ServiceError('INVALID_HTML_TEMPLATE', message, { details: [{ field: 'html', issue: message }], cause });

/** Compile (or take from the cache) a template; syntax errors answer INVALID_HTML_TEMPLATE. */
export const compileTemplate = (source: string): Compiled => {
  const hash = createHash('sha256').update(source).digest('base64');
  const hit = cache.get(hash);
  if (hit) {
    // Re-insert so the map's order is least recently used first.
    cache.delete(hash);
    cache.set(hash, hit);
    return hit;
  }
  let compiled: Compiled;
  try {
    const root = parser.parse(source, [], {});
    const template = new nunjucks.Template(source, environment, undefined, true);
    compiled = { template, ...analyse(root) };
  } catch (e) {
    throw invalid(`Template syntax error${at(lineOf(e))}: ${innerMessage(e)}`, e);
  }
  cache.set(hash, compiled);
  if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  return compiled;
};

/** Render Jinja2 `source` with `variables`; every template problem answers INVALID_HTML_TEMPLATE. */
export const renderTemplate = (source: string, variables: Record<string, unknown>): string => {
  const compiled = compileTemplate(source);
  const misses: string[] = [];
  missing = misses;
  let output: string;
  try {
    output = compiled.template.render(variables);
  } catch (e) {
    const cause = (e as { cause?: unknown }).cause;
    if (e instanceof ForbiddenMemberError || cause instanceof ForbiddenMemberError) {
      throw invalid(
        `Template error${at(lineOf(e))}: ${(cause ?? e) instanceof Error ? ((cause ?? e) as Error).message : ''}`,
        e,
      );
    }
    const lastMiss = misses.at(-1);
    if (lastMiss !== undefined && /undefined value/.test(innerMessage(e))) {
      throw invalid(`Variable '${lastMiss}' is undefined${at(lineOf(e) ?? compiled.lines.get(lastMiss))}`, e);
    }
    throw invalid(`Template error${at(lineOf(e))}: ${innerMessage(e)}`, e);
  } finally {
    missing = undefined;
  }
  const unguarded = misses.find((name) => !compiled.guarded.has(name));
  if (unguarded !== undefined) {
    throw invalid(`Variable '${unguarded}' is undefined${at(compiled.lines.get(unguarded))}`);
  }
  return output;
};
