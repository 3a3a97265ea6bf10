/**
 * The saved-template use cases: create, list (own, public), get, edit, change visibility, delete.
 * Each route is one call here. Bodies arrive checked (template-request.ts); html is then parsed
 * (never executed) for its syntax and its variables, before any template is looked up.
 */
import { TemplateError } from '../../templating/index.js';
import { ServiceError } from '../common/errors.js';
import { newTemplateId, TEMPLATE_ID } from '../common/ids.js';
import type { JsonText } from '../common/json-text.js';
import type { Page } from '../common/pagination.js';
import type { Principal } from '../common/principal.js';
import { renderOptionsFrom, type TemplatePdfOptions } from '../renders/render-options.js';
import { checkSigningKey, type SigningKeyResolver } from '../signing/signing-keys.js';
import type { TemplateParser } from './template-check.js';
import type {
  CreateTemplateCommand as CreateTemplateBody,
  TemplateVisibilityCommand as TemplateVisibilityBody,
  UpdateTemplateCommand as UpdateTemplateBody,
} from './template-commands.js';
import { contentPayloadBytes, type TemplateContent } from './template-content.js';
import { STARTER_ACCOUNT_ID, type Template, type TemplateStore, templateNotFound } from './templates.js';

/** The parts of a template's content, each a Jinja2 template (header and footer optional). */
interface Parts {
  readonly html: string;
  readonly header_html: string | null;
  readonly footer_html: string | null;
}
type ContentField = keyof Parts;
const CONTENT_FIELDS: readonly ContentField[] = ['html', 'header_html', 'footer_html'];

/** What a version holds besides its templates: sample data and render options (null: none). */
interface Data {
  readonly sample_variables: JsonText | null;
  readonly pdf_options: TemplatePdfOptions | null;
}
const DATA_FIELDS: readonly (keyof Data)[] = ['sample_variables', 'pdf_options'];

/**
 * Saved options that could never print (margins that leave no page) are refused at save, with
 * the field where they sit; the render checks them again merged with its own.
 */
const checkPdfOptions = (options: TemplatePdfOptions | null): void => {
  if (options === null) return;
  try {
    renderOptionsFrom(options, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);
  } catch (e) {
    if (!(e instanceof ServiceError)) throw e;
    throw new ServiceError(e.code, `pdf_options.${e.message}`, {
      details: (e.details ?? []).map((d) => ({ ...d, field: `pdf_options.${d.field}` })),
    });
  }
};

export interface TemplateManagementDeps {
  readonly store: TemplateStore;
  /** The parser port (template-check.ts): saved templates parse as renders do, bounded. */
  readonly parser: TemplateParser;
  /** The account's signing keys: a saved signature names one of them (none given: every key is unknown). */
  readonly signingKeys?: Pick<SigningKeyResolver, 'check'> | undefined;
}

