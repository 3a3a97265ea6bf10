/**
 * Encrypts the finished PDF: AES-256, the PDF 2.0 standard security handler (revision 6), with
 * @cantoo/pdf-lib. Chosen by measurement (issue 34) over qpdf compiled to WebAssembly
 * (@neslinesli93/qpdf-wasm, qpdf 12.2): on a one-page invoice 10-19 ms against 31-50 ms plus 89 ms
 * to instantiate 1.3 MB of WebAssembly per cold start; on a 30-page report (116 KiB) 34-55 ms
 * against 49-136 ms; one library for stamping and encryption. Encryption rewrites every string
 * and stream, so the whole file is written again (no incremental update can encrypt): on the
 * bench's 3.5 MiB report 0.6 s of CPU (test/bench/finishing.ts).
 *
 * The passwords are never logged: a failure says only that encryption failed.
 */
import { PDFDocument } from '@cantoo/pdf-lib';
import type { FinishingStep } from './step.js';

const PRINTING = { high: 'highResolution', low: 'lowResolution', none: false } as const;

export const protection: FinishingStep<'protection'> = async (
  pdf,
  { ownerPassword, userPassword, permissions },
) => {
  try {
    const document = await PDFDocument.load(pdf, { updateMetadata: false });
    document.encrypt({
      algorithm: 'AES-256',
      ownerPassword,
      // R6 needs a user password entry; an empty one opens the document without asking.
      userPassword: userPassword ?? '',
      permissions: {
        printing: PRINTING[permissions.printing],
        copying: permissions.copying,
        // Always: a screen reader may read aloud a document whose text may not be copied.
        contentAccessibility: true,
        modifying: permissions.modifying,
        annotating: permissions.annotating,
        fillingForms: permissions.fillingForms,
        documentAssembly: permissions.assembling,
      },
    });
    return { ok: true, pdf: await document.save({ useObjectStreams: false }) };
  } catch {
    return { ok: false, code: 'PDF_RENDERING_FAILED', message: 'The PDF could not be encrypted.' };
  }
};
