/**
 * The renderer's interface, defined by the domain (functions/domain/ports.ts). In the cloud the
 * renderer is its own Lambda with the Chromium layer and no AWS permissions; locally the same
 * render() is called in-process.
 */
export type {
  PaperFormat,
  Renderer,
  RenderFailureCode,
  RenderRequest,
  RenderResult,
  WaitUntil,
} from '../domain/ports.js';
