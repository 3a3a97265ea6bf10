/**
 * The PdfStorage port's contract (domain/ports.ts): presigned links only. The same cases for the
 * memory storage (functions/adapters/memory/pdf-storage.ts) and the S3 adapter on s3rver
 * (functions/adapters/s3/pdf-storage.ts). `elapse` moves the backend's time on: the memory
 * storage's clock, or real seconds for s3rver.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { PdfStorage } from '../../functions/domain/common/ports.js';

export interface StorageUnderTest {
  readonly storage: PdfStorage;
  elapse(seconds: number): Promise<void>;
  close(): Promise<void>;
}

export interface StorageBackend {
  readonly name: string;
  create(ttl: { downloadUrlTtlSeconds: number; uploadUrlTtlSeconds: number }): Promise<StorageUnderTest>;
}

const PDF_BYTES = new TextEncoder().encode('%PDF-1.7\n% not parsed by the storage\n%%EOF\n');

export const pdfStorageContract = (backend: StorageBackend): void => {
  const open: StorageUnderTest[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  const create = async (downloadUrlTtlSeconds = 60, uploadUrlTtlSeconds = 60) => {
    const s = await backend.create({ downloadUrlTtlSeconds, uploadUrlTtlSeconds });
    open.push(s);
    return s;
  };
  const put = async (storage: PdfStorage, key: string, body: Uint8Array) => {
    const target = await storage.uploadTarget(key);
    return fetch(target.url, {
      method: 'PUT',
      headers: target.headers,
      body: body as Uint8Array<ArrayBuffer>,
    });
  };

  describe(`the PDF storage port on ${backend.name}`, () => {
    it('takes a PUT through the upload link with its headers, and serves the bytes through a download link as an attachment', async () => {
      const { storage } = await create();
      const key = `pdf/acct-1/job_${Date.now()}.pdf`;
      const target = await storage.uploadTarget(key);
      expect(target.headers).toEqual({ 'Content-Type': 'application/pdf' });
      expect((await put(storage, key, PDF_BYTES)).status).toBe(200);
      const download = await fetch(await storage.downloadUrl(key, 'invoice-7.pdf'));
      expect(download.status).toBe(200);
      expect(download.headers.get('content-type')).toBe('application/pdf');
      expect(download.headers.get('content-disposition')).toBe('attachment; filename="invoice-7.pdf"');
      expect(new Uint8Array(await download.arrayBuffer())).toEqual(PDF_BYTES);
    });

    it('serves what the last upload stored, under its own key only', async () => {
      const { storage } = await create();
      const key = `pdf/acct-1/job_a${Date.now()}.pdf`;
      await put(storage, key, new TextEncoder().encode('first'));
      await put(storage, key, PDF_BYTES);
      const other = `pdf/acct-2/job_b${Date.now()}.pdf`;
      expect(
        new Uint8Array(await (await fetch(await storage.downloadUrl(key, 'a.pdf'))).arrayBuffer()),
      ).toEqual(PDF_BYTES);
      expect((await fetch(await storage.downloadUrl(other, 'b.pdf'))).status).toBe(404);
    });

    it('refuses a download link past its time to live', async () => {
      // SigV4 counts a link's life from its signing second, truncated: a life of 1 s can be over
      // a few milliseconds after signing. Three leave the first fetch room on a busy machine.
      const s = await create(3);
      const key = `pdf/acct-1/job_ttl${Date.now()}.pdf`;
      await put(s.storage, key, PDF_BYTES);
      const link = await s.storage.downloadUrl(key, 'a.pdf');
      expect((await fetch(link)).status).toBe(200);
      await s.elapse(4);
      expect((await fetch(link)).status).toBe(403);
      // A link signed afresh serves it again.
      expect((await fetch(await s.storage.downloadUrl(key, 'a.pdf'))).status).toBe(200);
    });

    it('refuses an upload link past its time to live, and keeps what was stored', async () => {
      const s = await create(60, 1);
      const key = `pdf/acct-1/job_up${Date.now()}.pdf`;
      const target = await s.storage.uploadTarget(key);
      await s.elapse(2);
      const late = await fetch(target.url, { method: 'PUT', headers: target.headers, body: 'late' });
      expect(late.status).toBe(403);
      expect((await fetch(await s.storage.downloadUrl(key, 'a.pdf'))).status).toBe(404);
    });
  });
};
