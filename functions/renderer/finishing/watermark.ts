import { drawMark } from './marks.js';
import type { FinishingStep } from './step.js';

/** Text or an image under the page content (marks.ts). */
export const watermark: FinishingStep<'watermark'> = (pdf, mark, context) =>
  drawMark(pdf, mark, 'watermark', context);
