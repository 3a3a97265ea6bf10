/**
 * The authenticator on real parts without a network: API keys made by the key management use
 * case and resolved by their keyed digest from the memory key store, session tokens signed by the
 * local issuer, accounts in the memory account store (both stores pass their ports' contracts,
 * test/contract). A key whose shape or checksum is wrong is refused before any lookup; a
 * well-formed one is looked up on every route, also where keys are refused, so that a valid one
 * answers 403 and an unknown one 401.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryAccountStore } from '../../functions/adapters/memory/accounts.js';
import { createMemoryApiKeyStore } from '../../functions/adapters/memory/api-keys.js';
import {
  apiKeyDigest,
  createApiKeyResolver,
} from '../../functions/adapters/secrets-manager/api-key-digest.js';
import { createAuthenticator } from '../../functions/core/auth.js';
import { generateApiKey } from '../../functions/domain/accounts/api-key-format.js';
import { createApiKeyManagement } from '../../functions/domain/accounts/api-key-management.js';
import type { ApiKeyStore } from '../../functions/domain/accounts/api-keys.js';
import type { Principal } from '../../functions/domain/common/principal.js';
import {
  LOCAL_CLIENT_ID,
  LOCAL_USER_POOL_ID,
  type LocalIssuer,
  loadOrCreateIssuer,
} from '../../lib/local/issuer.js';
import { testClock } from '../helpers/dynalite.js';

let dir = '';
let issuer: LocalIssuer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'auth-test-'));
  issuer = await loadOrCreateIssuer(dir);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const SECRET = 'a'.repeat(64);
const OWNER: Principal = {
  accountId: 'acct-1',
  email: 'ada@example.com',
  credential: 'session',
  plan: 'free',
};

const setup = () => {
  const clock = testClock('2026-11-28T10:00:00.000Z');
  const memoryKeys = createMemoryApiKeyStore(clock);
  // Counts lookups, and does them: which credentials reach the store at all.
  const lookups: string[] = [];
  const keys: ApiKeyStore = {
    ...memoryKeys,
    useByDigest: (digest) => {
      lookups.push(digest);
      return memoryKeys.useByDigest(digest);
    },
  };
  const digest = async (key: string) => apiKeyDigest(SECRET, key);
  const accounts = createMemoryAccountStore(clock);
  const authenticate = createAuthenticator(
    { userPoolId: LOCAL_USER_POOL_ID, clientIds: [LOCAL_CLIENT_ID], jwks: issuer.jwks },
    createApiKeyResolver(keys, digest),
    accounts,
  );
  const management = createApiKeyManagement({ store: keys, digest });
  return { authenticate, accounts, management, lookups, clock };
};

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'authenticated',
    (e: { code?: string }) => e.code,
  );

describe('API keys at authentication', () => {
  it('refuses a key with a broken checksum, or of the wrong length, without looking it up', async () => {
    const { authenticate, management, accounts, lookups } = setup();
    const { key } = await management.create(OWNER, { name: 'ci' });
    for (const bad of [`${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`, key.slice(0, -1), `${key}0`]) {
      expect(await codeOf(authenticate(`Bearer ${bad}`, ['apiKey', 'session']))).toBe('INVALID_API_KEY');
      expect(await codeOf(authenticate(`Bearer ${bad}`, ['session']))).toBe('INVALID_API_KEY');
    }
    expect(lookups).toEqual([]);
    expect(accounts.all()).toEqual([]);
  });

  it('answers 401 for an unknown key and 403 for a known one where only sessions are accepted', async () => {
    const { authenticate, management, accounts, lookups } = setup();
    const { key, id } = await management.create(OWNER, { name: 'ci' });
    expect(await codeOf(authenticate(`Bearer ${generateApiKey()}`, ['session']))).toBe('INVALID_API_KEY');
    expect(await codeOf(authenticate(`Bearer ${key}`, ['session']))).toBe('SESSION_REQUIRED');
    expect(lookups).toHaveLength(2);
    expect(accounts.all()).toEqual([]);
    await expect(authenticate(`Bearer ${key}`, ['apiKey', 'session'])).resolves.toEqual({
      accountId: 'acct-1',
      email: undefined,
      credential: 'apiKey',
      apiKeyId: id,
      plan: 'free',
    });
    expect(accounts.all().map((a) => a.id)).toEqual(['acct-1']);
    expect((await management.list(OWNER))[0]?.last_used_at).toBe('2026-11-28T10:00:00.000Z');
  });

  it('refuses a revoked key on the very next request, and applies a plan change on the next one', async () => {
    const { authenticate, management, accounts } = setup();
    const kept = await management.create(OWNER, { name: 'kept' });
    const revoked = await management.create(OWNER, { name: 'revoked' });
    expect((await authenticate(`Bearer ${kept.key}`, ['apiKey'])).plan).toBe('free');
    await accounts.setPlan('acct-1', 'pro');
    await management.revoke(OWNER, revoked.id);
    expect((await authenticate(`Bearer ${kept.key}`, ['apiKey'])).plan).toBe('pro');
    expect(await codeOf(authenticate(`Bearer ${revoked.key}`, ['apiKey']))).toBe('INVALID_API_KEY');
  });
});

describe('session tokens at authentication', () => {
  it("creates the caller's account on its first session, with the token's email", async () => {
    const { authenticate, accounts } = setup();
    const token = await issuer.issueToken({ sub: 'acct-s', email: 'grace@example.com' });
    await expect(authenticate(`Bearer ${token}`, ['session'])).resolves.toEqual({
      accountId: 'acct-s',
      email: 'grace@example.com',
      credential: 'session',
      plan: 'free',
    });
    expect(await accounts.get('acct-s')).toMatchObject({ email: 'grace@example.com', plan: 'free' });
  });

  it('refuses an expired token, one for another app client and one of another token use, creating nothing', async () => {
    const { authenticate, accounts } = setup();
    const tokens = [
      await issuer.issueToken({ sub: 'acct-x', email: 'x@example.com', ttlSeconds: -60 }),
      await issuer.issueToken({ sub: 'acct-x', email: 'x@example.com', claims: { aud: 'another-client' } }),
      await issuer.issueToken({ sub: 'acct-x', email: 'x@example.com', claims: { token_use: 'access' } }),
    ];
    for (const token of tokens) {
      expect(await codeOf(authenticate(`Bearer ${token}`, ['session']))).toBe('INVALID_SESSION_TOKEN');
    }
    expect(accounts.all()).toEqual([]);
  });
});
