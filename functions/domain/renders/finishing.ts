/**
 * What is done to a printed PDF after Chromium prints it and before it is stored: the finishing
 * steps, declared once as data, in the order they run. Each step is a render option of the same
 * name (a field of RenderOptions): a render that gives the option gets the step, one that does not
 * pays nothing for it. The renderer acts on this table (functions/renderer/finishing/): its
 * `FINISHING` record must hold one implementation per name here, so a step declared and not built,
 * or built and not declared, fails `tsc`.
 *
 * The order is the PDF's: what changes the pages comes first (watermarks, stamps), then what
 * describes the file (document information, PDF/A, an embedded invoice), then what seals it (a
 * signature covers the bytes before it), and encryption last, over all of it. A pair the PDF format
 * cannot carry together is named in `excludes` (either side) and refused at the edge with 422
 * INVALID_PDF_OPTIONS naming both fields, before anything is charged.
 *
 * A new step: its option in render-options.ts (as given and as normalised), an entry here, and
 * its implementation in functions/renderer/finishing/ (one file, registered in index.ts).
 */
import { ServiceError } from '../common/errors.js';

export interface FinishingStepDeclaration {
  /** The render option (a field of RenderOptions: render-options.ts checks it) that asks for this step. */
  readonly name: string;
  /** What the step does to the PDF, as the README and the contract say it. */
  readonly does: string;
  /** Steps that cannot be given with this one (checked both ways). */
  readonly excludes: readonly string[];
}

export const FINISHING_STEPS = [
  {
    name: 'watermark',
    does: 'draws text or an image under the page content, on the pages asked (an incremental update)',
    excludes: [],
  },
  {
    name: 'stamp',
    does: 'draws text or an image over the page content, on the pages asked (an incremental update)',
    excludes: [],
  },
  {
    name: 'preview_mark',
    does: "draws a preview's PREVIEW mark over the content and the stamp, on every page (POST /v1/previews only: no request gives it)",
    excludes: [],
  },
  {
    name: 'metadata',
    does: 'sets the document information (title, author, subject, keywords, dates) by an incremental update',
    excludes: [],
  },
  {
    name: 'pdf_a',
    does: 'makes the file a PDF/A-2b or -3b: output intent, XMP identification, printable annotations, trailer ID, no JavaScript',
    // PDF/A forbids encryption (ISO 19005-2, 6.1.3).
    excludes: ['protection'],
  },
  {
    name: 'e_invoice',
    does: 'embeds the validated CII XML as factur-x.xml (an associated file) in a PDF/A-3b with the Factur-X XMP extension schema',
    // A PDF/A-3b (pdf_a's 3b, or made by the step itself): no encryption either.
    excludes: ['protection'],
  },
  {
    name: 'signature',
    does: 'signs the PDF (PAdES baseline B-B, ETSI EN 319 142) with one of the account’s signing keys, by an incremental update',
    // Encryption rewrites every string and stream of the file, the signed byte ranges too: a
    // signature made before it would no longer verify (signing an encrypted file is a later step).
    excludes: ['protection'],
  },
  {
    name: 'protection',
    does: 'encrypts the PDF with AES-256 (PDF 2.0, revision 6): an owner password, an optional user password, permissions',
    excludes: [],
  },
] as const satisfies readonly FinishingStepDeclaration[];

export type FinishingStepName = (typeof FINISHING_STEPS)[number]['name'];

/** A render's options as far as the steps are concerned: each step's option, given or not. */
export type FinishingOptionsGiven = { readonly [K in FinishingStepName]?: unknown };

/** The steps a render's options ask for, in the order they run. */
export const finishingStepsOf = (options: FinishingOptionsGiven): FinishingStepName[] =>
  FINISHING_STEPS.filter(({ name }) => options[name] !== undefined).map(({ name }) => name);

/** Refuses (422, both fields named) a pair of steps the PDF cannot carry together. */
export const checkFinishingConflicts = (options: FinishingOptionsGiven): void => {
  const asked = new Set<string>(finishingStepsOf(options));
  for (const step of FINISHING_STEPS as readonly FinishingStepDeclaration[]) {
    if (!asked.has(step.name)) continue;
    for (const other of step.excludes) {
      if (!asked.has(other)) continue;
      const issue = `cannot be given with ${other}: the PDF format cannot carry both`;
      throw new ServiceError('INVALID_PDF_OPTIONS', `${step.name} ${issue}`, {
        details: [
          { field: step.name, issue },
          { field: other, issue: `cannot be given with ${step.name}` },
        ],
      });
    }
  }
};
