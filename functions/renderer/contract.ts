/**
 * The renderer's interface, defined by the domain (functions/domain/ports.ts). In the cloud the
 * renderer is its own Lambda with the Chromium layer and no AWS permissions; locally the same
 * render() is called in-process.
 */
export type {
  DiagnosticEntry,
  Diagnostics,
  PaperFormat,
  PdfMetadata,
  Renderer,
  RenderFailureCode,
  RenderRequest,
  RenderResult,
  TemplatePart,
  WaitUntil,
} from '../domain/ports.js';
