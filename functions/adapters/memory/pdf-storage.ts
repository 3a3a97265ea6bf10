/**
 * PdfStorage (domain/ports.ts) in memory, with presigned links as S3 gives them: the renderer
 * PUTs through an upload link and a caller GETs through a download link, both plain HTTP on a
 * loopback port of its own, so that whatever fetches them (the memory renderer, the Chromium
 * renderer, a test, a browser) does so as against S3. A link is bound to its method, key and
 * expiry by an HMAC: a link that was changed, or is used past its expiry or with another method,
 * is refused with 403 (as S3 does; s3rver checks only the expiry), an absent object with 404. The download answers with
 * `Content-Type: application/pdf` and `Content-Disposition: attachment; filename="..."`, as
 * the S3 adapter asks S3 to (adapters/s3/pdf-storage.ts). Expiry is read from `clock`, so a test
 * moves time on without waiting.
 *
 * The storage contract (test/contract/pdf-storage.contract.ts) holds it and the S3 adapter on
 * s3rver to the same cases.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import contentDisposition from 'content-disposition';
import type { Clock, PdfStorage } from '../../domain/common/ports.js';
import { asciiFileName } from '../../domain/renders/file-name.js';

const PDF = 'application/pdf';

export interface MemoryPdfStorageOptions {
  readonly downloadUrlTtlSeconds: number;
  readonly uploadUrlTtlSeconds: number;
  /** @default the system clock */
  readonly clock?: Clock;
}

export interface StoredObject {
  readonly body: Uint8Array;
  readonly contentType: string | undefined;
}

export interface MemoryPdfStorage extends PdfStorage {
  /** What is stored under `objectKey`, as a test reads it. */
  object(objectKey: string): StoredObject | undefined;
  /** Keys stored, sorted. */
  keys(): string[];
  /** Stores an object as PutObject does (what the assembler and the archiver write). */
  putObject(objectKey: string, body: Uint8Array, contentType: string): void;
  /** Removes an object, as a lifecycle rule or an operator would. */
  deleteObject(objectKey: string): void;
  /** Stops serving links. */
  close(): Promise<void>;
}

interface Signed {
  readonly method: 'GET' | 'PUT';
  readonly key: string;
  readonly expires: number;
  /** PUT: the Content-Type asked for (S3 signs only the host, so it is not enforced). GET: the Content-Disposition answered. */
  readonly extra: string;
}

export const createMemoryPdfStorage = (options: MemoryPdfStorageOptions): MemoryPdfStorage => {
  const clock = options.clock ?? { now: () => new Date() };
  const secret = randomBytes(32);
  const objects = new Map<string, StoredObject>();
  let listening: Promise<string> | undefined;
  let server: Server | undefined;

  const signature = (s: Signed): Buffer =>
    createHmac('sha256', secret)
      .update(JSON.stringify([s.method, s.key, s.expires, s.extra]))
      .digest();

  const sign = async (s: Signed): Promise<string> => {
    const base = await start();
    const query = new URLSearchParams({
      'X-Memory-Expires': String(s.expires),
      'X-Memory-Extra': s.extra,
      'X-Memory-Signature': signature(s).toString('hex'),
    });
    return `${base}/${s.key.split('/').map(encodeURIComponent).join('/')}?${query}`;
  };

  const answer = (res: ServerResponse, status: number, text = '') =>
    res.writeHead(status, { 'Content-Type': 'text/plain' }).end(text);

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://memory');
    const method = req.method === 'GET' || req.method === 'PUT' ? req.method : undefined;
    const key = decodeURIComponent(url.pathname.slice(1));
    const expires = Number(url.searchParams.get('X-Memory-Expires'));
    const extra = url.searchParams.get('X-Memory-Extra') ?? '';
    const given = Buffer.from(url.searchParams.get('X-Memory-Signature') ?? '', 'hex');
    const expected = method ? signature({ method, key, expires, extra }) : undefined;
    const valid =
      expected !== undefined && given.length === expected.length && timingSafeEqual(given, expected);
    if (!valid || clock.now().getTime() > expires * 1000) {
      req.resume();
      answer(res, 403, 'AccessDenied');
      return;
    }
    if (method === 'PUT') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        objects.set(key, {
          body: new Uint8Array(Buffer.concat(chunks)),
          contentType: req.headers['content-type'],
        });
        answer(res, 200);
      });
      return;
    }
    const stored = objects.get(key);
    if (!stored) {
      answer(res, 404, 'NoSuchKey');
      return;
    }
    res
      .writeHead(200, {
        'Content-Type': PDF,
        'Content-Disposition': extra,
        'Content-Length': String(stored.body.byteLength),
      })
      .end(stored.body);
  };

  const start = (): Promise<string> => {
    listening ??= new Promise((resolve, reject) => {
      const s = createServer(handle);
      server = s;
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => {
        s.unref();
        resolve(`http://127.0.0.1:${(s.address() as AddressInfo).port}`);
      });
    });
    return listening;
  };

  const expiry = (ttlSeconds: number) => Math.floor(clock.now().getTime() / 1000) + ttlSeconds;

  return {
    async uploadTarget(objectKey) {
      const url = await sign({
        method: 'PUT',
        key: objectKey,
        expires: expiry(options.uploadUrlTtlSeconds),
        extra: PDF,
      });
      return { url, headers: { 'Content-Type': PDF } };
    },
    downloadUrl(objectKey, filename) {
      return sign({
        method: 'GET',
        key: objectKey,
        expires: expiry(options.downloadUrlTtlSeconds),
        extra: contentDisposition(filename, { fallback: asciiFileName(filename) }),
      });
    },
    object: (objectKey) => objects.get(objectKey),
    keys: () => [...objects.keys()].sort(),
    putObject(objectKey, body, contentType) {
      objects.set(objectKey, { body, contentType });
    },
    deleteObject(objectKey) {
      objects.delete(objectKey);
    },
    async close() {
      const s = server;
      if (!s) return;
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
      listening = undefined;
      server = undefined;
    },
  };
};
