/**
 * A host that pages may reach (the tests allow it with RENDERER_EGRESS_ALLOW_HOSTS), for
 * isolation tests between renders: account A's page frames /write, which stores everything a page
 * can (cookie, localStorage, IndexedDB, Cache Storage, a service worker, HTTP cache entries) and
 * reports what it managed; account B's page frames /read, which reports what it finds. The host
 * records the requests that reach it with their cookies, and counts its cacheable answers (a
 * request served from a cache never arrives).
 */
import { createServer, type Server } from 'node:http';
import { listenOnFreePort } from './render-fixtures.js';

/** A frame that stores everything a page can, and says what it managed. */
const WRITE_PAGE = `<script>
(async () => {
  const done = [];
  const attempt = async (name, write) => {
    try { await write(); done.push(name); } catch (e) { done.push(name + ' refused'); }
  };
  await attempt('cookie', () => {
    document.cookie = 'tenant=a; max-age=3600; path=/; SameSite=None; Secure';
    if (!document.cookie.includes('tenant=a')) throw new Error('not kept');
  });
  await attempt('localStorage', () => localStorage.setItem('tenant', 'a'));
  await attempt('indexedDB', () => new Promise((resolve, reject) => {
    const open = indexedDB.open('tenant', 1);
    open.onupgradeneeded = () => open.result.createObjectStore('s');
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const tx = open.result.transaction('s', 'readwrite');
      tx.objectStore('s').put('a', 'k');
      tx.oncomplete = resolve;
      tx.onerror = () => reject(tx.error);
    };
  }));
  await attempt('cacheStorage', async () => { await (await caches.open('tenant')).put('/x', new Response('a')); });
  await attempt('serviceWorker', () => navigator.serviceWorker.register('/sw.js'));
  await attempt('httpCache', () => fetch('/cached').then((r) => r.text()));
  parent.postMessage('WROTE ' + done.join(', '), '*');
})();
</script>`;

/** A frame that looks for all of it. */
const READ_PAGE = `<script>
(async () => {
  const found = [];
  const look = async (name, check) => { try { if (await check()) found.push(name); } catch {} };
  await look('cookie', () => document.cookie.includes('tenant='));
  await look('localStorage', () => localStorage.getItem('tenant') !== null);
  await look('indexedDB', async () => (await indexedDB.databases()).some((d) => d.name === 'tenant'));
  await look('cacheStorage', async () => (await caches.keys()).length > 0);
  await look('serviceWorker', async () => (await navigator.serviceWorker.getRegistrations()).length > 0);
  await fetch('/cached').then((r) => r.text());
  parent.postMessage('FOUND ' + (found.join(', ') || 'nothing'), '*');
})();
</script>`;

/** What A's page manages to store. Cache Storage and service workers need a secure context, which a page given as HTML never is. */
export const WROTE =
  'WROTE cookie, localStorage, indexedDB, cacheStorage refused, serviceWorker refused, httpCache';
/** What B's page must find. */
export const FOUND_NOTHING = 'FOUND nothing';

const GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

export interface TenantFixture {
  /** `host:port`, for RENDERER_EGRESS_ALLOW_HOSTS. */
  readonly hostPort: string;
  /** Request paths that reached the host, each with the cookie it carried: `/read cookie=`. */
  readonly seen: string[];
  /** Requests for its cacheable answers that reached it. */
  readonly hits: { cached: number; image: number };
  /** A render's HTML: frames `/write` or `/read`, and prints its report; ready at `#done`. */
  page(frame: '/write' | '/read'): string;
  close(): void;
}

export const startTenantFixture = async (): Promise<TenantFixture> => {
  const seen: string[] = [];
  const hits = { cached: 0, image: 0 };
  const server: Server = createServer((req, res) => {
    seen.push(`${req.url} cookie=${req.headers.cookie ?? ''}`);
    const cacheable = { 'cache-control': 'max-age=3600', 'access-control-allow-origin': '*' };
    switch (req.url) {
      case '/write':
        return res.writeHead(200, { 'content-type': 'text/html' }).end(WRITE_PAGE);
      case '/read':
        return res.writeHead(200, { 'content-type': 'text/html' }).end(READ_PAGE);
      case '/sw.js':
        return res.writeHead(200, { 'content-type': 'text/javascript' }).end('self.onfetch = () => {};');
      case '/cached':
        hits.cached++;
        return res.writeHead(200, { ...cacheable, 'content-type': 'text/plain' }).end('cached');
      case '/img.gif':
        hits.image++;
        return res.writeHead(200, { ...cacheable, 'content-type': 'image/gif' }).end(GIF);
      default:
        return res.writeHead(404).end();
    }
  });
  const hostPort = `127.0.0.1:${await listenOnFreePort(server)}`;
  return {
    hostPort,
    seen,
    hits,
    page: (frame) => `<p id="report">waiting</p>
      <img src="http://${hostPort}/img.gif">
      <iframe src="http://${hostPort}${frame}"></iframe>
      <script>
        addEventListener('message', (e) => {
          document.getElementById('report').textContent = String(e.data);
          document.body.append(Object.assign(document.createElement('p'), { id: 'done' }));
        });
      </script>`,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
};
