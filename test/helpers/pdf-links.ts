/**
 * The link annotations a PDF holds, as a viewer reads them (pdf.js): each one's page and where it
 * goes (a URL, or a destination in the document).
 */
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

export interface PdfLink {
  readonly page: number;
  /** The URI action's target, as pdf.js reads it (before its own URL filtering). */
  readonly url: string | undefined;
  /** An in-document destination (named or explicit). */
  readonly dest: unknown;
  /** An action pdf.js recognised but did not turn into a URL (JavaScript, Launch, …). */
  readonly action: string | undefined;
}

export const readLinks = async (bytes: Uint8Array): Promise<PdfLink[]> => {
  const doc = await getDocument({ data: new Uint8Array(bytes).slice(), verbosity: 0, isEvalSupported: false })
    .promise;
  try {
    const links: PdfLink[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      for (const a of await (await doc.getPage(n)).getAnnotations({ intent: 'display' })) {
        if (a.subtype !== 'Link') continue;
        links.push({
          page: n,
          url: a.unsafeUrl ?? a.url,
          dest: a.dest,
          action: a.action ?? (a.actions ? Object.keys(a.actions).join(',') : undefined),
        });
      }
    }
    return links;
  } finally {
    await doc.destroy();
  }
};
