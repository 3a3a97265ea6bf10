/**
 * Turning schema failures into the contract's 422 body: one `details` entry per problem, field
 * paths dotted (`page_load.timeout_ms`), and a code chosen by the route (the spec gives the PDF
 * endpoint field-specific codes; other endpoints answer VALIDATION_ERROR).
 */
import { distance } from 'fastest-levenshtein';
import type { z } from 'zod';
import { type ErrorCode, type ErrorDetail, ServiceError } from '../domain/common/errors.js';

export interface Problem extends ErrorDetail {
  /** A code the schema asked for explicitly (e.g. HTML_CONTENT_TOO_LARGE), if any. */
  readonly code?: ErrorCode;
  /** An unknown field's likely meaning, a known field's path: it decides the code as that field would. */
  readonly suggestion?: string;
}

/** The parts of a zod schema this file reads: its kind and what it wraps (zod 4's `_zod.def`). */
interface SchemaDef {
  readonly type?: string;
  readonly shape?: Record<string, unknown>;
  readonly innerType?: unknown;
  readonly in?: unknown;
  readonly element?: unknown;
  readonly valueType?: unknown;
  readonly options?: readonly unknown[];
  readonly getter?: () => unknown;
}
const defOf = (schema: unknown): SchemaDef =>
  (schema as { _zod?: { def?: SchemaDef } } | undefined)?._zod?.def ?? {};

/** The object schemas a value at this point may be (through optional, default, pipes, unions). */
const objectsOf = (schema: unknown, depth = 0): SchemaDef[] => {
  const def = defOf(schema);
  if (depth > 20) return [];
  switch (def.type) {
    case 'object':
      return [def];
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return objectsOf(def.innerType, depth + 1);
    case 'pipe':
      return objectsOf(def.in, depth + 1);
    case 'lazy':
      return def.getter ? objectsOf(def.getter(), depth + 1) : [];
    case 'union':
      return (def.options ?? []).flatMap((o) => objectsOf(o, depth + 1));
    default:
      return [];
  }
};

/** The schemas a step of an issue's path leads to (a field, an array's item, a record's value). */
const childrenOf = (schema: unknown, step: PropertyKey, depth = 0): unknown[] => {
  const def = defOf(schema);
  if (depth > 20) return [];
  switch (def.type) {
    case 'object':
      return def.shape && typeof step === 'string' && step in def.shape ? [def.shape[step]] : [];
    case 'array':
      return typeof step === 'number' ? [def.element] : [];
    case 'record':
      return [def.valueType];
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return childrenOf(def.innerType, step, depth + 1);
    case 'pipe':
      return childrenOf(def.in, step, depth + 1);
    case 'lazy':
      return def.getter ? childrenOf(def.getter(), step, depth + 1) : [];
    case 'union':
      return (def.options ?? []).flatMap((o) => childrenOf(o, step, depth + 1));
    default:
      return [];
  }
};

/**
 * The fields a body may have where an unknown one was found: the object's own, and one level down
 * (`pdf_options.print_background` for a `print_background` sent at the top of a template).
 */
const knownFieldsAt = (schema: unknown, path: readonly PropertyKey[]): string[] => {
  let nodes = [schema];
  for (const step of path) nodes = nodes.flatMap((n) => childrenOf(n, step));
  const own = nodes.flatMap(objectsOf).flatMap((o) => Object.keys(o.shape ?? {}));
  const nested = nodes
    .flatMap(objectsOf)
    .flatMap((o) => Object.entries(o.shape ?? {}))
    .flatMap(([key, child]) =>
      objectsOf(child).flatMap((c) => Object.keys(c.shape ?? {}).map((k) => `${key}.${k}`)),
    );
  return [...new Set([...own, ...nested])];
};

/** `printBackground`, `print-background` and `PRINT_BACKGROUND` are the same name spelled apart. */
const spelling = (name: string): string => name.toLowerCase().replace(/[_\-\s.]/g, '');

/**
 * The known field an unknown one most likely meant: the same name in another spelling (puppeteer's
 * camelCase), else a typo (at most 2 edits, 1 for short names) of one of them, nearest first.
 */
export const nearestField = (unknown: string, known: readonly string[]): string | undefined => {
  const wanted = spelling(unknown);
  const leaf = (k: string) => spelling(k.slice(k.lastIndexOf('.') + 1));
  const same = known.find((k) => spelling(k) === wanted) ?? known.find((k) => leaf(k) === wanted);
  if (same) return same;
  const budget = wanted.length >= 4 ? 2 : 1;
  let best: { field: string; edits: number } | undefined;
  for (const field of known) {
    for (const name of [spelling(field), leaf(field)]) {
      const edits = distance(wanted, name);
      if (edits <= budget && (best === undefined || edits < best.edits)) best = { field, edits };
    }
  }
  return best?.field;
};

export const problemsOf = (error: z.ZodError, schema?: z.ZodType): Problem[] =>
  error.issues.flatMap((issue): Problem[] => {
    const base = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      const known = schema ? knownFieldsAt(schema, issue.path) : [];
      return issue.keys.map((key) => {
        const near = nearestField(key, known);
        const suggestion = near && (base ? `${base}.${near}` : near);
        return {
          field: base ? `${base}.${key}` : key,
          issue: suggestion ? `is not a known field; did you mean ${suggestion}?` : 'is not a known field',
          ...(suggestion ? { suggestion } : {}),
        };
      });
    }
    const code = issue.code === 'custom' ? (issue.params?.code as ErrorCode | undefined) : undefined;
    return [{ field: base || '(body)', issue: issue.message, ...(code ? { code } : {}) }];
  });

/** Parse with `schema`; on failure throw a 422 whose code `classify` picks from the first problem. */
export const parseOrThrow = <S extends z.ZodType>(
  schema: S,
  input: unknown,
  classify: (problem: Problem) => ErrorCode = () => 'VALIDATION_ERROR',
): z.output<S> => {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const problems = problemsOf(result.error, schema);
  // A field missing because it was sent in another spelling: the spelling is the mistake to name.
  const misspelt = problems.find((p) => p.suggestion && problems.some((q) => q.field === p.suggestion));
  const first = misspelt ?? problems[0] ?? { field: '(body)', issue: 'is invalid' };
  throw new ServiceError(first.code ?? classify(first), `${first.field} ${first.issue}`, {
    details: problems.map(({ field, issue }) => ({ field, issue })),
  });
};

type DeepReadonly<T> = T extends readonly (infer E)[]
  ? readonly DeepReadonly<E>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/**
 * `true` when a schema's output `Wire` is exactly the domain's input `Domain`: the same fields,
 * optional ones included, each of the same type (readonly aside: zod's outputs are mutable, the
 * domain's types readonly). The edges assert it where they hand a parsed body to a use case, so a
 * field added to one side only fails `tsc` there instead of being dropped without a word. (Each
 * side assignable to the other is not enough: an optional field only one side has passes both.)
 */
export type Exactly<Wire, Domain> =
  (<T>() => T extends DeepReadonly<Wire> ? 1 : 2) extends <T>() => T extends DeepReadonly<Domain> ? 1 : 2
    ? true
    : false;

/** `value` without `keys`, as `{ a, b, ...rest } = value` leaves `rest`, the keys named once. */
export const without = <T extends object, K extends keyof T>(value: T, keys: readonly K[]): Omit<T, K> =>
  Object.fromEntries(
    Object.entries(value).filter(([key]) => !(keys as readonly PropertyKey[]).includes(key)),
  ) as Omit<T, K>;
