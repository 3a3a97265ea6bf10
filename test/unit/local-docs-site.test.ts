/**
 * `npm start`'s /docs/ (lib/local/docs-site.ts): the built documentation site's files, the page
 * that says how to build it while there is none, and nothing outside the site's folder.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalDocs } from '../../lib/local/docs-site.js';

let dir: string;
let site: string;
let server: Server;
let base: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'docs-site-'));
  site = join(dir, 'dist');
  await writeFile(join(dir, 'secret.txt'), 'not for the web');
  const pages = createLocalDocs({ dir: site });
  server = createServer((req, res) => {
    if (!pages(req, res)) res.writeHead(418).end('not the docs');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe('the documentation site on npm start', () => {
  it('says how to build the site while there is none', async () => {
    const res = await fetch(`${base}/docs/`);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('npm run docs:build');
  });

  it('serves the built site: pages, clean URLs, assets, its 404 page', async () => {
    await mkdir(join(site, 'api'), { recursive: true });
    await mkdir(join(site, 'assets'), { recursive: true });
    await writeFile(join(site, 'index.html'), '<h1>Home</h1>');
    await writeFile(join(site, '404.html'), '<h1>No such page</h1>');
    await writeFile(join(site, 'webhooks.html'), '<h1>Webhooks</h1>');
    await writeFile(join(site, 'api', 'index.html'), '<h1>API</h1>');
    await writeFile(join(site, 'assets', 'app.1234.js'), 'console.log(1)');

    const home = await fetch(`${base}/docs/`);
    expect([home.status, await home.text()]).toEqual([200, '<h1>Home</h1>']);
    expect(home.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(home.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    for (const path of ['webhooks.html', 'webhooks']) {
      expect(await (await fetch(`${base}/docs/${path}`)).text()).toBe('<h1>Webhooks</h1>');
    }
    expect(await (await fetch(`${base}/docs/api/`)).text()).toBe('<h1>API</h1>');
    const asset = await fetch(`${base}/docs/assets/app.1234.js`);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toContain('immutable');
    const missing = await fetch(`${base}/docs/nothing-here`);
    expect([missing.status, await missing.text()]).toEqual([404, '<h1>No such page</h1>']);
  });

  it('redirects /docs to /docs/, and leaves every other path to the rest of the stack', async () => {
    const bare = await fetch(`${base}/docs`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([308, '/docs/']);
    expect((await fetch(`${base}/v1/docs`)).status).toBe(418);
    expect((await fetch(`${base}/documentation`)).status).toBe(418);
  });

  it('serves nothing outside the site, however the path is spelled', async () => {
    for (const path of [
      '../secret.txt',
      '..%2Fsecret.txt',
      '%2e%2e/secret.txt',
      'api/..%2F..%2Fsecret.txt',
    ]) {
      const res = await fetch(`${base}/docs/${path}`);
      expect(await res.text(), path).not.toContain('not for the web');
    }
    const post = await fetch(`${base}/docs/`, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
  });
});
