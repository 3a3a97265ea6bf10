/**
 * Turning schema failures into the contract's 422 body: one `details` entry per problem, field
 * paths dotted (`page_load.timeout_ms`), and a code chosen by the route (the spec gives the PDF
 * endpoint field-specific codes; other endpoints answer VALIDATION_ERROR).
 */
import type { z } from 'zod';
import { type ErrorCode, type ErrorDetail, ServiceError } from '../domain/common/errors.js';

export interface Problem extends ErrorDetail {
  /** A code the schema asked for explicitly (e.g. HTML_CONTENT_TOO_LARGE), if any. */
  readonly code?: ErrorCode;
}

export const problemsOf = (error: z.ZodError): Problem[] =>
  error.issues.flatMap((issue): Problem[] => {
    const base = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        field: base ? `${base}.${key}` : key,
        issue: 'is not a known field',
      }));
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
  const problems = problemsOf(result.error);
  const first = problems[0] ?? { field: '(body)', issue: 'is invalid' };
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
