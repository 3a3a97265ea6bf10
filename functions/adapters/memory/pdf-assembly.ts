/**
 * The merge's assembler (domain/merges/merges.ts, PdfAssembler) on the memory bucket: the S3
 * adapter's work (adapters/pdf/assemble.ts: the parts merged with pdf-lib, the limits checked)
 * reading and writing the memory bucket's objects in place of GetObject and PutObject. Held with
 * the S3 adapter on s3rver to one contract (test/contract/pdf-assembler.contract.ts).
 */
import type { Clock } from '../../domain/common/ports.js';
import type { PdfAssembler } from '../../domain/merges/merges.js';
import { createPdfAssembler } from '../pdf/assemble.js';
import type { MemoryPdfStorage } from './pdf-storage.js';

export const createMemoryPdfAssembler = (
  bucket: MemoryPdfStorage,
  onFault: (message: string, error: unknown) => void,
  clock?: Clock,
): PdfAssembler =>
  createPdfAssembler(
    {
      async read(key) {
        const stored = bucket.object(key);
        // As GetObject's NoSuchKey: a fault, not a failed merge.
        if (!stored) throw new Error(`NoSuchKey: the object ${key} does not exist`);
        return stored.body;
      },
      async write(key, pdf) {
        bucket.putObject(key, pdf, 'application/pdf');
      },
    },
    onFault,
    clock ? () => clock.now() : undefined,
  );
