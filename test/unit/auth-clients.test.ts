/**
 * Session tokens from more than one app client: the service's own (the token command, SRP) and the
 * dashboard's. COGNITO_CLIENT_ID names every client the API accepts, comma-separated; an ID token
 * of any other client, or an access token of an accepted one, is refused.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, SignJWT } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../functions/core/auth.js';
import { ConfigError, readResourceConfig } from '../../functions/core/config.js';
import type { AccountStore } from '../../functions/domain/accounts/accounts.js';
import type { ResourceWiring } from '../../functions/route-declaration.js';

const POOL = 'eu-west-1_AbCdEf123';
const ISSUER = `https://cognito-idp.eu-west-1.amazonaws.com/${POOL}`;
const WIRING: ResourceWiring = {
  table: false,
  userPool: true,
  apiKeySecret: false,
  pdfBucket: false,
  renderer: false,
  webhookQueue: false,
  kmsSigningKeys: false,
  destinationRoles: false,
  usageEventBus: false,
  batchOutputQueue: false,
  deliveryQueue: false,
  renderQueue: false,
};

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const dir = mkdtempSync(join(tmpdir(), 'auth-clients-'));
const jwksFile = join(dir, 'jwks.json');
writeFileSync(
  jwksFile,
  JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] }),
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const token = (claims: Record<string, unknown>) => {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    sub: 'user-1',
    email: 'user-1@example.com',
    iss: ISSUER,
    token_use: 'id',
    iat: now,
    exp: now + 600,
    jti: randomUUID(),
    ...claims,
  })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .sign(privateKey);
};

const authenticatorFor = (clientIds: string) => {
  const config = readResourceConfig(WIRING, {
    COGNITO_USER_POOL_ID: POOL,
    COGNITO_CLIENT_ID: clientIds,
    LOCAL_JWKS_FILE: jwksFile,
  });
  const accounts = { ensure: async (id: string) => ({ id, email: null, plan: 'free', created_at: '' }) };
  return createAuthenticator(
    config.auth as NonNullable<typeof config.auth>,
    async () => undefined,
    accounts as unknown as AccountStore,
  );
};

const outcome = (promise: Promise<unknown>) =>
  promise.then(
    () => 'accepted',
    (e: { code?: string }) => e.code,
  );

describe('app clients the API accepts', () => {
  it('reads COGNITO_CLIENT_ID as a comma-separated list', () => {
    const config = readResourceConfig(WIRING, {
      COGNITO_USER_POOL_ID: POOL,
      COGNITO_CLIENT_ID: ' app , dashboard ',
    });
    expect(config.auth?.clientIds).toEqual(['app', 'dashboard']);
    for (const bad of ['app,', 'app,,dashboard', 'app dashboard']) {
      expect(() =>
        readResourceConfig(WIRING, { COGNITO_USER_POOL_ID: POOL, COGNITO_CLIENT_ID: bad }),
      ).toThrow(ConfigError);
    }
  });

  it("accepts ID tokens of the service's client and of the dashboard's, and of no other", async () => {
    const authenticate = authenticatorFor('app-client,dashboard-client');
    for (const aud of ['app-client', 'dashboard-client']) {
      expect(await outcome(authenticate(`Bearer ${await token({ aud })}`, ['session'])), aud).toBe(
        'accepted',
      );
    }
    expect(await outcome(authenticate(`Bearer ${await token({ aud: 'other-client' })}`, ['session']))).toBe(
      'INVALID_SESSION_TOKEN',
    );
    // An access token of an accepted client is not a session token for the API.
    const access = await token({ token_use: 'access', client_id: 'dashboard-client', aud: undefined });
    expect(await outcome(authenticate(`Bearer ${access}`, ['session']))).toBe('INVALID_SESSION_TOKEN');
  });

  it('accepts only the one client when one is configured (the dashboard off)', async () => {
    const authenticate = authenticatorFor('app-client');
    expect(await outcome(authenticate(`Bearer ${await token({ aud: 'app-client' })}`, ['session']))).toBe(
      'accepted',
    );
    expect(
      await outcome(authenticate(`Bearer ${await token({ aud: 'dashboard-client' })}`, ['session'])),
    ).toBe('INVALID_SESSION_TOKEN');
  });
});
