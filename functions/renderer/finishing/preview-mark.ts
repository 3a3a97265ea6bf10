import { drawMark } from './marks.js';
import type { FinishingStep } from './step.js';

/**
 * A preview's PREVIEW mark (domain/renders/previews.ts): drawn as a stamp is, over everything the
 * page holds by then (the caller's stamp too), its text as given (no template: no variables in it).
 */
export const previewMark: FinishingStep<'preview_mark'> = (pdf, mark, context) =>
  drawMark(pdf, mark, 'stamp', { ...context, templated: {} });
