/**
 * The dashboard on `npm start`: the local gateway serves the page at /dashboard/ (beside the API
 * on the same origin, never under /v1) and stands in for Cognito's managed login under /local/: an
 * authorization endpoint with a sign-in page that asks for an email address and nothing else, a
 * token endpoint (authorization code with PKCE S256, refresh tokens), revocation and logout. The
 * page runs the same oidc-client-ts flow against it as against Cognito in the cloud; the ID tokens
 * are the local issuer's (issuer.ts), for the dashboard's own client id, which the local handlers
 * accept beside the token command's. None of this is deployed: the cloud has Cognito.
 *
 * The site is built with esbuild on the first request for it, in memory, so that `npm start`
 * (and every test's stack) starts without paying for a build nobody asked for.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DASHBOARD_SCOPE, type DashboardConfig } from '../dashboard/config.js';
import {
  contentSecurityPolicy,
  referenceContentSecurityPolicy,
  SECURITY_HEADERS,
} from '../dashboard/headers.js';
import { LOCAL_ISSUER, type LocalIssuer } from './issuer.js';

export const LOCAL_DASHBOARD_PATH = '/dashboard/';
/** The app client id of the dashboard's ID tokens (`aud`), as Cognito has one per app client. */
export const LOCAL_DASHBOARD_CLIENT_ID = 'local-dashboard';

const AUTH = {
  authorize: '/local/oauth2/authorize',
  token: '/local/oauth2/token',
  revoke: '/local/oauth2/revoke',
  logout: '/local/logout',
  style: '/local/sign-in.css',
} as const;

/** What the page reads from /dashboard/config.json: same origin for the API and the sign-in. */
export const localDashboardConfig = (): DashboardConfig => ({
  apiUrl: '/',
  environment: 'local',
  auth: {
    clientId: LOCAL_DASHBOARD_CLIENT_ID,
    scope: DASHBOARD_SCOPE,
    endpoints: {
      issuer: LOCAL_ISSUER,
      authorization_endpoint: AUTH.authorize,
      token_endpoint: AUTH.token,
      revocation_endpoint: AUTH.revoke,
      end_session_endpoint: AUTH.logout,
    },
  },
});

export interface LocalDashboardParts {
  readonly issuer: LocalIssuer;
  /** s3rver's endpoint: the preview downloads PDFs from it (CSP connect-src). */
  readonly s3Endpoint: string;
  /**
   * The stack's own origins (`http://127.0.0.1:<port>`, and the other loopback spellings of it):
   * the only ones sign-in and sign-out send the browser back to. Never the request's Host header,
   * which a DNS-rebinding page chooses.
   */
  readonly origins: readonly string[];
}

export interface LocalDashboardOptions {
  /** Resolves once the stack's issuer and emulators run; requests wait for it. */
  readonly parts: Promise<LocalDashboardParts>;
  /** Lifetime of the ID and access tokens it issues. @default 3600, as Cognito's */
  readonly sessionTtlSeconds?: number;
  /** @default console.error */
  readonly logError?: (message: string, error: unknown) => void;
}

/** Answers the request and returns true when it is the dashboard's or its sign-in's, else false. */
export type LocalPages = (req: IncomingMessage, res: ServerResponse) => boolean;

const CODE_TTL_MS = 5 * 60_000;
const REFRESH_TTL_MS = 30 * 24 * 3600_000;
const MAX_FORM_BYTES = 64 * 1024;

interface AuthorizationCode {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly sub: string;
  readonly email: string;
  readonly nonce: string | undefined;
  readonly scope: string;
  readonly expiresAt: number;
}

interface RefreshGrant {
  readonly clientId: string;
  readonly sub: string;
  readonly email: string;
  readonly authTime: number;
  readonly scope: string;
  readonly expiresAt: number;
}

const base64url = (bytes: Buffer): string => bytes.toString('base64url');
const newSecret = (): string => base64url(randomBytes(32));

