/**
 * The Jinja2 engine's public surface (TEMPORARY SHIM: delegates to the old nunjucks-based
 * functions/domain/templating.ts until the new engine replaces it; the signatures below are final).
 *
 * - parseTemplate: syntax check and introspection only; never executes anything. Safe for the API.
 * - renderTemplate: executes a template. Runs only in the renderer's templating worker.
 */
import { ServiceError } from '../domain/errors.js';
import { compileTemplate, renderTemplate as oldRender } from '../domain/templating.js';

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
}

const fromServiceError = (e: unknown): never => {
  if (e instanceof ServiceError) {
    const line = /line (\d+)/.exec(e.message);
    throw new TemplateError(e.message, 'runtime', line ? Number(line[1]) : undefined);
  }
  throw e;
};

/** Parse only: throws TemplateError (kind 'syntax') for a template that does not parse. */
export const parseTemplate = (source: string): ParsedTemplate => {
  try {
    const compiled = compileTemplate(source);
    const names = [...compiled.lines.keys()].sort();
    return {
      undeclared: names,
      required: names
        .filter((n) => !compiled.guarded.has(n))
        .map((name) => ({ name, line: compiled.lines.get(name) ?? 1 })),
    };
  } catch (e) {
    return fromServiceError(e);
  }
};

/** Execute a template with JSON `variables`; throws TemplateError. */
export const renderTemplate = (
  source: string,
  variables: Record<string, unknown>,
  options: RenderOptions = {},
): string => {
  let out: string;
  try {
    out = oldRender(source, variables);
  } catch (e) {
    return fromServiceError(e);
  }
  if (options.maxOutputBytes !== undefined && Buffer.byteLength(out) > options.maxOutputBytes) {
    throw new TemplateError(`Template output exceeds ${options.maxOutputBytes} bytes`, 'limit');
  }
  return out;
};
