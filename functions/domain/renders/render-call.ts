/**
 * The renderer, called for an accepted render: with the upload link its PDF goes to and the
 * deployment's limits. A renderer that cannot be reached, or that throws, is a failed render
 * (PDF_RENDERING_FAILED), never a fault thrown at the caller. The sync render (pdf-jobs.ts) and
 * the render queue's consumer (render-worker.ts) call it the same way.
 */
import { MAX_HEADER_FOOTER_BYTES } from '../../settings.js';
import { type AssetResolver, namesAssets } from '../assets/assets.js';
import type { PdfStorage, Renderer, RenderRequest, RenderResult, RunResults } from '../common/ports.js';
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

/** What a render call renders: an accepted render, or a preview's stand-in for its job. */
export type RenderInput = Pick<AcceptedRender, 'template' | 'options' | 'offline'> & {
  /** The job rendered, or a preview's stand-in (previews.ts): its id, account and object key. */
  readonly job: Pick<AcceptedRender['job'], 'id' | 'account_id' | 'object_key'>;
};

export type RenderCall = (accepted: RenderInput) => Promise<RenderResult>;

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

/** The render request for an accepted render, or the result it ends with before the renderer. */
const requestFor = async (
  { storage, limits, signingKeys, assets }: RenderCallDeps,
  accepted: RenderInput,
): Promise<{ readonly request: RenderRequest } | { readonly result: RenderResult }> => {
  const { signature } = accepted.options;
  // Read when the render starts: a key deleted since the request was accepted signs nothing.
  const signingKey = signature
    ? await signingKeys?.material(accepted.job.account_id, signature.keyId)
    : undefined;
  if (signature && !signingKey) return { result: SIGNING_KEY_GONE };
  const { source, header, footer } = accepted.template;
  // The job's account's assets, whoever wrote the template (domain/assets/assets.ts).
  const pageAssets =
    assets && namesAssets(source, header, footer)
      ? await assets.forRender(accepted.job.account_id)
      : undefined;
  const upload = await storage.uploadTarget(accepted.job.object_key);
  return {
    request: {
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
    },
  };
};

export const createRenderCall =
  (deps: RenderCallDeps): RenderCall =>
  async (accepted) => {
    const made = await requestFor(deps, accepted);
    if ('result' in made) return made.result;
    return deps.renderer.render(made.request).catch((e: unknown) => {
      deps.onFault('renderer call failed', e);
      return RENDERER_UNREACHABLE;
    });
  };

/**
 * A batch run's render call (issue 43): the items' requests in one renderer call (renderRun), each
 * item's result in order, null for an item the run did not start. A renderer that cannot be
 * reached, or dies during the run, fails every item of it as it fails a single render
 * (PDF_RENDERING_FAILED, retried while attempts remain): none was completed, none is charged
 * twice. A renderer without runs renders each item on its own.
 */
export type RunCall = (items: readonly RenderInput[], sliceMs: number, batch?: string) => Promise<RunResults>;

export const createRunCall =
  (deps: RenderCallDeps): RunCall =>
  async (items, sliceMs, batch) => {
    const single = createRenderCall(deps);
    const { renderer } = deps;
    if (!renderer.renderRun) {
      // Each item on its own, one after another, within the slice: the rest go back to the queue.
      const started = Date.now();
      const results: (RenderResult | null)[] = [];
      for (const [i, item] of items.entries()) {
        results.push(i > 0 && Date.now() - started >= sliceMs ? null : await single(item));
      }
      return results;
    }
    const made = await Promise.all(items.map((item) => requestFor(deps, item)));
    const requests = made.flatMap((m) => ('request' in m ? [m.request] : []));
    const rendered =
      requests.length === 0
        ? []
        : await renderer.renderRun({ requests, sliceMs, ...(batch ? { batch } : {}) }).catch((e: unknown) => {
            deps.onFault('renderer run call failed', e);
            return requests.map(() => RENDERER_UNREACHABLE);
          });
    let next = 0;
    return made.map((m) => ('result' in m ? m.result : (rendered[next++] ?? null)));
  };
