/**
 * The merge's assembler (domain/merges/merges.ts, PdfAssembler) on the PDF bucket: each part's
 * object read, the parts merged (functions/adapters/pdf/merge-pdfs.ts), the result put at the
 * merge's key. The function's presigning grant on `pdf/*` (GetObject, PutObject) is what it
 * uses. Parts are read a few at a time; the merged document is held whole, as pdf-lib writes it.
 */
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { PdfAssembler } from '../../domain/merges/merges.js';
import { mergePdfs } from '../pdf/merge-pdfs.js';

const PDF = 'application/pdf';
/** Parts read at once. */
const READS_AT_ONCE = 8;

const MiB = 1024 * 1024;

export const createS3PdfAssembler = (
  s3: S3Client,
  bucket: string,
  onFault: (message: string, error: unknown) => void,
): PdfAssembler => {
  const read = async (key: string): Promise<Uint8Array> => {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    if (!out.Body) throw new Error(`the object ${key} has no body`);
    return out.Body.transformToByteArray();
  };

  return {
    async assemble({ parts, objectKey, outline, metadata, maxPdfBytes, maxPages }) {
      const started = performance.now();
      const files: Uint8Array[] = new Array(parts.length);
      for (let at = 0; at < parts.length; at += READS_AT_ONCE) {
        await Promise.all(
          parts.slice(at, at + READS_AT_ONCE).map(async (part, i) => {
            files[at + i] = await read(part.objectKey);
          }),
        );
      }
      let merged: Awaited<ReturnType<typeof mergePdfs>>;
      try {
        merged = await mergePdfs(
          parts.map((part, i) => ({ pdf: files[i] as Uint8Array, title: part.title })),
          { outline, ...(metadata ? { metadata } : {}), now: new Date() },
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
      await s3.send(
        new PutObjectCommand({ Bucket: bucket, Key: objectKey, Body: merged.pdf, ContentType: PDF }),
      );
      return {
        ok: true,
        fileSizeBytes: merged.pdf.byteLength,
        pageCount: merged.pageCount,
        renderDurationMs: Math.round(performance.now() - started),
      };
    },
  };
};