export const createTemplateManagement = ({ store, parser, signingKeys }: TemplateManagementDeps) => {
  /**
   * Saved options that sign name a key of the saver's, as a render's do (422 INVALID_SIGNING_KEY
   * naming `pdf_options.signature.key_id`, nothing saved). A key deleted later is the render's to
   * refuse (render time, the same error).
   */
  const checkSignature = async (principal: Principal, options: TemplatePdfOptions | null | undefined) => {
    const keyId = options?.signature?.key_id;
    if (keyId === undefined) return;
    try {
      await checkSigningKey(signingKeys, principal.accountId, keyId);
    } catch (e) {
      if (!(e instanceof ServiceError) || e.code !== 'INVALID_SIGNING_KEY') throw e;
      throw new ServiceError(e.code, `pdf_options.${e.message}`, {
        details: (e.details ?? []).map((d) => ({ ...d, field: `pdf_options.${d.field}` })),
      });
    }
  };

  /**
   * Parses one part (syntax only: nothing runs; a large one in a worker, bounded: parse-pool.ts)
   * for the variables it reads. `parsed` keeps one request's answers: an edit's new parts are
   * checked first and then read again for the version's content.
   */
  const variablesOf = async (
    source: string,
    field: ContentField,
    parsed: Map<string, readonly string[]>,
  ): Promise<readonly string[]> => {
    const known = parsed.get(source);
    if (known) return known;
    try {
      const { undeclared } = await parser.parse(source);
      parsed.set(source, undeclared);
      return undeclared;
    } catch (e) {
      if (!(e instanceof TemplateError)) throw e;
      throw new ServiceError('INVALID_HTML_TEMPLATE', e.message, {
        details: [{ field, issue: e.message, ...(e.line !== undefined ? { line: e.line } : {}) }],
      });
    }
  };

  /** The parts a body gives, each parsed: a template that does not parse is refused before any lookup. */
  const checkParts = async (parts: Partial<Parts>, parsed: Map<string, readonly string[]>): Promise<void> => {
    for (const field of CONTENT_FIELDS) {
      const source = parts[field];
      if (typeof source === 'string') await variablesOf(source, field, parsed);
    }
  };

  /**
   * The content of a version: its parts and the variables any of them reads. Content that would
   * not fit one answer is refused here, so any saved template can be read back: only html full
   * of control characters, each sent as a 6-character escape, gets near that.
   */
  const contentOf = async (
    parts: Parts,
    data: Data,
    parsed = new Map<string, readonly string[]>(),
  ): Promise<TemplateContent> => {
    const variables = new Set<string>();
    for (const field of CONTENT_FIELDS) {
      const source = parts[field];
      if (source !== null) for (const name of await variablesOf(source, field, parsed)) variables.add(name);
    }
    checkPdfOptions(data.pdf_options);
    const content = { ...parts, ...data, variables: [...variables].sort() };
    if (contentPayloadBytes(content) > store.maxContentBytes) {
      const issue = `with header_html, footer_html, sample_variables and the variables must take at most ${store.maxContentBytes} bytes as a JSON answer (control characters take six each)`;
      throw new ServiceError('HTML_CONTENT_TOO_LARGE', `html ${issue}`, {
        details: [{ field: 'html', issue }],
      });
    }
    return content;
  };

  /** Ids are ours: anything else names no template, and costs no read. */
  const checkId = (templateId: string): void => {
    if (!TEMPLATE_ID.test(templateId)) throw templateNotFound(templateId);
  };

  return {
    async create(principal: Principal, body: CreateTemplateBody): Promise<Template> {
      const content = await contentOf(
        {
          html: body.html,
          header_html: body.header_html ?? null,
          footer_html: body.footer_html ?? null,
        },
        { sample_variables: body.sample_variables ?? null, pdf_options: body.pdf_options ?? null },
      );
      await checkSignature(principal, body.pdf_options);
      return store.create(
        {
          id: newTemplateId(),
          owner_user_id: principal.accountId,
          name: body.name,
          is_public: body.is_public,
        },
        content,
      );
    },

    listOwn: (principal: Principal, page: Page): Promise<Template[]> =>
      store.listOwned(principal.accountId, page),

    listPublic: (page: Page): Promise<Template[]> => store.listPublic(page),

    /** The starter templates (STARTER_ACCOUNT_ID's public ones), newest created first. */
    listStarters: async (page: Page): Promise<Template[]> =>
      (await store.listOwned(STARTER_ACCOUNT_ID, page)).filter((t) => t.is_public),

    async get(principal: Principal, templateId: string): Promise<Template> {
      checkId(templateId);
      return store.getReadable(templateId, principal.accountId);
    },

    /**
     * Only the name: the same version. New html, header, footer, sample data or pdf options: a new
     * version, whose other parts are the current version's (read first: two edits at once both
     * land as versions, and the later one carries what it read).
     */
    async update(principal: Principal, templateId: string, body: UpdateTemplateBody): Promise<Template> {
      const given: Partial<Parts> = {
        ...(body.html !== undefined ? { html: body.html } : {}),
        ...(body.header_html !== undefined ? { header_html: body.header_html } : {}),
        ...(body.footer_html !== undefined ? { footer_html: body.footer_html } : {}),
      };
      const givenData: Partial<Data> = {
        ...(body.sample_variables !== undefined ? { sample_variables: body.sample_variables } : {}),
        ...(body.pdf_options !== undefined ? { pdf_options: body.pdf_options } : {}),
      };
      const parsed = new Map<string, readonly string[]>();
      await checkParts(given, parsed);
      if (givenData.pdf_options !== undefined) checkPdfOptions(givenData.pdf_options);
      checkId(templateId);
      // Only options the body gives: a key deleted since the last save fails at render, not here.
      await checkSignature(principal, givenData.pdf_options);
      const givenCount = Object.keys(given).length + Object.keys(givenData).length;
      if (givenCount === 0) {
        return store.rename(templateId, principal.accountId, body.name as string);
      }
      let current: (Parts & Data) | undefined;
      if (givenCount < CONTENT_FIELDS.length + DATA_FIELDS.length) {
        const template = await store.getReadable(templateId, principal.accountId);
        // Another account's public template is readable, but not the caller's to edit.
        if (template.owner_user_id !== principal.accountId) throw templateNotFound(templateId);
        current = template;
      }
      const parts = { ...(current as Parts & Data), ...given, ...givenData } as Parts & Data;
      const content = await contentOf(
        { html: parts.html, header_html: parts.header_html, footer_html: parts.footer_html },
        { sample_variables: parts.sample_variables, pdf_options: parts.pdf_options },
        parsed,
      );
      return store.revise(templateId, principal.accountId, content, body.name);
    },

    async setVisibility(
      principal: Principal,
      templateId: string,
      body: TemplateVisibilityBody,
    ): Promise<Template> {
      checkId(templateId);
      return store.setVisibility(templateId, principal.accountId, body.is_public);
    },

    async remove(principal: Principal, templateId: string): Promise<void> {
      checkId(templateId);
      await store.remove(templateId, principal.accountId);
    },
  };
};

export type TemplateManagement = ReturnType<typeof createTemplateManagement>;
