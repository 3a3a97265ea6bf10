/**
 * The documentation site on `npm start`: the VitePress build of docs/ (`npm run docs:build`, into
 * docs/.vitepress/dist) served at /docs/, beside the dashboard and its API reference. Files only,
 * read from disk on each request (a rebuild shows at once); until the site is built, /docs/ says
 * how to build it. None of this is deployed.
 */
import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import type { LocalPages } from './dashboard.js';

export const LOCAL_DOCS_PATH = '/docs/';
/** Where `npm run docs:build` writes the site, from the project's root. */
export const DOCS_SITE_DIR = join('docs', '.vitepress', 'dist');

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * The site's pages run VitePress's own inline scripts (the colour scheme, before paint); nothing
 * loads from another origin, and nothing may frame it.
 */
const CSP =
  "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'";

const NOT_BUILT = `<!doctype html><html lang="en"><meta charset="utf-8"><title>Documentation not built</title>
<body style="font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 3rem auto">
<h1>The documentation site is not built</h1>
<p>Build it with <code>npm run docs:build</code> (a minute at most), then reload this page.
<code>npm run docs</code> serves it on its own while you write. The same pages are in
<code>docs/</code> as Markdown.</p></body></html>`;

const isFile = async (path: string): Promise<boolean> =>
  (await stat(path).catch(() => undefined))?.isFile() ?? false;

/** The file a path under /docs/ names: `x/` is `x/index.html`, `x` may be `x.html`. */
const fileFor = async (root: string, path: string): Promise<string | undefined> => {
  let relative: string;
  try {
    relative = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  const wanted = normalize(join(root, relative));
  if (wanted !== root && !wanted.startsWith(root + sep)) return undefined;
  for (const candidate of [
    relative === '' || relative.endsWith('/') ? join(wanted, 'index.html') : wanted,
    `${wanted}.html`,
  ]) {
    if (await isFile(candidate)) return candidate;
  }
  return undefined;
};

export interface LocalDocsOptions {
  /** The built site. @default docs/.vitepress/dist under the working directory (npm's: the project) */
  readonly dir?: string;
}

export const createLocalDocs = (options: LocalDocsOptions = {}): LocalPages => {
  const root = normalize(options.dir ?? join(process.cwd(), DOCS_SITE_DIR));
  const send = (
    res: ServerResponse,
    status: number,
    headers: Record<string, string>,
    body?: Buffer | string,
  ) => {
    res.writeHead(status, {
      'x-content-type-options': 'nosniff',
      'content-security-policy': CSP,
      ...headers,
    });
    res.end(body);
  };

  const serve = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const head = req.method === 'HEAD';
    if (req.method !== 'GET' && !head) {
      return send(res, 405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }, 'Method not allowed');
    }
    if (!(await isFile(join(root, 'index.html')))) {
      return send(res, 404, { 'content-type': TYPES['.html'] ?? '', 'cache-control': 'no-store' }, NOT_BUILT);
    }
    const file = await fileFor(root, path);
    if (!file) {
      const notFound = join(root, '404.html');
      const page = (await isFile(notFound)) ? await readFile(notFound) : 'Not found';
      return send(
        res,
        404,
        { 'content-type': TYPES['.html'] ?? '', 'cache-control': 'no-cache' },
        head ? undefined : page,
      );
    }
    const body = await readFile(file);
    send(
      res,
      200,
      {
        'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
        // VitePress names its assets by their hash.
        'cache-control': file.includes(`${sep}assets${sep}`)
          ? 'public, max-age=31536000, immutable'
          : 'no-cache',
      },
      head ? undefined : body,
    );
  };

  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://local');
    if (url.pathname === '/docs') {
      send(res, 308, { location: LOCAL_DOCS_PATH });
      return true;
    }
    if (!url.pathname.startsWith(LOCAL_DOCS_PATH)) return false;
    serve(req, res, url.pathname.slice(LOCAL_DOCS_PATH.length)).catch(() => {
      if (!res.headersSent) send(res, 500, { 'content-type': 'text/plain; charset=utf-8' }, 'Internal error');
      else res.destroy();
    });
    return true;
  };
};
