/**
 * A merge's assembly (domain/merges/merges.ts, PdfAssembler) over any place PDFs are kept: each
 * part read a few at a time, the parts merged (merge-pdfs.ts), the merged document checked against
 * the page and size limits, then written at the merge's key. The S3 adapter
 * (adapters/s3/pdf-assembly.ts) reads and writes the bucket, the memory one
 * (adapters/memory/pdf-assembly.ts) the memory bucket; both are held to one contract
 * (test/contract/pdf-assembler.contract.ts). A part that cannot be read rejects (a fault of ours);
 * parts that are no PDF, too many pages or too many bytes are a failed result, as a render's are.
 */
import type { RenderResult } from '../../domain/common/ports.js';
import type { PdfAssembler } from '../../domain/merges/merges.js';
import { mergePdfs } from './merge-pdfs.js';

/** Where the parts are read and the merged PDF is written. */
export interface PdfObjects {
  read(objectKey: string): Promise<Uint8Array>;
  write(objectKey: string, pdf: Uint8Array): Promise<void>;
}

/** Parts read at once. */
const READS_AT_ONCE = 8;
const MiB = 1024 * 1024;

export const createPdfAssembler = (
  objects: PdfObjects,
  onFault: (message: string, error: unknown) => void,
  now: () => Date = () => new Date(),
): PdfAssembler => ({
  async assemble({ parts, objectKey, outline, metadata, maxPdfBytes, maxPages }): Promise<RenderResult> {
    const started = performance.now();
    const files: Uint8Array[] = new Array(parts.length);
    for (let at = 0; at < parts.length; at += READS_AT_ONCE) {
      await Promise.all(
        parts.slice(at, at + READS_AT_ONCE).map(async (part, i) => {
          files[at + i] = await objects.read(part.objectKey);
        }),
      );
    }
    let merged: Awaited<ReturnType<typeof mergePdfs>>;
    try {
      merged = await mergePdfs(
        parts.map((part, i) => ({ pdf: files[i] as Uint8Array, title: part.title })),
        { outline, ...(metadata ? { metadata } : {}), now: now() },
      );
    } catch (e) {
      onFault('merging PDFs failed', e);
      return {
        ok: false,
        code: 'PDF_RENDERING_FAILED',
        message: 'The parts could not be merged into one PDF.',
      };
    }
    if (merged.pageCount > maxPages) {
      return {
        ok: false,
        code: 'PDF_TOO_MANY_PAGES',
        message: `The merged PDF has ${merged.pageCount} pages; the limit is ${maxPages}.`,
      };
    }
    if (merged.pdf.byteLength > maxPdfBytes) {
      return {
        ok: false,
        code: 'PDF_TOO_LARGE',
        message: `The merged PDF is larger than the limit of ${Math.round(maxPdfBytes / MiB)} MiB.`,
      };
    }
    await objects.write(objectKey, merged.pdf);
    return {
      ok: true,
      fileSizeBytes: merged.pdf.byteLength,
      pageCount: merged.pageCount,
      renderDurationMs: Math.round(performance.now() - started),
    };
  },
});
