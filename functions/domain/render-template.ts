/**
 * What a render renders, resolved once: the template (inline, or a saved one looked up at its
 * version), its options (a saved template's as defaults under the request's), whether it renders
 * offline (another account's template), and the variables each part cannot do without (from one
 * parse). pdf-jobs.ts `accept` resolves it per request; a batch resolves it once for all its
 * items and each item's variables are checked against it (`checkVariables`), no parse again.
 */
import { ServiceError } from './errors.js';
import type { JobMode } from './jobs.js';
import type { Principal } from './principal.js';
import type { RenderSource } from './render-command.js';
import {
  checkHeaderFooterMargins,
  type RenderOptions,
  renderOptionsFrom,
  withTemplateDefaults,
} from './render-options.js';
import type { RenderOrder } from './render-order.js';
import { checkRequired, parseRequired, type RequiredVariable, type TemplateField } from './template-check.js';
import type { Template, TemplateStore } from './templates.js';

export interface ResolvedTemplate {
  readonly field: TemplateField;
  readonly templateId: string | null;
  /** The saved template's version; null for inline html. */
  readonly version: number | null;
  readonly html: string;
  readonly header: string | null;
  readonly footer: string | null;
  readonly options: RenderOptions;
  /** Another account's template: it renders with no network egress at all. */
  readonly offline: boolean;
  /**
   * What each part cannot do without (its parse's `required`), or its syntax error: answered in
   * the parts' order with their variables (html, then header, then footer), as checkTemplate does.
   */
  readonly required: {
    readonly html: Parsed;
    readonly header: Parsed;
    readonly footer: Parsed;
  };
}

type Parsed = readonly RequiredVariable[] | ServiceError;

const parsed = async (source: string | null, field: TemplateField): Promise<Parsed> => {
  if (source === null) return [];
  try {
    return await parseRequired(source, field);
  } catch (e) {
    if (e instanceof ServiceError) return e;
    throw e;
  }
};

const check = (part: Parsed, order: RenderOrder, field: TemplateField): void => {
  if (part instanceof ServiceError) throw part;
  checkRequired(part, order.variables, field);
};

/**
 * What a render or a batch names, read for `principal`: a saved template (readable to it, at the
 * version named) or the inline parts. Another account's template is a stranger's page run with
 * the caller's variables: it renders offline, and only at a version the caller named, so that no
 * later edit of its owner reaches the caller unseen (422 otherwise).
 */
export const readSource = async (
  templates: TemplateStore,
  principal: Principal,
  source: RenderSource,
  /** The saved template's read, begun earlier for this request (beside the rate limit's write). */
  begun?: Promise<Template>,
) => {
  const document =
    source.kind === 'saved'
      ? await (begun ??
          templates.getReadable(source.templateId, principal.accountId, source.version ?? undefined))
      : {
          html: source.html,
          header_html: source.headerHtml,
          footer_html: source.footerHtml,
          version: null,
        };
  const offline = 'owner_user_id' in document && document.owner_user_id !== principal.accountId;
  if (offline && source.kind === 'saved' && source.version === null) {
    const issue =
      "is required to render another account's template: name the version you checked (the template's version field)";
    throw new ServiceError('VALIDATION_ERROR', `template_version ${issue}`, {
      details: [{ field: 'template_version', issue }],
    });
  }
  return { document, offline };
};

export const createTemplateResolver = (templates: TemplateStore, budgetOf: (mode: JobMode) => number) => ({
  /**
   * Lookup, options, margins and parse: 404/422 before anything is held. `begun`: the saved
   * template's read the request began earlier (its error, if any, is answered here).
   */
  async resolve(
    principal: Principal,
    order: RenderOrder,
    mode: JobMode,
    begun?: Promise<Template>,
  ): Promise<ResolvedTemplate> {
    const { source } = order;
    const field: TemplateField = source.kind === 'saved' ? 'template_id' : 'html';
    const { document, offline } = await readSource(templates, principal, source, begun);
    const header = document.header_html ?? null;
    const footer = document.footer_html ?? null;
    // A saved template's options are the defaults; the request's own were checked alone already.
    const saved = 'pdf_options' in document ? document.pdf_options : null;
    const options = saved
      ? renderOptionsFrom(withTemplateDefaults(saved, order.requested ?? {}), budgetOf(mode))
      : order.options;
    checkHeaderFooterMargins(options, { header: header !== null, footer: footer !== null });
    return {
      field,
      templateId: source.kind === 'saved' ? source.templateId : null,
      version: document.version,
      html: document.html,
      header,
      footer,
      options,
      offline,
      required: {
        html: await parsed(document.html, field),
        header: await parsed(header, 'header_html'),
        footer: await parsed(footer, 'footer_html'),
      },
    };
  },
});

/** 422 INVALID_HTML_TEMPLATE when `order`'s variables lack one a part cannot do without. */
export const checkVariables = (resolved: ResolvedTemplate, order: RenderOrder): void => {
  check(resolved.required.html, order, resolved.field);
  check(resolved.required.header, order, 'header_html');
  check(resolved.required.footer, order, 'footer_html');
};
