/**
 * The cells of the page-load matrix (issue 32): each wait a render can ask for, on each kind of
 * page, as page-load-sessions.test.ts, page-load-long-idle.test.ts and lambda-sandbox.test.ts
 * run them against sessions with different histories.
 */
import type { RequestListener } from 'node:http';
import type { Json } from './local-stack.js';

const TIMEOUT_MS = 15_000;

export const WAITS = ['load', 'domcontentloaded', 'networkidle0', 'networkidle2', 'selector'] as const;
export type Wait = (typeof WAITS)[number];
export const KINDS = ['plain', 'images', 'late-fetch'] as const;
export type Kind = (typeof KINDS)[number];

/**
 * The page of each kind; `#ready` is there once the page is complete (the selector waits for it).
 * The late fetch starts 200 ms after the scripts run, inside the 500 ms a network-idle wait
 * watches, so networkidle0 waits for it (networkidle2 lets one request run).
 */
export const pageOf = (kind: Kind, hostPort: string, cell: string): string => {
  switch (kind) {
    case 'plain':
      return `<h1 id="ready">Plain {{ cell }}</h1>`;
    case 'images':
      return `<h1>Images {{ cell }}</h1>${[1, 2, 3]
        .map((n) => `<img src="http://${hostPort}/img/${n}.svg?cell=${cell}">`)
        .join('')}<p id="ready">after the images</p>`;
    case 'late-fetch':
      return `<h1>Late fetch {{ cell }}</h1><script>setTimeout(() => fetch('http://${hostPort}/late?cell=${cell}').then((r) => r.text()).then((t) => { const p = document.createElement('p'); p.id = 'ready'; p.textContent = 'late: ' + t; document.body.append(p); }), 200);</script>`;
  }
};

export const pageLoadOf = (wait: Wait, timeoutMs = TIMEOUT_MS): Json =>
  wait === 'selector'
    ? { wait_for_selector: '#ready', timeout_ms: timeoutMs }
    : { wait_until: wait, timeout_ms: timeoutMs };

/**
 * What the pages ask for: images answered after 150 ms, the late fetch after 300 ms (with CORS:
 * the written page's origin is opaque).
 */
export const servePageRequests: RequestListener = (req, res) => {
  const delay = req.url?.startsWith('/late') ? 300 : 150;
  setTimeout(() => {
    if (req.url?.startsWith('/img')) {
      res.writeHead(200, { 'content-type': 'image/svg+xml' });
      res.end(
        '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><rect width="40" height="40"/></svg>',
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' });
    res.end('fetched');
  }, delay);
};

/** Waits that see the late fetch's answer in the PDF (networkidle2 lets one request run). */
export const seesLateFetch = (wait: Wait): boolean => wait === 'networkidle0' || wait === 'selector';
