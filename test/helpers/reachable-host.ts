/**
 * A host on this machine that pages may reach (the renderer's egress policy refuses loopback
 * otherwise): an HTTP server with `handle` on a random port, and the environment that lets the
 * stack's renderer reach it. Call before useLocalStack, so its port is known when the stack starts:
 *
 *   const host = useReachableHost((req, res) => res.end('ok'));
 *   const local = useLocalStack({ env: host.env });
 *   // in tests: `http://${host.hostPort}/…`
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import { afterAll, beforeAll } from 'vitest';
import { listenOnFreePort } from './render-fixtures.js';

export interface ReachableHost {
  /** `127.0.0.1:<port>`, once started. */
  readonly hostPort: string;
  /** RENDERER_EGRESS_ALLOW_HOSTS for the stack: filled in before the stack starts. */
  readonly env: Record<string, string>;
}

export const useReachableHost = (handle: RequestListener): ReachableHost => {
  const server: Server = createServer(handle);
  const env: Record<string, string> = {};
  let hostPort = '';
  beforeAll(async () => {
    hostPort = `127.0.0.1:${await listenOnFreePort(server)}`;
    env.RENDERER_EGRESS_ALLOW_HOSTS = hostPort;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    get hostPort() {
      return hostPort;
    },
    env,
  };
};
