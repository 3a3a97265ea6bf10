/**
 * A webhook receiver on loopback, for the local stack's test allowance (WEBHOOK_EGRESS_ALLOW_HOSTS):
 * it records every request and answers by the path's first segment (the rest names the test):
 *   /ok/…        204
 *   /fail/…      500
 *   /slow/…      nothing until the test ends (the sender's timeout)
 *   /sleep/N/…   204 after N ms (a slow receiver)
 *   /redirect/…  302 to /redirected/… (which must never be requested)
 *   /down/…      503 while `setDown(true)` holds (a receiver that is down for a while), else 204
 * Call before useLocalStack, so its port is in the stack's environment when the stack starts.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll } from 'vitest';
import { listenOnFreePort } from './render-fixtures.js';

export interface ReceivedWebhook {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly at: number;
}

export interface WebhookReceiver {
  /** `127.0.0.1:<port>`, once started. */
  readonly hostPort: string;
  /** WEBHOOK_EGRESS_ALLOW_HOSTS for the stack, filled in before it starts. */
  readonly env: Record<string, string>;
  readonly received: ReceivedWebhook[];
  url(path: string): string;
  /** Whether /down/… answers 503 (true) or 204. @default false */
  setDown(down: boolean): void;
  /** Resolves once `count` requests have come to `path` (or rejects after `timeoutMs`). */
  waitFor(path: string, count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
}

export const useWebhookReceiver = (env: Record<string, string> = {}): WebhookReceiver => {
  const received: ReceivedWebhook[] = [];
  const waiting = new Set<() => void>();
  let down = false;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0] as string;
      received.push({
        path,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      for (const check of waiting) check();
      const [, kind, ...rest] = path.split('/');
      if (kind === 'ok' || (kind === 'down' && !down)) res.writeHead(204).end();
      else if (kind === 'down') res.writeHead(503).end();
      else if (kind === 'fail') res.writeHead(500, { 'content-type': 'text/plain' }).end('no');
      else if (kind === 'redirect') res.writeHead(302, { location: `/redirected/${rest.join('/')}` }).end();
      else if (kind === 'slow')
        return; // answered by nobody: the sender gives up
      else if (kind === 'sleep') {
        const timer = setTimeout(() => res.writeHead(204).end(), Number(rest[0]) || 0);
        res.on('close', () => clearTimeout(timer));
      } else res.writeHead(404).end();
    });
  });
  let hostPort = '';
  beforeAll(async () => {
    hostPort = `127.0.0.1:${await listenOnFreePort(server)}`;
    env.WEBHOOK_EGRESS_ALLOW_HOSTS = hostPort;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });
  const of = (path: string) => received.filter((r) => r.path === path);
  return {
    get hostPort() {
      return hostPort;
    },
    env,
    received,
    url: (path) => `http://${hostPort}${path}`,
    setDown: (value) => {
      down = value;
    },
    waitFor: (path, count, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (of(path).length < count) return;
          waiting.delete(check);
          clearTimeout(timer);
          resolve(of(path));
        };
        const timer = setTimeout(() => {
          waiting.delete(check);
          reject(new Error(`${of(path).length} of ${count} requests to ${path} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiting.add(check);
        check();
      }),
  };
};
