/**
 * The renderer's interface, defined by the domain (functions/domain/ports.ts). In the cloud the
 * renderer is its own Lambda with the Chromium layer and no AWS permissions; locally the same
 * render() is called in-process.
 */
import type { RenderRequest as DomainRenderRequest } from '../domain/ports.js';

export type {
  DiagnosticEntry,
  Diagnostics,
  PaperFormat,
  PdfMetadata,
  Renderer,
  RenderFailureCode,
  RenderResult,
  TemplatePart,
  WaitUntil,
} from '../domain/ports.js';

/**
 * A render's navigation options (issue 26), each off when absent. The public API's `paged_media`,
 * `outline` and `tagged` (functions/renderer/navigation/print.ts says what each does and costs).
 */
export interface NavigationOptions {
  /** counter(page), counter(pages) and target-counter(attr(X), page) in the document's own CSS. */
  readonly pagedMedia?: boolean;
  /** PDF bookmarks from the document's printed headings h1-h6, nested by level. */
  readonly outline?: boolean;
  /** A tagged (accessible) PDF. Absent: the renderer's configured default (PDF_TAGGED, off). */
  readonly tagged?: boolean;
}

/** The domain's request, its `pdf` options with the navigation options beside them. */
export type RenderRequest = Omit<DomainRenderRequest, 'pdf'> & {
  readonly pdf: DomainRenderRequest['pdf'] & NavigationOptions;
};
