import { drawMark } from './marks.js';
import type { FinishingStep } from './step.js';

/** Text or an image over the page content (marks.ts). */
export const stamp: FinishingStep<'stamp'> = (pdf, mark, context) => drawMark(pdf, mark, 'stamp', context);
