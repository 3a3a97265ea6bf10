/**
 * The authentication matrix over HTTP: every route of the route table (functions/routes.ts, so
 * routes added later are covered as they land) × every kind of credential, with the answer
 * derived from the route's declared credentials (contract: "Error body", "Precedence"):
 *
 *   no header, another scheme, an empty token    401 UNAUTHENTICATED, WWW-Authenticate: Bearer
 *   a token that is not a valid session JWT       401 INVALID_SESSION_TOKEN
 *   a pdf_live_ key unknown, malformed, revoked   401 INVALID_API_KEY
 *   a valid key                                   403 SESSION_REQUIRED where the route wants a session,
 *                                                 else past authentication (neither 401 nor 403)
 *   a valid session                               past authentication
 *
 * Valid credentials are sent without a body, so no route does real work (no render, no key).
 * Nothing presented ever shows up in an answer or in the logs.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../functions/domain/accounts/api-key-format.js';
import { errorSchema } from '../../functions/openapi.js';
import { type Route, routeKey, routes } from '../../functions/routes.js';
import { LOCAL_CLIENT_ID, LOCAL_ISSUER } from '../../lib/local/issuer.js';
import { putAccountOnPlan, useLocalStack } from '../helpers/local-stack.js';
import type { CapturedOutput } from '../helpers/process-output.js';

const local = useLocalStack();

type Expected =
  | { readonly status: 401; readonly code: string; readonly challenge: string }
  | { readonly status: 403; readonly code: 'SESSION_REQUIRED' }
  | { readonly status: 'authenticated' };

interface Variant {
  readonly name: string;
  /** The Authorization header, from the credentials made in beforeAll; undefined sends none. */
  readonly header: (c: Credentials) => string | undefined;
  readonly expected: (route: Route) => Expected;
}

interface Credentials {
  session: string;
  key: string;
  revokedKey: string;
  expired: string;
  foreign: string;
  algNone: string;
  wrongAudience: string;
  accessToken: string;
}

const unauthenticated = () => ({ status: 401, code: 'UNAUTHENTICATED', challenge: 'Bearer' }) as const;
const invalid = (code: string) => () =>
  ({ status: 401, code, challenge: 'Bearer error="invalid_token"' }) as const;
const allowedWith =
  (kind: 'apiKey' | 'session') =>
  (route: Route): Expected =>
    route.credentials.includes(kind)
      ? { status: 'authenticated' }
      : { status: 403, code: 'SESSION_REQUIRED' };

const brokenChecksum = (key: string) => `${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`;

const VARIANTS: readonly Variant[] = [
  { name: 'no Authorization header', header: () => undefined, expected: unauthenticated },
  { name: 'Basic scheme', header: () => 'Basic dXNlcjpwYXNz', expected: unauthenticated },
  { name: 'a key without the Bearer scheme', header: (c) => c.key, expected: unauthenticated },
  { name: 'Bearer without a token', header: () => 'Bearer ', expected: unauthenticated },
  { name: 'garbage token', header: () => 'Bearer not-a-jwt', expected: invalid('INVALID_SESSION_TOKEN') },
  {
    name: 'expired session',
    header: (c) => `Bearer ${c.expired}`,
    expected: invalid('INVALID_SESSION_TOKEN'),
  },
  {
    name: 'session signed by another key',
    header: (c) => `Bearer ${c.foreign}`,
    expected: invalid('INVALID_SESSION_TOKEN'),
  },
  {
    name: 'JWT with alg none',
    header: (c) => `Bearer ${c.algNone}`,
    expected: invalid('INVALID_SESSION_TOKEN'),
  },
  {
    name: 'session for another app client',
    header: (c) => `Bearer ${c.wrongAudience}`,
    expected: invalid('INVALID_SESSION_TOKEN'),
  },
  {
    name: 'access token instead of ID token',
    header: (c) => `Bearer ${c.accessToken}`,
    expected: invalid('INVALID_SESSION_TOKEN'),
  },
  {
    name: 'unknown API key',
    header: () => `Bearer ${generateApiKey()}`,
    expected: invalid('INVALID_API_KEY'),
  },
  {
    name: 'API key with a broken checksum',
    header: (c) => `Bearer ${brokenChecksum(c.key)}`,
    expected: invalid('INVALID_API_KEY'),
  },
  {
    name: 'truncated API key',
    header: (c) => `Bearer ${c.key.slice(0, 20)}`,
    expected: invalid('INVALID_API_KEY'),
  },
  { name: 'revoked API key', header: (c) => `Bearer ${c.revokedKey}`, expected: invalid('INVALID_API_KEY') },
  { name: 'valid API key', header: (c) => `Bearer ${c.key}`, expected: allowedWith('apiKey') },
  { name: 'valid session', header: (c) => `Bearer ${c.session}`, expected: allowedWith('session') },
];

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

