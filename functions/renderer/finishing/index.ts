/**
 * The finishing steps the renderer runs on a printed PDF, in the order the domain declares them
 * (FINISHING_STEPS), each only when its render option is given. One implementation per declared
 * step: the record's type is the declaration's names, so `tsc` refuses one missing or one extra.
 */
import { FINISHING_STEPS, type FinishingStepName } from '../../domain/renders/finishing.js';
import { eInvoice } from './e-invoice.js';
import { metadata } from './metadata.js';
import { pdfA } from './pdf-a.js';
import { previewMark } from './preview-mark.js';
import { protection } from './protection.js';
import { signature } from './signature.js';
import { stamp } from './stamp.js';
import type { FinishingContext, FinishingStep, StepOutcome } from './step.js';
import { watermark } from './watermark.js';

export type { FinishingContext, StepOutcome } from './step.js';

type Implementations = { readonly [K in FinishingStepName]: FinishingStep<K> };

export const FINISHING: Implementations = {
  watermark,
  stamp,
  preview_mark: previewMark,
  metadata,
  pdf_a: pdfA,
  e_invoice: eInvoice,
  signature,
  protection,
};

const run = <K extends FinishingStepName>(
  name: K,
  pdf: Uint8Array,
  context: FinishingContext,
): StepOutcome | Promise<StepOutcome> | undefined => {
  const option = context.request[name];
  if (option === undefined || option === null) return undefined;
  return (FINISHING[name] as FinishingStep<K>)(pdf, option as NonNullable<typeof option>, context);
};

/** The PDF after every step its request asks for; the first step that fails ends it. */
export const finish = async (pdf: Uint8Array, context: FinishingContext): Promise<StepOutcome> => {
  let current = pdf;
  for (const { name } of FINISHING_STEPS) {
    const outcome = await run(name, current, context);
    if (outcome === undefined) continue;
    if (!outcome.ok) return outcome;
    current = outcome.pdf;
  }
  return { ok: true, pdf: current };
};