/** The same account for the same address, every time: a UUID-shaped digest of it, as Cognito's subs look. */
export const localSubFor = (email: string): string => {
  const h = createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
};

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const send = (
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: string | Uint8Array = '',
  head = false,
): void => {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  res.writeHead(status, { ...SECURITY_HEADERS, ...headers, 'content-length': String(bytes.length) });
  res.end(head ? undefined : bytes);
};

const readForm = (req: IncomingMessage): Promise<URLSearchParams | undefined> =>
  new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_FORM_BYTES) chunks.push(c);
    });
    req.on('end', () =>
      resolve(
        size > MAX_FORM_BYTES ? undefined : new URLSearchParams(Buffer.concat(chunks).toString('utf8')),
      ),
    );
    req.on('error', () => resolve(undefined));
  });

const SIGN_IN_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const SIGN_IN_CSS = `body{font-family:system-ui,sans-serif;max-width:26rem;margin:12vh auto;padding:0 1rem;line-height:1.5}
label{display:block;font-weight:600;margin:1rem 0 .25rem}input{font:inherit;width:100%;padding:.5rem;box-sizing:border-box}
button{font:inherit;margin-top:1rem;padding:.5rem 1rem;background:#1f4e8c;color:#fff;border:0;border-radius:6px}
.note{color:#57606a;font-size:.9rem}.error{color:#b42318}`;

