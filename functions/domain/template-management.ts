/**
 * The saved-template use cases: create, list (own, public), get, edit, change visibility, delete.
 * Each route is one call here. Bodies arrive checked (template-request.ts); html is then parsed
 * (never executed) for its syntax and its variables, before any template is looked up.
 */
import { parseTemplate, TemplateError } from '../templating/index.js';
import { ServiceError } from './errors.js';
import { newTemplateId, TEMPLATE_ID } from './ids.js';
import type { Page } from './pagination.js';
import type { Principal } from './principal.js';
import { contentPayloadBytes, type TemplateContent } from './template-content.js';
import type { CreateTemplateBody, TemplateVisibilityBody, UpdateTemplateBody } from './template-request.js';
import { type Template, type TemplateStore, templateNotFound } from './templates.js';

export interface TemplateManagementDeps {
  readonly store: TemplateStore;
}

export const createTemplateManagement = ({ store }: TemplateManagementDeps) => {
  /**
   * Parses the html (syntax only: nothing runs) for its variables. Content that would not fit
   * one answer is refused here, so any saved template can be read back: only html full of
   * control characters, each sent as a 6-character escape, gets near that.
   */
  const contentOf = (html: string): TemplateContent => {
    let variables: readonly string[];
    try {
      variables = parseTemplate(html).undeclared;
    } catch (e) {
      if (!(e instanceof TemplateError)) throw e;
      throw new ServiceError('INVALID_HTML_TEMPLATE', e.message, {
        details: [{ field: 'html', issue: e.message, ...(e.line !== undefined ? { line: e.line } : {}) }],
      });
    }
    const content = { html, variables: [...variables] };
    if (contentPayloadBytes(content) > store.maxContentBytes) {
      const issue = `with its variables must take at most ${store.maxContentBytes} bytes as a JSON answer (control characters take six each)`;
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
    create: (principal: Principal, body: CreateTemplateBody): Promise<Template> =>
      store.create(
        {
          id: newTemplateId(),
          owner_user_id: principal.accountId,
          name: body.name,
          is_public: body.is_public,
        },
        contentOf(body.html),
      ),

    listOwn: (principal: Principal, page: Page): Promise<Template[]> =>
      store.listOwned(principal.accountId, page),

    listPublic: (page: Page): Promise<Template[]> => store.listPublic(page),

    async get(principal: Principal, templateId: string): Promise<Template> {
      checkId(templateId);
      return store.getReadable(templateId, principal.accountId);
    },

    /** Only the name: the same version. New html: a new version. */
    async update(principal: Principal, templateId: string, body: UpdateTemplateBody): Promise<Template> {
      const content = body.html === undefined ? undefined : contentOf(body.html);
      checkId(templateId);
      if (content) return store.revise(templateId, principal.accountId, content, body.name);
      return store.rename(templateId, principal.accountId, body.name as string);
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
