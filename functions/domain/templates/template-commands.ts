/**
 * What the template use cases take, as the edge parsed it (functions/templates/request.ts):
 * sample data as the text sent (json-text.ts).
 */
import type { JsonText } from '../common/json-text.js';
import type { TemplatePdfOptions } from '../renders/render-options.js';

export interface CreateTemplateCommand {
  readonly name: string;
  readonly html: string;
  readonly header_html?: string | null | undefined;
  readonly footer_html?: string | null | undefined;
  readonly sample_variables?: JsonText | null | undefined;
  readonly pdf_options?: TemplatePdfOptions | null | undefined;
  readonly is_public: boolean;
}

/** A given field (null included) replaces it; an absent one is kept. */
export interface UpdateTemplateCommand {
  readonly name?: string | undefined;
  readonly html?: string | undefined;
  readonly header_html?: string | null | undefined;
  readonly footer_html?: string | null | undefined;
  readonly sample_variables?: JsonText | null | undefined;
  readonly pdf_options?: TemplatePdfOptions | null | undefined;
}

export interface TemplateVisibilityCommand {
  readonly is_public: boolean;
}
