/**
 * The renderer, called for an accepted render: with the upload link its PDF goes to and the
 * deployment's limits. A renderer that cannot be reached, or that throws, is a failed render
 * (PDF_RENDERING_FAILED), never a fault thrown at the caller. The sync render (pdf-jobs.ts) and
 * the render queue's consumer (render-worker.ts) call it the same way.
 */
import { MAX_HEADER_FOOTER_BYTES } from '../../settings.js';
import type { PdfStorage, Renderer, RenderResult } from '../common/ports.js';
import type { AcceptedRender } from './render-order.js';

export interface RenderCallDeps {
  /** Where the PDF is uploaded (a presigned PUT the renderer is given). */
  readonly storage: Pick<PdfStorage, 'uploadTarget'>;
  readonly renderer: Renderer;
  readonly limits: {
    readonly maxPdfBytes: number;
    readonly maxPdfPages: number;
    readonly maxRenderedHtmlBytes: number;
  };
  readonly onFault: (message: string, error: unknown) => void;
}

export type RenderCall = (
  accepted: Pick<AcceptedRender, 'job' | 'template' | 'options' | 'offline'>,
) => Promise<RenderResult>;

const RENDERER_UNREACHABLE: RenderResult = {
  ok: false,
  code: 'PDF_RENDERING_FAILED',
  message: 'The renderer failed before producing a PDF.',
};

export const createRenderCall =
  ({ storage, renderer, limits, onFault }: RenderCallDeps): RenderCall =>
  async (accepted) => {
    const upload = await storage.uploadTarget(accepted.job.object_key);
    return renderer
      .render({
        jobId: accepted.job.id,
        template: accepted.template,
        ...accepted.options,
        ...(accepted.offline ? { offline: true } : {}),
        upload,
        limits: {
          maxPdfBytes: limits.maxPdfBytes,
          maxPages: limits.maxPdfPages,
          maxHtmlBytes: limits.maxRenderedHtmlBytes,
          maxHeaderFooterBytes: MAX_HEADER_FOOTER_BYTES,
        },
      })
      .catch((e: unknown) => {
        onFault('renderer call failed', e);
        return RENDERER_UNREACHABLE;
      });
  };
