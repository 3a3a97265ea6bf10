/**
 * The BatchArchiver port's contract (domain/batches/batch-outputs.ts): a ZIP of a bucket's objects
 * and texts, stored at its key, in the order given; the same entries make the same archive; an
 * entry that cannot be read fails it and stores nothing. The same cases for the memory archiver
 * on the memory bucket (functions/adapters/memory/batch-archive.ts) and the S3 one on s3rver
 * (functions/adapters/s3/batch-archive.ts). The archives are read with unzip and zipinfo.
 */
import { describe, expect, it } from 'vitest';
import type { BatchArchiver } from '../../functions/domain/batches/batch-outputs.js';
import { pdfinfo } from '../helpers/pdf-readers.js';
import { zipEntries, zipEntry } from '../helpers/zip-readers.js';
import { type ObjectsBackend, onePagePdf } from './pdf-assembler.contract.js';
import { unique } from './stores.js';

export const batchArchiverContract = (backend: ObjectsBackend<BatchArchiver>): void => {
  describe(`BatchArchiver (${backend.name})`, () => {
    const setup = async () => {
      const under = await backend.create(() => {});
      const prefix = unique('pdf/archive');
      const first = await onePagePdf('Invoice one');
      const second = await onePagePdf('Invoice two');
      await under.put(`${prefix}/1.pdf`, first);
      await under.put(`${prefix}/2.pdf`, second);
      const manifest = `${JSON.stringify({ items: [{ item: 0 }, { item: 1 }] }, null, 2)}\n`;
      const entries = [
        { name: 'invoice 1.pdf', objectKey: `${prefix}/1.pdf` },
        { name: 'invoice 1 (2).pdf', objectKey: `${prefix}/2.pdf` },
        { name: 'manifest.json', text: manifest },
      ];
      return { ...under, prefix, first, second, manifest, entries };
    };

    it('stores a ZIP of the objects (stored) and the text (deflated), in order, byte for byte', async () => {
      const { port, get, prefix, first, second, manifest, entries } = await setup();
      const key = `${prefix}/out.zip`;
      const { bytes } = await port.zip(entries, key);
      const zip = (await get(key)) as Uint8Array;
      expect(zip).toBeDefined();
      expect(bytes).toBe(zip.byteLength);
      const { tested, entries: rows } = await zipEntries(zip);
      expect(tested).toMatch(/No errors detected/);
      expect(rows).toEqual([
        { name: 'invoice 1.pdf', method: 'stor' },
        { name: 'invoice 1 (2).pdf', method: 'stor' },
        { name: 'manifest.json', method: 'defN' },
      ]);
      expect(Buffer.from(await zipEntry(zip, 'invoice 1.pdf')).equals(Buffer.from(first))).toBe(true);
      expect(Buffer.from(await zipEntry(zip, 'invoice 1 (2).pdf')).equals(Buffer.from(second))).toBe(true);
      expect((await pdfinfo(await zipEntry(zip, 'invoice 1 (2).pdf'))).Pages).toBe('1');
      expect(new TextDecoder().decode(await zipEntry(zip, 'manifest.json'))).toBe(manifest);
    });

    it('makes the same archive from the same entries', async () => {
      const { port, get, prefix, entries } = await setup();
      await port.zip(entries, `${prefix}/a.zip`);
      await port.zip(entries, `${prefix}/b.zip`);
      const [a, b] = [await get(`${prefix}/a.zip`), await get(`${prefix}/b.zip`)];
      expect(Buffer.from(a as Uint8Array).equals(Buffer.from(b as Uint8Array))).toBe(true);
    });

    it('fails when an entry’s object is missing, and stores nothing', async () => {
      const { port, get, prefix, entries } = await setup();
      const key = `${prefix}/broken.zip`;
      await expect(
        port.zip([...entries, { name: 'gone.pdf', objectKey: `${prefix}/gone.pdf` }], key),
      ).rejects.toThrow();
      expect(await get(key)).toBeUndefined();
    });
  });
};
