/**
 * A render's templates checked before anything is held: parsed (never executed), each problem
 * named by the field it came from (html, template_id, header_html, footer_html).
 */
import { type ParsedTemplate, TemplateError } from '../../templating/index.js';
import { type ErrorDetail, ServiceError } from '../common/errors.js';
import type { TemplatePart } from '../common/ports.js';

/** Where a template came from: inline html, a saved template, or a header or footer of either. */
export type TemplateField = 'html' | 'template_id' | 'header_html' | 'footer_html';

export const PART_FIELD: Readonly<Record<TemplatePart, TemplateField>> = {
  header: 'header_html',
  footer: 'footer_html',
};

/** A header's or footer's problems say which it is: the html's were the only ones before them. */
export const named = (field: TemplateField, message: string): string =>
  field === 'header_html' || field === 'footer_html' ? `${field}: ${message}` : message;

export const templateDetail = (
  field: TemplateField,
  issue: string,
  where: { readonly line?: number; readonly name?: string } = {},
): ErrorDetail => ({
  field,
  issue,
  ...(where.line !== undefined ? { line: where.line } : {}),
  ...(where.name !== undefined ? { name: where.name } : {}),
});

/** What the checks need of a render's variables (the data, or its text as the API keeps it). */
export interface NamedVariables {
  has(name: string): boolean;
}

/** A variable a template cannot do without, and the line that first needs it. */
export interface RequiredVariable {
  readonly name: string;
  readonly line: number;
}

/**
 * The parser port: parses a template, never executes it; throws TemplateError for a syntax error
 * or a bound exceeded. The service's (functions/templating/parse-pool.ts) parses a large template
 * in a worker, bounded in time and memory, so that no template holds the API's thread: renders,
 * batches and saved templates all parse through it.
 */
export interface TemplateParser {
  parse(source: string): Promise<ParsedTemplate>;
}

/** Parses the template through `parser`: a syntax error or a bound exceeded answers 422 INVALID_HTML_TEMPLATE. */
export const parseRequired = async (
  parser: TemplateParser,
  source: string,
  field: TemplateField,
): Promise<readonly RequiredVariable[]> => {
  try {
    return (await parser.parse(source)).required;
  } catch (e) {
    if (!(e instanceof TemplateError)) throw e;
    throw new ServiceError('INVALID_HTML_TEMPLATE', named(field, e.message), {
      details: [templateDetail(field, e.message, { line: e.line })],
    });
  }
};

/** A variable the template cannot do without that `variables` lacks answers 422 INVALID_HTML_TEMPLATE. */
export const checkRequired = (
  required: readonly RequiredVariable[],
  variables: NamedVariables,
  field: TemplateField,
): void => {
  let missing: RequiredVariable | undefined;
  for (const variable of required) {
    if (variables.has(variable.name)) continue;
    if (!missing || variable.line < missing.line) missing = variable;
  }
  if (missing) {
    const message = `Variable '${missing.name}' is undefined (line ${missing.line})`;
    throw new ServiceError('INVALID_HTML_TEMPLATE', named(field, message), {
      details: [templateDetail(field, message, missing)],
    });
  }
};
