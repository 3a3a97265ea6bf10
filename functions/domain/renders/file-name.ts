/**
 * Output file names (`file_name` on a render, a batch or a batch's item): the name the PDF
 * downloads as (its link's Content-Disposition) and has in a batch's ZIP.
 *
 * A name is a template of the render's variables, but not a Jinja2 one: the API never executes a
 * caller's template (pdf-jobs.ts: the renderer does), so a name takes only placeholders,
 * `{{ name }}` or `{{ customer.name }}` (a path of keys and list indexes), each replaced by the
 * variable's text (a string, number or boolean). Anything else that looks like templating (`{%`,
 * a filter, a missing or non-scalar variable) is refused with INVALID_FILE_NAME, naming the field,
 * before anything is held.
 *
 * Then it is made safe everywhere a file name goes: characters no file system or header takes
 * (controls, / \ : * ? " < > |) become `_`, runs of white space one space, leading and trailing
 * dots and spaces go, `.pdf` is added when it does not end so, and it holds at most
 * MAX_FILE_NAME_CHARACTERS characters.
 */
import { ServiceError } from '../common/errors.js';

export const MAX_FILE_NAME_CHARACTERS = 200;
/** A template may be longer than its result, within reason. */
export const MAX_FILE_NAME_TEMPLATE_CHARACTERS = 1000;

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces
const UNSAFE = /[\u0000-\u001f\u007f-\u009f/\\:*?"<>|]/g;

const invalid = (field: string, issue: string) =>
  new ServiceError('INVALID_FILE_NAME', `${field} ${issue}`, { details: [{ field, issue }] });

const lookup = (variables: unknown, path: string): unknown => {
  let at: unknown = variables;
  for (const key of path.split('.')) {
    if (Array.isArray(at) && /^\d+$/.test(key)) at = at[Number(key)];
    else if (at !== null && typeof at === 'object' && Object.hasOwn(at, key))
      at = (at as Record<string, unknown>)[key];
    else return undefined;
  }
  return at;
};

/**
 * The name in ASCII, for the plain `filename=` of a Content-Disposition (RFC 6266): a header
 * carries no UTF-8, so a name that is not ASCII goes in `filename*` too and this is the fallback.
 */
export const asciiFileName = (name: string): string =>
  name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]/g, '_');

/** The name a `{{ placeholder }}` template makes of `variables`, made safe (module comment); throws 422. */
export const renderFileName = (template: string, variables: unknown, field = 'file_name'): string => {
  if (template.length > MAX_FILE_NAME_TEMPLATE_CHARACTERS)
    throw invalid(field, `must be at most ${MAX_FILE_NAME_TEMPLATE_CHARACTERS} characters`);
  if (template.includes('{%') || template.includes('{#'))
    throw invalid(field, 'takes only {{ variable }} placeholders, not {% %} or {# #}');
  const filled = template.replace(PLACEHOLDER, (_, path: string) => {
    if (!PATH.test(path))
      throw invalid(field, `has a placeholder {{ ${path} }} that is not a variable's name or path (a.b.0)`);
    const value = lookup(variables, path);
    if (value === undefined || value === null)
      throw invalid(field, `names variable '${path}', which is undefined`);
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
      throw invalid(field, `names variable '${path}', which is not a string, number or boolean`);
    return String(value);
  });
  if (filled.includes('{{') || filled.includes('}}'))
    throw invalid(field, 'has an unclosed {{ placeholder }}');
  let name = filled
    .replace(UNSAFE, '_')
    .replace(/\s+/g, ' ')
    .replace(/^[\s.]+|[\s.]+$/g, '');
  if (!/\.pdf$/i.test(name)) name = `${name}.pdf`;
  if (name.length <= 4) throw invalid(field, 'makes an empty name once made safe');
  if ([...name].length > MAX_FILE_NAME_CHARACTERS)
    throw invalid(field, `makes a name longer than ${MAX_FILE_NAME_CHARACTERS} characters`);
  return name;
};
