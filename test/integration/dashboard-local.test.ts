/**
 * The dashboard's local serving and sign-in (lib/local/dashboard.ts) over plain HTTP: the site
 * beside the API on the same origin without shadowing it, its security headers, and the stand-in
 * for Cognito's managed login: authorization code with PKCE (S256 only), single-use codes, refresh
 * tokens that keep the session's sub and auth_time, revocation, and redirects only back to the
 * dashboard. The browser flow itself is test/integration/dashboard.test.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { LOCAL_DASHBOARD_CLIENT_ID, localSubFor } from '../../lib/local/dashboard.js';
import { useLocalStack } from '../helpers/local-stack.js';

const local = useLocalStack();

// biome-ignore lint/suspicious/noExplicitAny: answers are checked by the assertions
type Json = any;
const json = (res: Response): Promise<Json> => res.json();

const url = (path: string) => new URL(path, local.stack.baseUrl).href;
const get = (path: string, init: RequestInit = {}) => fetch(url(path), { redirect: 'manual', ...init });
const form = (path: string, fields: Record<string, string>) =>
  get(path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

const authorizeParams = (challenge: string, overrides: Record<string, string> = {}) => ({
  response_type: 'code',
  client_id: LOCAL_DASHBOARD_CLIENT_ID,
  redirect_uri: local.stack.dashboardUrl,
  scope: 'openid email',
  state: 'state-1',
  code_challenge: challenge,
  code_challenge_method: 'S256',
  ...overrides,
});

/** Signs in as `email` the way the page does, up to the token answer. */
const signIn = async (email: string) => {
  const { verifier, challenge } = pkce();
  const res = await form('/local/oauth2/authorize', { ...authorizeParams(challenge), email });
  expect(res.status).toBe(303);
  const back = new URL(res.headers.get('location') ?? '');
  const code = back.searchParams.get('code') ?? '';
  const exchange = (v = verifier) =>
    form('/local/oauth2/token', {
      grant_type: 'authorization_code',
      client_id: LOCAL_DASHBOARD_CLIENT_ID,
      redirect_uri: local.stack.dashboardUrl,
      code,
      code_verifier: v,
    });
  return { back, code, verifier, exchange };
};

