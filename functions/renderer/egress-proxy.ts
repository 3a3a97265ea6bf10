/**
 * The HTTP proxy that Chromium is launched behind (`--proxy-server`, with loopback not bypassed).
 * Request interception in the page does not see WebSockets, and it checks a host's DNS answer
 * while Chromium later resolves the name again; the proxy closes both gaps: every connection of
 * every page, frame and worker arrives here, is checked against the egress policy, and goes to
 * the address that was checked. Plain http arrives as absolute-form requests, everything else
 * (https, ws, wss) as CONNECT tunnels.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import type { EgressPolicy } from './egress.js';

/** Connections with no traffic for this long are dropped. */
const IDLE_TIMEOUT_MS = 60_000;

export interface EgressProxy {
  /** For `--proxy-server`: `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Ends every connection open through it (a single-process offline turn starts with none). */
  closeConnections(): void;
  close(): Promise<void>;
}

/** Headers that belong to one connection, never forwarded (RFC 9110 7.6.1, plus proxy ones). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

const endToEnd = (headers: IncomingHttpHeaders): IncomingHttpHeaders => {
  const listed = String(headers.connection ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase());
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!HOP_BY_HOP.has(name) && !listed.includes(name)) out[name] = value;
  }
  return out;
};

const DEFAULT_PORT: Readonly<Record<string, number>> = { 'http:': 80 };

export const startEgressProxy = async (policy: EgressPolicy): Promise<EgressProxy> => {
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end();
      return;
    }
    const port = target.port === '' ? DEFAULT_PORT[target.protocol] : Number(target.port);
    if (port === undefined) {
      res.writeHead(403).end(); // only plain http arrives unencrypted
      return;
    }
    void policy.resolveDestination(target.hostname, port).then(
      (address) => {
        if (address === undefined) {
          res.writeHead(403, { 'content-type': 'text/plain' }).end('refused by the renderer egress policy');
          return;
        }
        const upstream = httpRequest({
          host: address,
          port,
          method: req.method,
          path: `${target.pathname}${target.search}`,
          headers: { ...endToEnd(req.headers), host: target.host },
          setHost: false,
          timeout: IDLE_TIMEOUT_MS,
        });
        upstream.on('response', (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.headers));
          answer.pipe(res);
        });
        upstream.on('timeout', () => upstream.destroy());
        upstream.on('error', () => {
          if (res.headersSent) res.destroy();
          else res.writeHead(502).end();
        });
        res.on('close', () => {
          if (!res.writableFinished) upstream.destroy();
        });
        req.pipe(upstream);
      },
      () => res.writeHead(403).end(),
    );
  });

  server.on('connect', (req, client: Socket, head: Buffer) => {
    client.on('error', () => client.destroy());
    let target: URL;
    try {
      // `host:port`, IPv6 in brackets; parsed the way Chromium spelled it.
      target = new URL(`http://${req.url ?? ''}`);
    } catch {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const port = target.port === '' ? 80 : Number(target.port);
    void policy.resolveDestination(target.hostname, port).then(
      (address) => {
        if (address === undefined || client.destroyed) {
          client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
          return;
        }
        const upstream = connect({ host: address, port });
        sockets.add(upstream);
        upstream.setTimeout(IDLE_TIMEOUT_MS, () => upstream.destroy());
        upstream.on('close', () => {
          sockets.delete(upstream);
          client.destroy();
        });
        upstream.on('error', () => {
          if (!client.destroyed) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
        });
        upstream.on('connect', () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          if (head.length > 0) upstream.write(head);
          upstream.pipe(client);
          client.pipe(upstream);
        });
        client.on('close', () => upstream.destroy());
      },
      () => client.end('HTTP/1.1 403 Forbidden\r\n\r\n'),
    );
  });
  // Chromium tunnels WebSockets with CONNECT; an upgrade sent to the proxy itself is refused.
  server.on('upgrade', (_req, socket: Socket) => socket.destroy());

  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.setTimeout(IDLE_TIMEOUT_MS, () => socket.destroy());
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  // The proxy must never hold the process open: the local stack and tests end without it.
  server.unref();
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    closeConnections: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
};
