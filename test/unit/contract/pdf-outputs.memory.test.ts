/**
 * The assembler and archiver contracts (test/contract/pdf-assembler.contract.ts,
 * batch-archiver.contract.ts) on the memory bucket (functions/adapters/memory).
 */
import { afterAll } from 'vitest';
import { createMemoryBatchArchiver } from '../../../functions/adapters/memory/batch-archive.js';
import { createMemoryPdfAssembler } from '../../../functions/adapters/memory/pdf-assembly.js';
import {
  createMemoryPdfStorage,
  type MemoryPdfStorage,
} from '../../../functions/adapters/memory/pdf-storage.js';
import { batchArchiverContract } from '../../contract/batch-archiver.contract.js';
import { type ObjectsUnderTest, pdfAssemblerContract } from '../../contract/pdf-assembler.contract.js';

const buckets: MemoryPdfStorage[] = [];
afterAll(() => Promise.all(buckets.map((b) => b.close())));

const on = async <P>(port: (bucket: MemoryPdfStorage) => P): Promise<ObjectsUnderTest<P>> => {
  const bucket = createMemoryPdfStorage({ downloadUrlTtlSeconds: 60, uploadUrlTtlSeconds: 60 });
  buckets.push(bucket);
  return {
    port: port(bucket),
    put: async (key, body) => bucket.putObject(key, body, 'application/octet-stream'),
    get: async (key) => bucket.object(key)?.body,
  };
};

pdfAssemblerContract({
  name: 'memory',
  create: (onFault) => on((bucket) => createMemoryPdfAssembler(bucket, onFault)),
});
batchArchiverContract({ name: 'memory', create: () => on((bucket) => createMemoryBatchArchiver(bucket)) });
