/**
 * The merge's assembler (domain/merges/merges.ts, PdfAssembler) on the PDF bucket: each part's
 * object read (GetObject), the parts merged and checked (adapters/pdf/assemble.ts), the result put
 * at the merge's key (PutObject). The function's presigning grant on `pdf/*` (GetObject,
 * PutObject) is what it uses. The merged document is held whole, as pdf-lib writes it.
 */
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { PdfAssembler } from '../../domain/merges/merges.js';
import { createPdfAssembler } from '../pdf/assemble.js';

const PDF = 'application/pdf';

export const createS3PdfAssembler = (
  s3: S3Client,
  bucket: string,
  onFault: (message: string, error: unknown) => void,
): PdfAssembler =>
  createPdfAssembler(
    {
      async read(key) {
        const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        if (!out.Body) throw new Error(`the object ${key} has no body`);
        return out.Body.transformToByteArray();
      },
      async write(key, pdf) {
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: pdf, ContentType: PDF }));
      },
    },
    onFault,
  );
