/**
 * Posts webhooks to public addresses only. The URL is the caller's, so each POST could be aimed at
 * the metadata service, the Lambda runtime API or a VPC neighbour; and a name that resolved to a
 * public address when the endpoint was created can resolve to 127.0.0.1 now (DNS rebinding). So
 * the host is resolved and judged here, at connect time (core/public-addresses.ts, the renderer's
 * own classification), and the socket is opened to that very address (`lookup` answers it) while
 * TLS still verifies the certificate against the name. No redirect is followed (node:http follows
 * none: a 3xx is the receiver's answer), the whole attempt has a deadline, and at most
 * MAX_RESPONSE_BYTES of the answer are read before the connection is dropped.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { createDestinationResolver, type LookupAll } from '../../core/public-addresses.js';
import type { WebhookPost, WebhookResponse } from '../../domain/webhooks/webhook-sender.js';

/** The receiver's answer is not used: a little is read so that it can finish writing, then dropped. */
export const MAX_RESPONSE_BYTES = 16 * 1024;

export interface WebhookClientOptions {
  /** The whole attempt: connecting, sending, and the answer's first MAX_RESPONSE_BYTES. */
  readonly timeoutMs: number;
  /** `host:port` pairs reachable although not public: the local stack's tests only. */
  readonly allowHosts?: readonly string[];
  readonly lookup?: LookupAll;
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'https:': 443 };

/** A creation request does not wait on a slow resolver longer than this. */
const LOOKUP_AT_CREATION_MS = 3_000;

/** The promise's value, or undefined once `ms` have passed first. */
const withDeadline = <T>(promise: Promise<T>, ms: number): Promise<T | undefined> => {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
};

/** Why no answer came, in words safe to show: a code, never an address. */
const failure = (e: unknown, timeoutMs: number): string => {
  const error = e as NodeJS.ErrnoException;
  if (error.name === 'AbortError' || error.name === 'TimeoutError') return `timed out after ${timeoutMs} ms`;
  if (error.code === 'ECONNREFUSED') return 'connection refused';
  if (error.code === 'ECONNRESET') return 'connection reset';
  if (typeof error.code === 'string' && /^[A-Z0-9_]+$/.test(error.code))
    return `connection failed: ${error.code}`;
  return 'connection failed';
};

/** Checks a URL as the sender would, without sending: the scheme, then every address of its host. */
export const createWebhookUrlCheck = (options: Pick<WebhookClientOptions, 'allowHosts' | 'lookup'> = {}) => {
  const resolve = createDestinationResolver(options);
  return async (url: URL): Promise<string | undefined> => {
    const port = url.port === '' ? DEFAULT_PORTS[url.protocol] : Number(url.port);
    if (port === undefined) return 'the scheme must be https (or http)';
    if (url.username !== '' || url.password !== '') return 'credentials in the URL are not accepted';
    const found = await withDeadline(resolve(url.hostname, port), LOOKUP_AT_CREATION_MS);
    // A name that does not resolve (yet, or in time) may be set up later: the sender checks again
    // at each attempt.
    if (found && 'refused' in found && found.refused !== 'host not found') return `${found.refused}`;
    return undefined;
  };
};

export const createWebhookClient = (options: WebhookClientOptions): WebhookPost => {
  const resolve = createDestinationResolver(options);
  return async ({ url, headers, body }) => {
    const started = performance.now();
    const done = (status: number | null, error: string | null): WebhookResponse => ({
      status,
      error,
      durationMs: performance.now() - started,
    });
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return done(null, 'invalid URL');
    }
    const port = target.port === '' ? DEFAULT_PORTS[target.protocol] : Number(target.port);
    if (port === undefined) return done(null, 'the scheme must be https (or http)');
    // The name's lookup counts against the attempt's time too.
    const found = await withDeadline(resolve(target.hostname, port), options.timeoutMs);
    if (found === undefined) return done(null, `timed out after ${options.timeoutMs} ms`);
    if ('refused' in found) return done(null, `refused: ${found.refused}`);
    const { address } = found;
    const family = isIP(address) === 6 ? 6 : 4;
    // Every connection goes to the address judged above, whatever the name resolves to now.
    const lookup: LookupFunction = (_hostname, lookupOptions, callback) => {
      if (lookupOptions.all) callback(null, [{ address, family }]);
      else callback(null, address, family);
    };
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const signal = AbortSignal.timeout(options.timeoutMs);
    try {
      const status = await new Promise<number>((fulfil, reject) => {
        const req = send(
          target,
          {
            method: 'POST',
            headers: {
              ...headers,
              'content-length': String(Buffer.byteLength(body)),
              'user-agent': 'pdf-service-webhooks/1',
            },
            lookup,
            agent: false,
            signal,
          },
          (res: IncomingMessage) => {
            let read = 0;
            const finish = () => {
              res.destroy();
              fulfil(res.statusCode ?? 0);
            };
            res.on('data', (chunk: Buffer) => {
              read += chunk.length;
              if (read >= MAX_RESPONSE_BYTES) finish();
            });
            res.on('end', finish);
            res.on('error', finish);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      return done(status, null);
    } catch (e) {
      return done(null, failure(e, options.timeoutMs));
    }
  };
};
