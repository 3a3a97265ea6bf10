/**
 * What a render renders, resolved once: the template (inline, or a saved one looked up at its
 * version), its options (a saved template's as defaults under the request's), whether it renders
 * offline (another account's template), and the variables each part cannot do without (from one
 * parse, through the parser port). pdf-jobs.ts `accept` resolves it per request; a batch
 * (batches.ts) resolves it once for all its items and checks each item's variables against it,
 * no parse again. Renders and batches parse the same way: bounded in time, off the API's thread
 * when large.
 */
import { ServiceError } from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import type { JobMode } from '../jobs/jobs.js';
import type { RenderSource } from '../renders/render-command.js';
import type { RequestedOptions } from '../renders/render-options.js';
import {
  checkHeaderFooterMargins,
  type RenderOptions,
  renderOptionsFrom,
  SYNC_MAX_TIMEOUT_MS,
  withTemplateDefaults,
} from '../renders/render-options.js';
import type { RenderOrder } from '../renders/render-order.js';
import {
  checkRequired,
  parseRequired,
  type RequiredVariable,
  type TemplateField,
  type TemplateParser,
} from './template-check.js';
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
  /** The options as requested, over a saved template's own (a batch's items add their metadata). */
  readonly requested: RequestedOptions;
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

export type Parsed = readonly RequiredVariable[] | ServiceError;

const parsed = async (
  parser: TemplateParser,
  source: string | null,
  field: TemplateField,
): Promise<Parsed> => {
  if (source === null) return [];
  try {
    return await parseRequired(parser, source, field);
  } catch (e) {
    if (e instanceof ServiceError) return e;
    throw e;
  }
};

const check = (part: Parsed, order: Pick<RenderOrder, 'variables'>, field: TemplateField): void => {
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

/** What a render or a batch asks to resolve: its template, and its options as requested. */
export interface TemplateRequest {
  readonly source: RenderSource;
  /** The request's own options, checked alone already (an inline template's are the render's). */
  readonly options?: RenderOptions;
  /** The options as requested. Absent: none given. */
  readonly requested?: RequestedOptions;
}

export interface TemplateResolverDeps {
  readonly templates: TemplateStore;
  /** The parser port: every template a render or a batch names is parsed through it, bounded. */
  readonly parser: TemplateParser;
  readonly limits: { readonly renderBudgetMs: number; readonly asyncRenderBudgetMs: number };
}

export const createTemplateResolver = ({ templates, parser, limits }: TemplateResolverDeps) => ({
  /**
   * Lookup, options, margins and parse: 404/422 before anything is held. `begun`: the saved
   * template's read the request began earlier (its error, if any, is answered here).
   */
  async resolve(
    principal: Principal,
    request: TemplateRequest,
    mode: JobMode,
    begun?: Promise<Template>,
  ): Promise<ResolvedTemplate> {
    const { source } = request;
    const budgetMs = mode === 'async' ? limits.asyncRenderBudgetMs : limits.renderBudgetMs;
    const field: TemplateField = source.kind === 'saved' ? 'template_id' : 'html';
    const { document, offline } = await readSource(templates, principal, source, begun);
    const header = document.header_html ?? null;
    const footer = document.footer_html ?? null;
    // A saved template's options are the defaults; the request's own were checked alone already.
    const saved = 'pdf_options' in document ? document.pdf_options : null;
    const requested = saved
      ? withTemplateDefaults(saved, request.requested ?? {})
      : (request.requested ?? {});
    const options =
      saved || request.options === undefined
        ? renderOptionsFrom(requested, budgetMs, mode === 'async' ? budgetMs : SYNC_MAX_TIMEOUT_MS)
        : request.options;
    checkHeaderFooterMargins(options, { header: header !== null, footer: footer !== null });
    return {
      field,
      templateId: source.kind === 'saved' ? source.templateId : null,
      version: document.version,
      html: document.html,
      header,
      footer,
      options,
      requested,
      offline,
      required: {
        html: await parsed(parser, document.html, field),
        header: await parsed(parser, header, 'header_html'),
        footer: await parsed(parser, footer, 'footer_html'),
      },
    };
  },
});

export type TemplateResolver = ReturnType<typeof createTemplateResolver>;

/** 422 INVALID_HTML_TEMPLATE when `order`'s variables lack one a part cannot do without. */
export const checkVariables = (resolved: ResolvedTemplate, order: Pick<RenderOrder, 'variables'>): void => {
  check(resolved.required.html, order, resolved.field);
  check(resolved.required.header, order, 'header_html');
  check(resolved.required.footer, order, 'footer_html');
};
