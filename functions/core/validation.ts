/**
 * Turning schema failures into the contract's 422 body: one `details` entry per problem, field
 * paths dotted (`page_load.timeout_ms`), and a code chosen by the route (the spec gives the PDF
 * endpoint field-specific codes; other endpoints answer VALIDATION_ERROR).
 */
import type { z } from 'zod';
import { type ErrorCode, type ErrorDetail, ServiceError } from '../domain/errors.js';

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
