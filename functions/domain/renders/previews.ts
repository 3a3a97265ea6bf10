/**
 * Previews (POST /v1/previews, issue 40): the dashboard's editor renders what a render would
 * (the same template resolution, variable checks, renderer, isolation and limits on the page) but
 * holds no job, charges no unit and is not in the Jobs list or usage. What keeps a preview from
 * being a free render: a "PREVIEW" stamp across every page (over the content, so no opaque
 * background hides it), a cap of its own per account (a minute's and a UTC day's), session
 * credentials only (no API key reaches it), and a file kept one day under its own prefix.
 *
 * Left out of a preview, because they finish a document rather than show it: a password
 * (`protection`: the browser's viewer could not open it), a signature and an e-invoice attachment.
 * The caller's `watermark` and `stamp` are drawn as a render draws them (a designer sees them), and
 * the PREVIEW mark over both, on every page (the `preview_mark` finishing step, after `stamp`).
 *
 * The editor's variable check (`variables`) is the render's own introspection (the parser port):
 * what the editor lists as missing is what a render would need.
 */

import { TemplateError } from '../../templating/index.js';
import type { RateLimitState, UsageStore } from '../accounts/usage.js';
import { ServiceError } from '../common/errors.js';
import { newJobId } from '../common/ids.js';
import type { Clock, Diagnostics, PdfStorage } from '../common/ports.js';
import type { Principal } from '../common/principal.js';
import { checkVariables, type TemplateResolver } from '../templates/render-template.js';
import {
  named,
  PART_FIELD,
  type TemplateField,
  type TemplateParser,
  templateDetail,
} from '../templates/template-check.js';
import { markOf } from './marks.js';
import type { RenderCall } from './render-call.js';
import type { RenderCommand } from './render-command.js';
import type { RenderOptions } from './render-options.js';
import type { RenderOrder } from './render-order.js';

/** Where previews are kept: one day (lib/pdf-bucket.ts expires the prefix). */
export const PREVIEW_KEY_PREFIX = 'previews/';
export const previewObjectKey = (accountId: string, previewId: string): string =>
  `${PREVIEW_KEY_PREFIX}${accountId}/${previewId}.pdf`;

/** The mark every preview's pages carry, over the content. */
export const PREVIEW_MARK = markOf(
  { text: 'PREVIEW', font_size: 96, color: '#c00000', opacity: 0.25, rotation_deg: 45, position: 'center' },
  'stamp',
);

export interface PreviewLimits {
  readonly perMinute: number;
  readonly perDay: number;
}

export interface PreviewDeps {
  readonly usage: Pick<UsageStore, 'hitWindow'>;
  /** A render request's options checked and defaulted (pdf-jobs.ts `prepare`). */
  readonly prepare: (command: RenderCommand) => RenderOrder;
  readonly resolver: TemplateResolver;
  readonly render: RenderCall;
  readonly storage: Pick<PdfStorage, 'downloadUrl'>;
  readonly parser: TemplateParser;
  readonly limits: PreviewLimits;
  readonly clock: Clock;
}

/** A preview's answer: its file, what it holds, and the previews left in its windows. */
export interface PreviewView {
  readonly download_url: string;
  readonly page_count: number;
  readonly file_size_bytes: number;
  readonly render_duration_ms: number;
  readonly diagnostics: Diagnostics | null;
  readonly previews_remaining: { readonly minute: number; readonly day: number };
}

/** What a template's parts read: every name (Jinja2's undeclared variables), and those a render cannot do without. */
export interface VariablesView {
  readonly variables: readonly string[];
  readonly required: readonly string[];
}

export interface VariablesRequest {
  readonly html: string;
  readonly header_html?: string | null | undefined;
  readonly footer_html?: string | null | undefined;
}

/** A preview's options: the render's, finished only as far as a viewer can show (module comment). */
export const previewOptions = (options: RenderOptions): RenderOptions => {
  const { protection: _p, signature: _s, e_invoice: _e, ...shown } = options;
  return { ...shown, preview_mark: PREVIEW_MARK };
};

export const createPreviews = (deps: PreviewDeps) => {
  const { usage, limits } = deps;

  const count = async (principal: Principal): Promise<[RateLimitState, RateLimitState]> => {
    const subject = { accountId: principal.accountId };
    // The day's window only once the minute's allowed it: a refused burst does not spend the day.
    const minute = await usage.hitWindow(subject, 'previews', limits.perMinute, 'previews');
    const day = await usage.hitWindow(subject, 'previews_day', limits.perDay, 'previews');
    return [minute, day];
  };

  return {
    async create(principal: Principal, command: RenderCommand): Promise<PreviewView> {
      const order = deps.prepare({ ...command, mode: 'sync' });
      const [minute, day] = await count(principal);
      const template = await deps.resolver.resolve(principal, order, 'sync');
      checkVariables(template, order);
      const previewId = `prv_${newJobId().slice('job_'.length)}`;
      const objectKey = previewObjectKey(principal.accountId, previewId);
      const result = await deps.render({
        job: { id: previewId, account_id: principal.accountId, object_key: objectKey },
        template: {
          source: template.html,
          variables: order.variables.text,
          header: template.header,
          footer: template.footer,
        },
        options: previewOptions(template.options),
        offline: template.offline,
      });
      if (!result.ok) {
        const templating =
          result.code === 'INVALID_HTML_TEMPLATE' || result.code === 'HTML_CONTENT_TOO_LARGE';
        const part = result.details?.part;
        const where: TemplateField = part ? PART_FIELD[part] : template.field;
        throw new ServiceError(result.code, templating ? named(where, result.message) : result.message, {
          ...(templating ? { details: [templateDetail(where, result.message, result.details)] } : {}),
          ...(result.diagnostics ? { diagnostics: result.diagnostics } : {}),
          ...(result.retryAfterSeconds !== undefined ? { retryAfterSeconds: result.retryAfterSeconds } : {}),
        });
      }
      return {
        download_url: await deps.storage.downloadUrl(objectKey, 'preview.pdf'),
        page_count: result.pageCount,
        file_size_bytes: result.fileSizeBytes,
        render_duration_ms: result.renderDurationMs,
        diagnostics: result.diagnostics ?? null,
        previews_remaining: { minute: minute.remaining, day: day.remaining },
      };
    },

    /** The variables the parts read, by the parse renders check with; a syntax error answers 422 naming its part and line. */
    async variables(
      principal: Principal,
      request: VariablesRequest,
      perMinute: number,
    ): Promise<VariablesView> {
      await usage.hitWindow(
        { accountId: principal.accountId },
        'variable_checks',
        perMinute,
        'variable checks',
      );
      const variables = new Set<string>();
      const required = new Set<string>();
      const parts: [TemplateField, string | null | undefined][] = [
        ['html', request.html],
        ['header_html', request.header_html],
        ['footer_html', request.footer_html],
      ];
      for (const [field, source] of parts) {
        if (!source) continue;
        try {
          const parsed = await deps.parser.parse(source);
          for (const name of parsed.undeclared) variables.add(name);
          for (const { name } of parsed.required) required.add(name);
        } catch (e) {
          if (!(e instanceof TemplateError)) throw e;
          throw new ServiceError('INVALID_HTML_TEMPLATE', named(field, e.message), {
            details: [templateDetail(field, e.message, { line: e.line })],
          });
        }
      }
      return { variables: [...variables].sort(), required: [...required].sort() };
    },
  };
};

export type Previews = ReturnType<typeof createPreviews>;