describe('the dashboard on the local stack', () => {
  it('serves the page at /dashboard/ with its security headers, and its config.json', async () => {
    expect((await get('/dashboard')).headers.get('location')).toBe('/dashboard/');
    const page = await get('/dashboard/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain(`connect-src 'self' ${local.stack.s3Endpoint}`);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await page.text();
    const script = /<script type="module" src="(assets\/[^"]+)"/.exec(html)?.[1] as string;
    const js = await get(`/dashboard/${script}`);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');

    const config = await json(await get('/dashboard/config.json'));
    expect(config).toEqual({
      apiUrl: '/',
      environment: 'local',
      auth: {
        clientId: 'local-dashboard',
        scope: 'openid email',
        endpoints: {
          issuer: expect.stringMatching(/^https:\/\/cognito-idp\./),
          authorization_endpoint: '/local/oauth2/authorize',
          token_endpoint: '/local/oauth2/token',
          revocation_endpoint: '/local/oauth2/revoke',
          end_session_endpoint: '/local/logout',
        },
      },
    });
    expect((await get('/dashboard/nothing.js')).status).toBe(404);
    expect((await get('/dashboard/', { method: 'POST' })).status).toBe(405);
  });

  it("leads / (GET, the address npm start prints) to the dashboard; another method on / is the API's", async () => {
    const res = await get('/');
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe('/dashboard/');
    const post = await get('/', { method: 'POST' });
    expect(post.status).toBe(404);
    expect((await json(post)).error.code).toBe('NOT_FOUND');
  });

  it('leaves every other path to the API and its fallback', async () => {
    for (const path of ['/v1/nothing', '/dashboards', '/v1/dashboard/']) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect((await json(res)).error.code, path).toBe('NOT_FOUND');
    }
    expect((await local.api('/v1/me')).status).toBe(401);
  });

  it('shows a sign-in form for a valid request, and refuses a foreign client or redirect', async () => {
    const { challenge } = pkce();
    const page = await get(`/local/oauth2/authorize?${new URLSearchParams(authorizeParams(challenge))}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<label for="email">Email address</label>');
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self'");

    for (const bad of [
      { client_id: 'someone-else' } as Record<string, string>,
      { redirect_uri: 'https://evil.example.com/dashboard/' },
      { redirect_uri: `${local.stack.baseUrl}/v1/pdf` },
    ]) {
      const res = await get(
        `/local/oauth2/authorize?${new URLSearchParams(authorizeParams(challenge, bad))}`,
      );
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.headers.get('location')).toBeNull();
    }
    // Without PKCE S256 the browser goes back with the error.
    const plain = await get(
      `/local/oauth2/authorize?${new URLSearchParams(authorizeParams(challenge, { code_challenge_method: 'plain' }))}`,
    );
    expect(plain.status).toBe(303);
    expect(new URL(plain.headers.get('location') ?? '').searchParams.get('error')).toBe('invalid_request');
    // An address that is not one asks again.
    const again = await form('/local/oauth2/authorize', {
      ...authorizeParams(challenge),
      email: 'not an address',
    });
    expect(again.status).toBe(200);
    expect(await again.text()).toContain('role="alert"');
  });

  it('exchanges a code once, with its verifier, for tokens the API accepts', async () => {
    const email = 'grace@example.com';
    const { back, exchange, verifier } = await signIn(email);
    expect(back.origin + back.pathname).toBe(local.stack.dashboardUrl);
    expect(back.searchParams.get('state')).toBe('state-1');

    const wrong = await exchange(`${verifier.slice(0, -2)}xx`);
    expect(wrong.status).toBe(400);
    expect((await json(wrong)).error).toBe('invalid_grant');
    // The failed attempt used the code up.
    expect((await exchange()).status).toBe(400);

    const second = await signIn(email);
    const tokens = await json(await second.exchange());
    expect(tokens).toMatchObject({
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.any(String),
    });
    const claims = decodeJwt(tokens.id_token);
    expect(claims).toMatchObject({ aud: 'local-dashboard', token_use: 'id', email, sub: localSubFor(email) });
    const me = await local.api('/v1/me', { token: tokens.id_token });
    expect(me.status).toBe(200);
    expect(me.json).toMatchObject({ id: localSubFor(email), email });
    // An access token is not a session token for the API.
    expect(decodeJwt(tokens.access_token)).toMatchObject({
      token_use: 'access',
      client_id: 'local-dashboard',
    });
    expect((await local.api('/v1/me', { token: tokens.access_token })).json.error.code).toBe(
      'INVALID_SESSION_TOKEN',
    );
    expect((await second.exchange()).status).toBe(400);
  });

  it('refreshes the session (same sub and auth_time) until the refresh token is revoked', async () => {
    const tokens = await json(await (await signIn('hedy@example.com')).exchange());
    const refresh = () =>
      form('/local/oauth2/token', {
        grant_type: 'refresh_token',
        client_id: LOCAL_DASHBOARD_CLIENT_ID,
        refresh_token: tokens.refresh_token,
      });
    const renewed = await refresh();
    expect(renewed.status).toBe(200);
    const body = await json(renewed);
    // As Cognito answers: new ID and access tokens, no new refresh token.
    expect(body.refresh_token).toBeUndefined();
    const [before, after] = [decodeJwt(tokens.id_token), decodeJwt(body.id_token)];
    expect(after.jti).not.toBe(before.jti);
    expect(after).toMatchObject({ sub: before.sub, auth_time: before.auth_time, aud: 'local-dashboard' });
    expect((await local.api('/v1/me', { token: body.id_token })).status).toBe(200);

    const revoked = await form('/local/oauth2/revoke', {
      token: tokens.refresh_token,
      client_id: 'local-dashboard',
    });
    expect(revoked.status).toBe(200);
    expect((await refresh()).status).toBe(400);
  });

  it('sends a code only to its own origin, whatever the Host header says (DNS rebinding)', async () => {
    // A page on a name that resolves to the stack's address reaches it with its own Host header.
    const { port } = new URL(local.stack.baseUrl);
    const rebound = `http://attacker.example:${port}`;
    const withHost = (path: string): Promise<{ status: number; location: string | undefined }> =>
      new Promise((resolve, reject) => {
        const req = request(url(path), { headers: { host: `attacker.example:${port}` } }, (res) => {
          res.resume();
          resolve({ status: res.statusCode ?? 0, location: res.headers.location });
        });
        req.on('error', reject);
        req.end();
      });
    const { challenge } = pkce();
    const authorize = await withHost(
      `/local/oauth2/authorize?${new URLSearchParams(authorizeParams(challenge, { redirect_uri: `${rebound}/dashboard/` }))}`,
    );
    expect(authorize.status).toBe(400);
    expect(authorize.location).toBeUndefined();
    const logout = await withHost(
      `/local/logout?${new URLSearchParams({ client_id: 'local-dashboard', logout_uri: `${rebound}/dashboard/` })}`,
    );
    expect(logout.status).toBe(400);
    // The stack's own origin, under any Host header, and its other loopback spelling, still work.
    const own = await withHost(`/local/oauth2/authorize?${new URLSearchParams(authorizeParams(challenge))}`);
    expect(own.status).toBe(200);
    const localhost = await get(
      `/local/oauth2/authorize?${new URLSearchParams(authorizeParams(challenge, { redirect_uri: `http://localhost:${port}/dashboard/` }))}`,
    );
    expect(localhost.status).toBe(200);
  });

  it('signs out only back to the dashboard', async () => {
    const out = await get(
      `/local/logout?${new URLSearchParams({ client_id: 'local-dashboard', logout_uri: local.stack.dashboardUrl })}`,
    );
    expect(out.status).toBe(302);
    expect(out.headers.get('location')).toBe(local.stack.dashboardUrl);
    const away = await get(
      `/local/logout?${new URLSearchParams({ client_id: 'local-dashboard', logout_uri: 'https://evil.example.com/' })}`,
    );
    expect(away.status).toBe(400);
  });
});