const signInPage = (params: URLSearchParams, email = '', error?: string): string => {
  const hidden = [...params]
    .filter(([k]) => k !== 'email')
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign in (local)</title>
<link rel="stylesheet" href="${AUTH.style}"></head><body><main>
<h1>Sign in</h1>
<p class="note">Local sign-in of <code>npm start</code>, standing in for Cognito: any email address signs in,
and each address is an account of its own. Nothing is sent anywhere.</p>
<form method="post" action="${AUTH.authorize}">${hidden}
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="email" required autofocus value="${escapeHtml(email)}"${
    error ? ' aria-invalid="true" aria-describedby="email-error"' : ''
  }>
${error ? `<p class="error" id="email-error" role="alert">${escapeHtml(error)}</p>` : ''}
<button type="submit">Sign in</button>
</form></main></body></html>`;
};

export const createLocalDashboard = (options: LocalDashboardOptions): LocalPages => {
  const ttlSeconds = options.sessionTtlSeconds ?? 3600;
  const logError = options.logError ?? ((m: string, e: unknown) => console.error(m, e));
  const codes = new Map<string, AuthorizationCode>();
  const refreshTokens = new Map<string, RefreshGrant>();
  let site: Promise<import('../dashboard/build.js').BuiltSite> | undefined;
  const builtSite = () => {
    site ??= import('../dashboard/build.js').then((m) => m.buildSite());
    site.catch(() => {
      site = undefined;
    });
    return site;
  };

  /** The page's URL on the stack's own origin: where sign-in and sign-out may send the browser back to. */
  const isDashboardUrl = (origins: readonly string[], value: string | null): value is string => {
    if (!value) return false;
    try {
      const url = new URL(value);
      return origins.includes(url.origin) && url.pathname === LOCAL_DASHBOARD_PATH && url.hash === '';
    } catch {
      return false;
    }
  };

  const tokenError = (res: ServerResponse, error: string, description: string, status = 400) =>
    send(
      res,
      status,
      { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
      JSON.stringify({ error, error_description: description }),
    );

  const issueTokens = async (grant: Omit<RefreshGrant, 'expiresAt'>, nonce?: string) => {
    const { issuer } = await options.parts;
    const common = { sub: grant.sub, email: grant.email, ttlSeconds };
    const idToken = await issuer.issueToken({
      ...common,
      claims: { aud: grant.clientId, auth_time: grant.authTime, ...(nonce ? { nonce } : {}) },
    });
    // As Cognito's: no aud, the client in client_id, the scopes in scope.
    const accessToken = await issuer.issueToken({
      ...common,
      claims: {
        token_use: 'access',
        aud: undefined,
        email: undefined,
        email_verified: undefined,
        client_id: grant.clientId,
        scope: grant.scope,
        auth_time: grant.authTime,
      },
    });
    return { id_token: idToken, access_token: accessToken, token_type: 'Bearer', expires_in: ttlSeconds };
  };

  const authorize = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const params = req.method === 'POST' ? await readForm(req) : url.searchParams;
    if (!params) return send(res, 413, { 'content-type': 'text/plain' }, 'Too large');
    const clientId = params.get('client_id');
    const redirectUri = params.get('redirect_uri');
    const html = {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': SIGN_IN_CSP,
    };
    // Without a valid client and redirect URI there is nobody to send an error back to (RFC 6749 4.1.2.1).
    const { origins } = await options.parts;
    if (clientId !== LOCAL_DASHBOARD_CLIENT_ID || !isDashboardUrl(origins, redirectUri)) {
      return send(
        res,
        400,
        html,
        '<!doctype html><title>Bad request</title><p>Unknown client_id or redirect_uri.</p>',
      );
    }
    const back = (query: Record<string, string>) => {
      const target = new URL(redirectUri);
      for (const [k, v] of Object.entries({ ...query, state: params.get('state') ?? '' }))
        target.searchParams.set(k, v);
      send(res, 303, { location: target.href, 'cache-control': 'no-store' });
    };
    if (params.get('response_type') !== 'code') return back({ error: 'unsupported_response_type' });
    const challenge = params.get('code_challenge');
    if (params.get('code_challenge_method') !== 'S256' || !challenge || !/^[\w-]{43}$/.test(challenge)) {
      return back({ error: 'invalid_request', error_description: 'PKCE with S256 is required' });
    }
    if (req.method !== 'POST') return send(res, 200, html, signInPage(params));
    const email = (params.get('email') ?? '').trim();
    if (!EMAIL.test(email) || email.length > 254) {
      return send(
        res,
        200,
        html,
        signInPage(params, email, 'Enter an email address, such as ada@example.com.'),
      );
    }
    const code = newSecret();
    codes.set(code, {
      clientId,
      redirectUri,
      codeChallenge: challenge,
      sub: localSubFor(email),
      email,
      nonce: params.get('nonce') ?? undefined,
      scope: params.get('scope') ?? DASHBOARD_SCOPE,
      expiresAt: Date.now() + CODE_TTL_MS,
    });
    back({ code });
  };

  const token = async (req: IncomingMessage, res: ServerResponse) => {
    const form = await readForm(req);
    if (!form) return tokenError(res, 'invalid_request', 'body too large', 413);
    const clientId = form.get('client_id');
    if (clientId !== LOCAL_DASHBOARD_CLIENT_ID)
      return tokenError(res, 'invalid_client', 'unknown client_id', 401);
    const now = Date.now();
    if (form.get('grant_type') === 'authorization_code') {
      const code = form.get('code') ?? '';
      const grant = codes.get(code);
      codes.delete(code); // one use only, whatever happens next
      const verifier = form.get('code_verifier') ?? '';
      if (
        !grant ||
        grant.expiresAt < now ||
        grant.clientId !== clientId ||
        grant.redirectUri !== form.get('redirect_uri')
      ) {
        return tokenError(res, 'invalid_grant', 'unknown, used or expired code');
      }
      if (base64url(createHash('sha256').update(verifier).digest()) !== grant.codeChallenge) {
        return tokenError(res, 'invalid_grant', 'code_verifier does not match the code_challenge');
      }
      const session = {
        clientId,
        sub: grant.sub,
        email: grant.email,
        scope: grant.scope,
        authTime: Math.floor(now / 1000),
      };
      const refreshToken = newSecret();
      refreshTokens.set(refreshToken, { ...session, expiresAt: now + REFRESH_TTL_MS });
      const tokens = await issueTokens(session, grant.nonce);
      return send(
        res,
        200,
        { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
        JSON.stringify({ ...tokens, refresh_token: refreshToken }),
      );
    }
    if (form.get('grant_type') === 'refresh_token') {
      const grant = refreshTokens.get(form.get('refresh_token') ?? '');
      if (!grant || grant.expiresAt < now || grant.clientId !== clientId) {
        return tokenError(res, 'invalid_grant', 'unknown, revoked or expired refresh token');
      }
      // As Cognito: new ID and access tokens, the same refresh token (none in the answer).
      const tokens = await issueTokens(grant);
      return send(
        res,
        200,
        { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
        JSON.stringify(tokens),
      );
    }
    return tokenError(res, 'unsupported_grant_type', 'authorization_code or refresh_token');
  };

  const revoke = async (req: IncomingMessage, res: ServerResponse) => {
    const form = await readForm(req);
    const token = form?.get('token') ?? '';
    if (refreshTokens.get(token)?.clientId === form?.get('client_id')) refreshTokens.delete(token);
    send(res, 200, { 'cache-control': 'no-store' });
  };

  const logout = async (res: ServerResponse, url: URL) => {
    const target = url.searchParams.get('logout_uri');
    const { origins } = await options.parts;
    if (url.searchParams.get('client_id') !== LOCAL_DASHBOARD_CLIENT_ID || !isDashboardUrl(origins, target)) {
      return send(
        res,
        400,
        { 'content-type': 'text/plain; charset=utf-8' },
        'Unknown client_id or logout_uri.',
      );
    }
    send(res, 302, { location: target, 'cache-control': 'no-store' });
  };

  const serveSite = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const head = req.method === 'HEAD';
    if (req.method !== 'GET' && !head)
      return send(res, 405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }, 'Method not allowed');
    const [{ s3Endpoint }, built, { contentTypeOf, CONFIG_FILE, REFERENCE_PAGE }] = await Promise.all([
      options.parts,
      builtSite(),
      import('../dashboard/build.js'),
    ]);
    const file = path === '' ? 'index.html' : path;
    // The API reference page has a policy of its own (its viewer's styles, by hash), as in the cloud.
    const csp = (file === REFERENCE_PAGE ? referenceContentSecurityPolicy : contentSecurityPolicy)({
      connect: [new URL(s3Endpoint).origin],
    });
    if (file === CONFIG_FILE) {
      return send(
        res,
        200,
        { 'content-type': contentTypeOf(file), 'cache-control': 'no-store', 'content-security-policy': csp },
        JSON.stringify(localDashboardConfig()),
        head,
      );
    }
    const contents = built.files.get(file);
    if (!contents)
      return send(
        res,
        404,
        { 'content-type': 'text/plain; charset=utf-8', 'content-security-policy': csp },
        'Not found',
        head,
      );
    const immutable = file.startsWith('assets/');
    send(
      res,
      200,
      {
        'content-type': contentTypeOf(file),
        'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
        'content-security-policy': csp,
      },
      contents,
      head,
    );
  };

  const route = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const path = url.pathname;
    // `/`, the address npm start prints, leads to the dashboard too.
    if (path === '/dashboard' || path === '/') return send(res, 308, { location: LOCAL_DASHBOARD_PATH });
    if (path.startsWith(LOCAL_DASHBOARD_PATH))
      return serveSite(req, res, path.slice(LOCAL_DASHBOARD_PATH.length));
    if (path === AUTH.style)
      return send(
        res,
        200,
        { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'no-cache' },
        SIGN_IN_CSS,
      );
    if (path === AUTH.authorize && (req.method === 'GET' || req.method === 'POST'))
      return authorize(req, res, url);
    if (path === AUTH.token && req.method === 'POST') return token(req, res);
    if (path === AUTH.revoke && req.method === 'POST') return revoke(req, res);
    if (path === AUTH.logout && req.method === 'GET') return logout(res, url);
    return send(res, 404, { 'content-type': 'text/plain; charset=utf-8' }, 'Not found');
  };

  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://local');
    if (
      !(url.pathname === '/' && (req.method === 'GET' || req.method === 'HEAD')) &&
      url.pathname !== '/dashboard' &&
      !url.pathname.startsWith(LOCAL_DASHBOARD_PATH) &&
      !url.pathname.startsWith('/local/')
    ) {
      return false;
    }
    route(req, res, url).catch((e: unknown) => {
      logError(`local dashboard: ${req.method} ${url.pathname} failed`, e);
      if (!res.headersSent) send(res, 500, { 'content-type': 'text/plain; charset=utf-8' }, 'Internal error');
      else res.destroy();
    });
    return true;
  };
};
