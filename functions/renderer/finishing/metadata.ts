import { withDocumentInfo } from '../pdf-metadata.js';
import type { FinishingStep } from './step.js';

/** The requested document information; Chromium's own when none was asked for. */
export const metadata: FinishingStep<'metadata'> = (pdf, info, { log, now }) => {
  if (Object.keys(info).length === 0) return { ok: true, pdf };
  const updated = withDocumentInfo(pdf, { ...info, creationDate: now });
  if (!updated) log.warn('pdf-metadata-skipped', { reason: 'the PDF has no classic trailer' });
  return { ok: true, pdf: updated ?? pdf };
};
