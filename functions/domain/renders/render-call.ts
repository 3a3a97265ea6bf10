/**
 * The renderer, called for an accepted render: with the upload link its PDF goes to and the
 * deployment's limits. A renderer that cannot be reached, or that throws, is a failed render
 * (PDF_RENDERING_FAILED), never a fault thrown at the caller. The sync render (pdf-jobs.ts) and
 * the render queue's consumer (render-worker.ts) call it the same way.
 */
import { MAX_HEADER_FOOTER_BYTES } from '../../settings.js';
import { type AssetResolver, namesAssets } from '../assets/assets.js';
import type { PdfStorage, Renderer, RenderResult } from '../common/ports.js';
import type { SigningKeyResolver } from '../signing/signing-keys.js';
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
  /** The keys a render's signature names, opened for the call. Absent: a signed render fails. */
  readonly signingKeys?: Pick<SigningKeyResolver, 'material'> | undefined;
  /**
   * The rendering account's assets, listed when the render's templates name `asset(`. Absent:
   * a page's asset requests answer 404.
   */
  readonly assets?: Pick<AssetResolver, 'forRender'> | undefined;
}

export type RenderCall = (
  accepted: Pick<AcceptedRender, 'template' | 'options' | 'offline'> & {
    /** The job rendered, or a preview's stand-in (previews.ts): its id, account and object key. */
    readonly job: Pick<AcceptedRender['job'], 'id' | 'account_id' | 'object_key'>;
  },
) => Promise<RenderResult>;

const RENDERER_UNREACHABLE: RenderResult = {
  ok: false,
  code: 'PDF_RENDERING_FAILED',
  message: 'The renderer failed before producing a PDF.',
};

const SIGNING_KEY_GONE: RenderResult = {
  ok: false,
  code: 'INVALID_PDF_OPTIONS',
  message: 'The signing key named by signature.key_id no longer exists.',
};

export const createRenderCall =
  ({ storage, renderer, limits, onFault, signingKeys, assets }: RenderCallDeps): RenderCall =>
  async (accepted) => {
    const { signature } = accepted.options;
    // Read when the render starts: a key deleted since the request was accepted signs nothing.
    const signingKey = signature
      ? await signingKeys?.material(accepted.job.account_id, signature.keyId)
      : undefined;
    if (signature && !signingKey) return SIGNING_KEY_GONE;
    const { source, header, footer } = accepted.template;
    // The job's account's assets, whoever wrote the template (domain/assets/assets.ts).
    const pageAssets =
      assets && namesAssets(source, header, footer)
        ? await assets.forRender(accepted.job.account_id)
        : undefined;
    const upload = await storage.uploadTarget(accepted.job.object_key);
    return renderer
      .render({
        jobId: accepted.job.id,
        template: accepted.template,
        ...accepted.options,
        ...(signingKey ? { signingKey } : {}),
        ...(accepted.offline ? { offline: true } : {}),
        ...(pageAssets && Object.keys(pageAssets).length > 0 ? { assets: pageAssets } : {}),
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
