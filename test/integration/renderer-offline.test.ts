/**
 * An offline render (RenderRequest.offline, issue 21) reaches nothing: every channel a page has to
 * the network (and their variants) is tried against a loopback host that the renderer's test
 * allowance makes reachable, as "the internet" would be. The same page not offline reaches it
 * through most of them, so the host really is reachable and the channels really work; offline,
 * through none, not even a TCP connection or a UDP datagram. Both process models: multi-process
 * (the offline context's own refusing proxy) and single-process (the browser's proxy switched for
 * the turn, after a page that was let through).
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RenderRequest, RenderResult } from '../../functions/renderer/contract.js';
import type { RendererInstance } from '../../functions/renderer/renderer.js';

/** What reached the host: `<run>/<channel>` from each request path, and raw TCP connections. */
let seen: string[] = [];
let connections = 0;
let datagrams = 0;

const host: Server = createServer((req, res) => {
  const path = (req.url ?? '').split('?')[0] ?? '';
  seen.push(path.slice(1));
  if (path.endsWith('/sse')) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'access-control-allow-origin': '*' });
    res.write('data: hi\n\n');
    return;
  }
  if (path.endsWith('/import')) {
    res.writeHead(200, { 'content-type': 'text/css' }).end('p { color: black }');
    return;
  }
  if (path.endsWith('/module') || path.endsWith('/script') || path.endsWith('/import-scripts')) {
    res.writeHead(200, { 'content-type': 'text/javascript', 'access-control-allow-origin': '*' }).end('');
    return;
  }
  res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('ok');
});
host.on('connection', () => connections++);
host.on('upgrade', (req, socket: Socket) => {
  seen.push((req.url ?? '').slice(1));
  socket.destroy();
});
/** STUN, TURN and WebTransport would come as UDP: nothing may arrive here either. */
const udp: UdpSocket = createSocket('udp4');
udp.on('message', () => datagrams++);

const uploads = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200).end());
});

let hostPort = '';
let udpPort = 0;
let uploadBase = '';

const listen = async (server: Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as AddressInfo).port;
};

beforeAll(async () => {
  hostPort = `127.0.0.1:${await listen(host)}`;
  uploadBase = `http://127.0.0.1:${await listen(uploads)}`;
  await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', () => resolve()));
  udpPort = udp.address().port;
});

afterAll(() => {
  for (const server of [host, uploads]) {
    server.closeAllConnections();
    server.close();
  }
  udp.close();
});

/** Every channel the issue lists, and variants: each request's path names its channel. */
const channelsPage = (run: string): string => {
  const h = `http://${hostPort}/${run}`;
  return `<!doctype html><html><head>
  <link rel="stylesheet" href="${h}/stylesheet">
  <style>@import url("${h}/import");</style>
  <style>
    @font-face { font-family: probe; src: url("${h}/font-face"); }
    .font { font-family: probe; }
    .bg { background: url("${h}/css-background"); width: 10px; height: 10px; }
    .set { background-image: image-set("${h}/image-set" 1x); width: 10px; height: 10px; }
    .content::after { content: url("${h}/css-content"); }
    ul.list { list-style-image: url("${h}/list-style"); }
    .cursor { cursor: url("${h}/cursor"), auto; }
    .mask { -webkit-mask-image: url("${h}/mask"); width: 10px; height: 10px; }
    .border { border: 5px solid; border-image: url("${h}/border-image") 30; }
  </style>
  <link rel="prefetch" href="${h}/prefetch">
  <link rel="preload" as="image" href="${h}/preload">
  <link rel="modulepreload" href="${h}/modulepreload">
  <link rel="preconnect" href="http://${hostPort}">
  <link rel="dns-prefetch" href="//offline-probe.example">
  <link rel="icon" href="${h}/icon">
  <script async src="${h}/script"></script>
  </head><body>
  <p class="font">font</p><div class="bg"></div><div class="set"></div><p class="content"></p>
  <ul class="list"><li>item</li></ul><p class="cursor">cursor</p><div class="mask"></div><p class="border">b</p>
  <img src="${h}/img">
  <img srcset="${h}/srcset 1x">
  <picture><source srcset="${h}/picture"><img alt=""></picture>
  <input type="image" src="${h}/input-image" alt="">
  <iframe src="${h}/iframe"></iframe>
  <iframe srcdoc="<img src='${h}/srcdoc-img'><meta http-equiv='refresh' content='0;url=${h}/meta-refresh'>"></iframe>
  <object data="${h}/object"></object>
  <embed src="${h}/embed">
  <video src="${h}/video" poster="${h}/poster"></video>
  <audio src="${h}/audio"></audio>
  <svg width="10" height="10"><image href="${h}/svg-image" width="10" height="10"/></svg>
  <svg width="10" height="10"><filter id="f"><feImage href="${h}/svg-feimage"/></filter><rect filter="url(#f)" width="10" height="10"/></svg>
  <iframe name="sink"></iframe>
  <form id="form" action="${h}/form" method="post" target="sink"><input name="secret" value="s"></form>
  <script>
    const h = ${JSON.stringify(h)};
    const quietly = (f) => { try { const p = f(); if (p && p.catch) p.catch(() => {}); } catch {} };
    quietly(() => fetch(h + '/fetch-get'));
    quietly(() => fetch(h + '/fetch-post', { method: 'POST', body: 'secret' }));
    quietly(() => fetch(h + '/fetch-no-cors', { mode: 'no-cors' }));
    quietly(() => { const x = new XMLHttpRequest(); x.open('GET', h + '/xhr'); x.send(); });
    quietly(() => navigator.sendBeacon(h + '/beacon', 'secret'));
    quietly(() => new WebSocket('ws://${hostPort}/${run}/websocket'));
    quietly(() => new EventSource(h + '/sse'));
    quietly(() => import(h + '/module'));
    quietly(() => new Worker(URL.createObjectURL(new Blob([
      "fetch('" + h + "/worker-fetch').catch(() => {}); try { importScripts('" + h + "/import-scripts'); } catch {}",
    ]))));
    quietly(() => new SharedWorker(URL.createObjectURL(new Blob([
      "fetch('" + h + "/shared-worker-fetch').catch(() => {});",
    ]))));
    quietly(() => navigator.serviceWorker.register(h + '/service-worker'));
    quietly(() => new Audio(h + '/audio-object').play());
    quietly(() => { const i = new Image(); i.src = h + '/image-object'; });
    quietly(() => window.open(h + '/window-open'));
    quietly(() => document.getElementById('form').submit());
    quietly(() => {
      const a = document.createElement('a');
      a.href = h + '/ping-target';
      a.ping = h + '/ping';
      a.target = 'sink';
      document.body.append(a);
      a.click();
    });
    quietly(() => {
      const pc = new RTCPeerConnection({ iceServers: [
        { urls: 'stun:127.0.0.1:${udpPort}' },
        { urls: 'turn:127.0.0.1:${udpPort}', username: 'u', credential: 'c' },
      ] });
      pc.createDataChannel('x');
      return pc.createOffer().then((o) => pc.setLocalDescription(o));
    });
    quietly(() => new WebTransport('https://127.0.0.1:${udpPort}/${run}/webtransport'));
    setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<i id="done"></i>'), 2500);
  </script>
  </body></html>`;
};