let credentials: Credentials;
/** Everything the stack's handlers log while the matrix runs. */
let output: CapturedOutput;

beforeAll(async () => {
  const sub = `acct-matrix-${randomUUID()}`;
  // Enough render requests per minute for every valid-credential call to POST /v1/pdf.
  await putAccountOnPlan(local.stack, sub, 'pro');
  const session = await local.sessionToken(sub);
  const createKey = async () =>
    (await local.api('/v1/api-keys', { method: 'POST', token: session, body: { name: 'matrix' } })).json;
  const key = (await createKey()).key as string;
  const revoked = await createKey();
  await local.api(`/v1/api-keys/${revoked.id}`, { method: 'DELETE', token: session });

  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const foreign = await new SignJWT({ token_use: 'id', email: 'x@example.com' })
    .setProtectedHeader({ alg: 'RS256', kid: 'forged' })
    .setSubject(sub)
    .setIssuer(LOCAL_ISSUER)
    .setAudience(LOCAL_CLIENT_ID)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(privateKey);
  const [realHeader = ''] = session.split('.');
  const { kid } = JSON.parse(Buffer.from(realHeader, 'base64url').toString('utf8'));
  const now = Math.floor(Date.now() / 1000);
  const algNone = `${base64url({ alg: 'none', typ: 'JWT', kid })}.${base64url({
    sub,
    iss: LOCAL_ISSUER,
    aud: LOCAL_CLIENT_ID,
    token_use: 'id',
    iat: now,
    exp: now + 3600,
  })}.`;
  credentials = {
    session,
    key,
    revokedKey: revoked.key,
    expired: await local.sessionToken(sub, { ttlSeconds: -60 }),
    foreign,
    algNone,
    wrongAudience: await local.stack.issueToken({
      sub,
      email: 'x@example.com',
      claims: { aud: 'another-client' },
    }),
    accessToken: await local.stack.issueToken({
      sub,
      email: 'x@example.com',
      claims: { token_use: 'access' },
    }),
  };

  output = local.captureOutput();
});

afterAll(() => output.stop());

/** A concrete path for a route: each `{param}` filled with a placeholder that names nothing. */
const pathOf = (route: Route) => route.path.replace(/\{(\w+)\+?\}/g, 'matrix-placeholder');

it('covers every route of the route table', () => {
  expect(routes.length).toBeGreaterThanOrEqual(8);
  for (const key of [
    'POST /v1/api-keys',
    'GET /v1/api-keys',
    'DELETE /v1/api-keys/{key_id}',
    'GET /v1/me',
    'GET /v1/usage',
  ]) {
    expect(routes.map(routeKey)).toContain(key);
  }
});

for (const route of routes) {
  describe(routeKey(route), () => {
    it.each(VARIANTS)('$name', async (variant) => {
      const authorization = variant.header(credentials);
      const res = await local.api(pathOf(route), {
        method: route.method,
        headers: authorization === undefined ? {} : { authorization },
      });
      const expected = variant.expected(route);
      if (expected.status === 'authenticated') {
        expect([401, 403], res.text).not.toContain(res.status);
      } else {
        expect(res.status, res.text).toBe(expected.status);
        expect(res.json.error.code).toBe(expected.code);
        expect(() => errorSchema.parse(res.json)).not.toThrow();
        if (expected.status === 401) expect(res.headers.get('www-authenticate')).toBe(expected.challenge);
      }
      if (authorization !== undefined) {
        const token = authorization.replace(/^\S+\s+/, '');
        if (token !== '') expect(res.text).not.toContain(token);
      }
    });
  });
}

it('writes no credential to the logs', () => {
  for (const secret of [
    credentials.session,
    credentials.key,
    credentials.key.slice(16),
    credentials.revokedKey.slice(16),
    credentials.expired,
    credentials.foreign,
    credentials.algNone,
  ]) {
    expect(output.chunks.join('')).not.toContain(secret);
  }
  expect(output.chunks.join('').toLowerCase()).not.toContain('bearer ');
});
