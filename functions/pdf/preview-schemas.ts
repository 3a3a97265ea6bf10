/** What the preview routes take and answer (POST /v1/previews, POST /v1/previews/variables; issue 40). */
import { z } from 'zod';
import type { PreviewView, VariablesView } from '../domain/renders/previews.js';
import { headerFooterHtml, inlineHtml } from './request.js';
import { diagnosticsSchema } from './schemas.js';

export const previewSchema = z.object({
  download_url: z
    .string()
    .describe(
      'presigned S3 GET of the preview PDF, valid 15 minutes by default; the file is deleted after a day. Every page carries a PREVIEW mark',
    ),
  page_count: z.number().int(),
  file_size_bytes: z.number().int(),
  render_duration_ms: z.number().int(),
  diagnostics: diagnosticsSchema.nullable(),
  previews_remaining: z
    .object({
      minute: z.number().int().describe("previews left in this minute's window"),
      day: z.number().int().describe("previews left in this UTC day's window"),
    })
    .describe('what is left of the per-account preview caps'),
});

export const previewResponse = (view: PreviewView): z.output<typeof previewSchema> => ({
  ...view,
  diagnostics: view.diagnostics as z.output<typeof previewSchema>['diagnostics'],
});

export const variablesRequestSchema = (limits: { readonly maxInlineHtmlBytes: number }) =>
  z.strictObject(
    {
      html: inlineHtml(limits.maxInlineHtmlBytes),
      header_html: headerFooterHtml('top'),
      footer_html: headerFooterHtml('bottom'),
    },
    { error: 'must be a JSON object' },
  );

export const variablesSchema = z.object({
  variables: z
    .array(z.string())
    .describe(
      "every top-level name the parts read without defining them (Jinja2's meta.find_undeclared_variables): as a saved template's variables",
    ),
  required: z
    .array(z.string())
    .describe(
      'the names a render cannot do without (read without a guard such as `is defined` or `default`)',
    ),
});

export const variablesResponse = (view: VariablesView): z.output<typeof variablesSchema> => ({
  variables: [...view.variables],
  required: [...view.required],
});