/** Channels that reach the host from a page that is not offline: the list, at least. */
const REACHING = [
  'img',
  'css-background',
  'font-face',
  'import',
  'prefetch',
  'preload',
  'script',
  'iframe',
  'object',
  'video',
  'svg-image',
  'fetch-get',
  'fetch-post',
  'xhr',
  'beacon',
  'websocket',
  'sse',
  'worker-fetch',
  'ping',
];

let uploadCount = 0;
const request = (html: string, offline: boolean): RenderRequest => ({
  jobId: 'job_offline_test',
  template: { source: html, variables: {} },
  pdf: {
    format: 'A4',
    landscape: false,
    printBackground: true,
    margins: { top: 0.4, right: 0.4, bottom: 0.4, left: 0.4 },
  },
  pageLoad: { waitUntil: 'load', timeoutMs: 15_000, waitForSelector: '#done' },
  upload: { url: `${uploadBase}/bucket/offline-${++uploadCount}.pdf`, headers: {} },
  limits: { maxPdfBytes: 50 * 1024 * 1024, maxPages: 100, maxHtmlBytes: 10 * 1024 * 1024 },
  ...(offline ? { offline: true } : {}),
});

const channelsOf = (run: string): string[] =>
  [...new Set(seen.filter((p) => p.startsWith(`${run}/`)).map((p) => p.slice(run.length + 1)))].sort();

describe.each(['multi', 'single'] as const)('an offline render (%s-process)', (model) => {
  let renderer: RendererInstance;
  beforeAll(async () => {
    const { readRendererConfig } = await import('../../functions/core/config.js');
    const { createInProcessRenderer } = await import('../../functions/renderer/in-process.js');
    renderer = createInProcessRenderer(
      readRendererConfig({
        ...process.env,
        RENDERER_EGRESS_ALLOW_HOSTS: hostPort,
        RENDERER_PROCESS_MODEL: model,
      }),
    );
  });
  afterAll(async () => {
    await renderer?.close();
  });

  it('reaches the host through none of the channels, while the same page not offline does', async () => {
    // Not offline first: it reaches the host (and leaves connections behind in single-process).
    const online: RenderResult = await renderer.render(request(channelsPage(`${model}-online`), false));
    expect(online).toMatchObject({ ok: true });
    const reached = channelsOf(`${model}-online`);
    expect(reached).toEqual(expect.arrayContaining(REACHING));

    seen = [];
    connections = 0;
    datagrams = 0;
    const offline = await renderer.render(request(channelsPage(`${model}-offline`), true));
    expect(offline).toMatchObject({ ok: true });
    // Stragglers (a ping, a beacon, a worker) would arrive after the print.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(channelsOf(`${model}-offline`)).toEqual([]);
    expect(seen).toEqual([]);
    expect(connections).toBe(0);
    expect(datagrams).toBe(0);
    // The page's own diagnostics say why.
    if (offline.ok) {
      expect(offline.diagnostics?.entries).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            type: 'resource',
            message: 'blocked: offline',
            url: `http://${hostPort}/${model}-offline/img`,
          }),
        ]),
      );
    }

    // The next render that is not offline reaches the host again.
    const after = await renderer.render(
      request(`<img src="http://${hostPort}/${model}-after/img"><i id="done"></i>`, false),
    );
    expect(after).toMatchObject({ ok: true });
    expect(channelsOf(`${model}-after`)).toEqual(['img']);
  });
});
