/**
 * The API key use cases (domain/api-key-management.ts) on the memory key store (which passes the
 * store's contract, test/contract/api-keys.contract.ts) and the real keyed digest.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryApiKeyStore } from '../../../functions/adapters/memory/api-keys.js';
import {
  apiKeyDigest,
  createApiKeyResolver,
} from '../../../functions/adapters/secrets-manager/api-key-digest.js';
import { isWellFormedApiKey } from '../../../functions/domain/accounts/api-key-format.js';
import { createApiKeyManagement } from '../../../functions/domain/accounts/api-key-management.js';
import { ServiceError } from '../../../functions/domain/common/errors.js';
import type { Principal } from '../../../functions/domain/common/principal.js';
import { testClock } from '../../helpers/dynalite.js';

const ADA: Principal = {
  accountId: 'acct-ada',
  email: 'ada@example.com',
  credential: 'session',
  plan: 'free',
};
const BOB: Principal = { ...ADA, accountId: 'acct-bob' };

const setup = (maxActiveKeys?: number) => {
  const clock = testClock('2026-11-28T10:00:00.000Z');
  const store = createMemoryApiKeyStore(clock);
  const digest = async (key: string) => apiKeyDigest('s'.repeat(64), key);
  return {
    clock,
    keys: createApiKeyManagement({ store, digest, ...(maxActiveKeys ? { maxActiveKeys } : {}) }),
    resolve: createApiKeyResolver(store, digest),
  };
};

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (e: unknown) => (e instanceof ServiceError ? e.code : String(e)),
  );

describe('API key management', () => {
  it('hands out a well-formed key once, keeps only its digest and prefix, and the key authenticates', async () => {
    const { keys, resolve } = setup();
    const created = await keys.create(ADA, { name: 'ci' });
    expect(isWellFormedApiKey(created.key)).toBe(true);
    expect(created).toMatchObject({ name: 'ci', created_at: '2026-11-28T10:00:00.000Z', revoked_at: null });
    expect(created.key.startsWith(created.prefix)).toBe(true);
    const listed = await keys.list(ADA);
    expect(listed).toEqual([
      {
        id: created.id,
        prefix: created.prefix,
        name: 'ci',
        created_at: created.created_at,
        last_used_at: null,
        revoked_at: null,
      },
    ]);
    expect(JSON.stringify(listed)).not.toContain(created.key);
    expect(await resolve(created.key)).toEqual({ id: created.id, accountId: ADA.accountId });
  });

  it('revokes a key of the account only: refused from then on, revoking again answers the same record', async () => {
    const { keys, resolve, clock } = setup();
    const created = await keys.create(ADA, { name: 'ci' });
    expect(await codeOf(keys.revoke(BOB, created.id))).toBe('API_KEY_NOT_FOUND');
    expect(await codeOf(keys.revoke(ADA, 'not-a-key-id'))).toBe('API_KEY_NOT_FOUND');
    clock.advance(5000);
    const revoked = await keys.revoke(ADA, created.id);
    expect(revoked.revoked_at).toBe('2026-11-28T10:00:05.000Z');
    expect(await resolve(created.key)).toBeUndefined();
    clock.advance(5000);
    expect(await keys.revoke(ADA, created.id)).toEqual(revoked);
    expect(await keys.list(BOB)).toEqual([]);
  });

  it('refuses a key past the active limit until one is revoked', async () => {
    const { keys } = setup(2);
    const first = await keys.create(ADA, { name: 'a' });
    await keys.create(ADA, { name: 'b' });
    expect(await codeOf(keys.create(ADA, { name: 'c' }))).toBe('API_KEY_LIMIT_REACHED');
    expect(await codeOf(keys.create(BOB, { name: 'c' }))).toBe('ok');
    await keys.revoke(ADA, first.id);
    expect(await codeOf(keys.create(ADA, { name: 'c' }))).toBe('ok');
  });
});
