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
import {
  createDestinationResolver,
  createHostAllowance,
  type LookupAll,
} from '../../core/public-addresses.js';
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

/**
 * The ports a webhook may be sent to, an allow list rather than a list of known-bad ports: HTTPS's
 * own (443, 8443) and IANA's dynamic range (49152-65535), where no well-known or registered service
 * listens. Everything else (25, 22, 6379, 5432, 9200, 2375, ...) is refused, whatever the address:
 * an account must not make the service speak to a mail, SSH or database port anywhere.
 */
export const WEBHOOK_PORTS = { named: [443, 8443], dynamic: [49152, 65535] } as const;

const portAllowed = (port: number): boolean =>
  (WEBHOOK_PORTS.named as readonly number[]).includes(port) ||
  (port >= WEBHOOK_PORTS.dynamic[0] && port <= WEBHOOK_PORTS.dynamic[1]);

/** The one answer for a host that is not public, whatever the reason: no DNS oracle. */
export const NOT_PUBLIC = 'the host must resolve to public addresses only';

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

/**
 * What the URL alone rules out, before any lookup: `https` on an allowed port, no credentials. A
 * `host:port` of the allow list (the local stack's receivers and tests only) may also be plain
 * `http` on any port. The port is judged as the request would use it (443 when none is given).
 */
export const webhookUrlRefusal = (
  url: URL,
  allowed: (host: string, port: number) => boolean = () => false,
): { readonly refusal: string } | { readonly port: number } => {
  const port = url.port === '' ? DEFAULT_PORTS[url.protocol] : Number(url.port);
  if (port === undefined) return { refusal: 'the scheme must be https' };
  if (url.username !== '' || url.password !== '')
    return { refusal: 'credentials in the URL are not accepted' };
  if (allowed(url.hostname, port)) return { port };
  if (url.protocol !== 'https:') return { refusal: 'the scheme must be https' };
  if (!portAllowed(port)) {
    return {
      refusal: `the port must be 443, 8443 or in ${WEBHOOK_PORTS.dynamic[0]}-${WEBHOOK_PORTS.dynamic[1]}`,
    };
  }
  return { port };
};

/**
 * Checks a URL as the sender would, without sending: the URL's own rules, then every address of its
 * host. A host that is private, does not resolve, or does not resolve in time is refused with the
 * same words (NOT_PUBLIC): which of them it was would tell an account how this network sees names.
 */
export const createWebhookUrlCheck = (options: Pick<WebhookClientOptions, 'allowHosts' | 'lookup'> = {}) => {
  const resolve = createDestinationResolver(options);
  const allowed = createHostAllowance(options.allowHosts);
  return async (url: URL): Promise<string | undefined> => {
    const judged = webhookUrlRefusal(url, allowed);
    if ('refusal' in judged) return judged.refusal;
    const found = await withDeadline(resolve(url.hostname, judged.port), LOOKUP_AT_CREATION_MS);
    if (found === undefined || 'refused' in found) return NOT_PUBLIC;
    return undefined;
  };
};

export const createWebhookClient = (options: WebhookClientOptions): WebhookPost => {
  const resolve = createDestinationResolver(options);
  const allowed = createHostAllowance(options.allowHosts);
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
    // An endpoint saved before a rule, or a rule tightened since: judged again at every attempt.
    const judged = webhookUrlRefusal(target, allowed);
    if ('refusal' in judged) return done(null, `refused: ${judged.refusal}`);
    // The name's lookup counts against the attempt's time too.
    const found = await withDeadline(resolve(target.hostname, judged.port), options.timeoutMs);
    if (found === undefined) return done(null, `timed out after ${options.timeoutMs} ms`);
    if ('refused' in found) return done(null, `refused: ${NOT_PUBLIC}`);
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
