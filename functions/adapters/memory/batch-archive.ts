/**
 * A batch's ZIP (domain/batches/batch-outputs.ts, BatchArchiver) on the memory bucket: yazl writes
 * the archive as the S3 adapter's does (adapters/s3/batch-archive.ts: the same fixed time, PDFs
 * stored, text deflated, each object opened only when its entry's turn comes), and the archive is
 * stored whole at its key. An entry whose object is missing fails the archive, and nothing is
 * stored. Held with the S3 adapter on s3rver to one contract (test/contract/batch-archiver.contract.ts).
 */
import { Readable } from 'node:stream';
import { ZipFile } from 'yazl';
import type { BatchArchiver } from '../../domain/batches/batch-outputs.js';
import type { MemoryPdfStorage } from './pdf-storage.js';

export const createMemoryBatchArchiver = (bucket: MemoryPdfStorage): BatchArchiver => ({
  async zip(entries, objectKey) {
    const zip = new ZipFile();
    const mtime = new Date(Date.UTC(2020, 0, 1));
    for (const entry of entries) {
      if ('text' in entry) {
        zip.addBuffer(Buffer.from(entry.text, 'utf8'), entry.name, { mtime, compress: true });
        continue;
      }
      zip.addReadStreamLazy(entry.name, { mtime, compress: false }, (done) => {
        const stored = bucket.object(entry.objectKey);
        if (!stored)
          done(new Error(`NoSuchKey: the object ${entry.objectKey} does not exist`), undefined as never);
        else done(null, Readable.from([Buffer.from(stored.body)]));
      });
    }
    zip.end();
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      (zip as unknown as NodeJS.EventEmitter).on('error', reject);
      zip.outputStream.on('error', reject);
      zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
      zip.outputStream.on('end', resolve);
    });
    const body = new Uint8Array(Buffer.concat(chunks));
    bucket.putObject(objectKey, body, 'application/zip');
    return { bytes: body.byteLength };
  },
});
