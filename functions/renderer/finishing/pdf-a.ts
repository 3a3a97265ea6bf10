import { PDFDocument } from '@cantoo/pdf-lib';
import { makePdfA } from './pdf-a-document.js';
import type { FinishingStep } from './step.js';

/**
 * `pdf_a`: the printed PDF made a PDF/A-2b or -3b (pdf-a-document.ts says what that takes). The
 * whole file is written again (classic cross-reference table, no object streams: every reader
 * and the metadata step's incremental writer read it).
 */
export const pdfA: FinishingStep<'pdf_a'> = async (pdf, level, { log }) => {
  const doc = await PDFDocument.load(pdf, { updateMetadata: false });
  const made = makePdfA(doc, pdf, level === '3b' ? 3 : 2);
  if (!made.ok) return { ok: false, code: 'PDF_RENDERING_FAILED', message: made.message };
  log.debug('pdf-a', { level, annotations: made.annotations, actionsRemoved: made.actionsRemoved });
  return { ok: true, pdf: await doc.save({ useObjectStreams: false, updateFieldAppearances: false }) };
};
