/** What the template use cases take, as the edge parsed it (functions/templates/request.ts). */
import type { TemplatePdfOptions } from './render-options.js';

export interface CreateTemplateCommand {
  readonly name: string;
  readonly html: string;
  readonly header_html?: string | null | undefined;
  readonly footer_html?: string | null | undefined;
  readonly sample_variables?: Record<string, unknown> | null | undefined;
  readonly pdf_options?: TemplatePdfOptions | null | undefined;
  readonly is_public: boolean;
}

/** A given field (null included) replaces it; an absent one is kept. */
export interface UpdateTemplateCommand {
  readonly name?: string | undefined;
  readonly html?: string | undefined;
  readonly header_html?: string | null | undefined;
  readonly footer_html?: string | null | undefined;
  readonly sample_variables?: Record<string, unknown> | null | undefined;
  readonly pdf_options?: TemplatePdfOptions | null | undefined;
}

export interface TemplateVisibilityCommand {
  readonly is_public: boolean;
}
