/**
 * Fixtures for tests that call the renderer directly (renderer, renderer-isolation, and the
 * Lambda sandbox test): a port on loopback, the presigned-PUT sink the renderer uploads to, and
 * the RenderRequest a pdf function would send.
 */
import type { IncomingHttpHeaders, Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RenderRequest } from '../../functions/renderer/contract.js';

/** Listens on a free port of 127.0.0.1 (never a fixed one: tests run beside each other). */
export const listenOnFreePort = async (server: Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as AddressInfo).port;
};

export interface Upload {
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface UploadSink {
  /** `http://127.0.0.1:<port>`. */
  readonly baseUrl: string;
  /** What was PUT, by path and query (`/bucket/job-1.pdf?X-Amz-Signature=abc`). */
  readonly uploads: Map<string, Upload>;
  /** The upload stored for a request's presigned URL, if any. */
  uploadOf(url: string): Upload | undefined;
  close(): void;
}

/**
 * Stands in for S3's presigned PUT: stores every body, except under `/fail/`, which answers 403
 * AccessDenied as S3 does for a refused signature.
 */
export const startUploadSink = async (): Promise<UploadSink> => {
  const uploads = new Map<string, Upload>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url?.startsWith('/fail')) {
        res
          .writeHead(403, { 'content-type': 'application/xml' })
          .end('<Error><Code>AccessDenied</Code></Error>');
        return;
      }
      uploads.set(req.url ?? '', { headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200).end();
    });
  });
  const baseUrl = `http://127.0.0.1:${await listenOnFreePort(server)}`;
  return {
    baseUrl,
    uploads,
    uploadOf: (url) => {
      const { pathname, search } = new URL(url);
      return uploads.get(pathname + search);
    },
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
};

export interface RenderRequestOverrides {
  readonly jobId?: string;
  readonly pdf?: Partial<RenderRequest['pdf']>;
  readonly pageLoad?: Partial<RenderRequest['pageLoad']>;
  readonly limits?: Partial<RenderRequest['limits']>;
  /** @default a PUT to `uploadUrl` */
  readonly upload?: RenderRequest['upload'];
}

/**
 * A RenderRequest for `html` (a template without variables) with the contract's defaults: A4
 * portrait, backgrounds, 0.4 in margins, `load` within 10 s, the default limits.
 */
export const renderRequest = (
  uploadUrl: string,
  html: string,
  o: RenderRequestOverrides = {},
): RenderRequest => ({
  jobId: o.jobId ?? 'job_renderer_test',
  template: { source: html, variables: {} },
  pdf: {
    format: 'A4',
    landscape: false,
    printBackground: true,
    margins: { top: 0.4, right: 0.4, bottom: 0.4, left: 0.4 },
    ...o.pdf,
  },
  pageLoad: { waitUntil: 'load', timeoutMs: 10_000, waitForSelector: null, ...o.pageLoad },
  upload: o.upload ?? { url: uploadUrl, headers: {} },
  limits: { maxPdfBytes: 50 * 1024 * 1024, maxPages: 1000, maxHtmlBytes: 10 * 1024 * 1024, ...o.limits },
});
