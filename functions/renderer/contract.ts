/**
 * The renderer's interface, defined by the domain (functions/domain/common/ports.ts). In the cloud the
 * renderer is its own Lambda with the Chromium layer and no AWS permissions; locally the same
 * render() is called in-process.
 */
import type { RenderRequest } from '../domain/common/ports.js';

export type {
  DiagnosticEntry,
  Diagnostics,
  PageNumbering,
  PaperFormat,
  PdfMark,
  PdfMetadata,
  Renderer,
  RenderFailureCode,
  RenderRequest,
  RenderResult,
  TemplatePart,
  WaitUntil,
} from '../domain/common/ports.js';

/**
 * A render's navigation options (issue 26), each off when absent: the public API's `paged_media`,
 * `outline` and `tagged` (functions/renderer/navigation/print.ts says what each does and costs).
 */
export type NavigationOptions = Pick<
  RenderRequest['pdf'],
  'pagedMedia' | 'outline' | 'tagged' | 'pageNumbering'
>;
