/**
 * The storage contract (test/contract/pdf-storage.contract.ts) on the memory storage, its time
 * moved on by a test clock; and what S3 refuses that s3rver lets through (a link changed, or
 * used with another method), which the memory storage refuses as S3 does.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryPdfStorage } from '../../../functions/adapters/memory/pdf-storage.js';
import { pdfStorageContract } from '../../contract/pdf-storage.contract.js';
import { testClock } from '../../helpers/dynalite.js';

pdfStorageContract({
  name: 'memory',
  async create(ttl) {
    const clock = testClock('2026-11-28T10:00:00.000Z');
    const storage = createMemoryPdfStorage({ ...ttl, clock });
    return {
      storage,
      elapse: async (seconds) => clock.advance(seconds * 1000),
      close: () => storage.close(),
    };
  },
});

describe('the memory storage, as S3 and unlike s3rver', () => {
  it('refuses a link whose key or signature was changed, and an upload link used to read', async () => {
    const storage = createMemoryPdfStorage({ downloadUrlTtlSeconds: 60, uploadUrlTtlSeconds: 60 });
    try {
      const target = await storage.uploadTarget('pdf/a/job_1.pdf');
      expect((await fetch(target.url, { method: 'PUT', headers: target.headers, body: '%PDF' })).status).toBe(
        200,
      );
      expect((await fetch(target.url)).status).toBe(403);
      const link = await storage.downloadUrl('pdf/a/job_1.pdf', 'a.pdf');
      expect((await fetch(link.replace('job_1', 'job_2'))).status).toBe(403);
      expect((await fetch(link.replace('a.pdf%22', 'b.pdf%22'))).status).toBe(403);
      expect((await fetch(link)).status).toBe(200);
      expect(storage.keys()).toEqual(['pdf/a/job_1.pdf']);
    } finally {
      await storage.close();
    }
  });
});
