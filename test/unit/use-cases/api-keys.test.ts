/**
 * The API key use cases (domain/accounts/api-key-management.ts) as the composition root builds
 * them (functions/services.ts, apiKeyManagement), on the memory parts
 * (test/helpers/memory-services.ts: the memory key store, which passes the store's contract,
 * test/contract/api-keys.contract.ts) with the real keyed digest under the deployment's secret.
 * A key is shown once, stored only as its digest, authenticates until revoked, and an account has
 * at most MAX_ACTIVE_API_KEYS active keys.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createApiKeyDigester,
  createApiKeyResolver,
} from '../../../functions/adapters/secrets-manager/api-key-digest.js';
import { isWellFormedApiKey } from '../../../functions/domain/accounts/api-key-format.js';
import { MAX_ACTIVE_API_KEYS } from '../../../functions/domain/accounts/api-key-management.js';
import { ServiceError } from '../../../functions/domain/common/errors.js';
import { apiKeyManagement } from '../../../functions/services.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';

let m: MemoryServices;
afterEach(async () => {
  vi.restoreAllMocks();
  await m?.close();
});

const setup = () => {
  m = memoryServices({ at: '2026-11-28T10:00:00.000Z' });
  const { config } = m.services;
  // The authenticator's lookup: the same digest, under the deployment's secret.
  const resolve = createApiKeyResolver(
    m.apiKeys,
    createApiKeyDigester(config.apiKeySecret as NonNullable<typeof config.apiKeySecret>, config.aws),
  );
  return { keys: m.services.get(apiKeyManagement), resolve };
};

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (e: unknown) => (e instanceof ServiceError ? e.code : String(e)),
  );

describe('API key management', () => {
  it('hands out a well-formed key once, stores only its digest and prefix, and the key authenticates', async () => {
    const { keys, resolve } = setup();
    const ada = caller();
    const stored = vi.spyOn(m.apiKeys, 'create');
    const created = await keys.create(ada, { name: 'ci' });
    expect(isWellFormedApiKey(created.key)).toBe(true);
    expect(created).toMatchObject({ name: 'ci', created_at: '2026-11-28T10:00:00.000Z', revoked_at: null });
    expect(created.key.startsWith(created.prefix)).toBe(true);
    expect(created.prefix.length).toBeLessThan(created.key.length / 2);
    // What reached the store: the digest and the prefix, never the key.
    const written = stored.mock.calls[0]?.[1];
    expect(written).toMatchObject({ id: created.id, prefix: created.prefix, name: 'ci' });
    expect(written?.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored.mock.calls)).not.toContain(created.key);
    const listed = await keys.list(ada);
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
    expect(await resolve(created.key)).toEqual({ id: created.id, accountId: ada.accountId });
    // A use is marked on the key's record.
    expect((await keys.list(ada))[0]?.last_used_at).toBe('2026-11-28T10:00:00.000Z');
    // A key one character off is unknown.
    const last = created.key.at(-1) === 'A' ? 'B' : 'A';
    expect(await resolve(`${created.key.slice(0, -1)}${last}`)).toBeUndefined();
  });

  it('revokes a key of the account only: refused from then on, revoking again answers the same record', async () => {
    const { keys, resolve } = setup();
    const ada = caller();
    const bob = caller();
    const created = await keys.create(ada, { name: 'ci' });
    expect(await codeOf(keys.revoke(bob, created.id))).toBe('API_KEY_NOT_FOUND');
    expect(await codeOf(keys.revoke(ada, 'not-a-key-id'))).toBe('API_KEY_NOT_FOUND');
    // Bob's attempt changed nothing: the key still authenticates.
    expect(await resolve(created.key)).toEqual({ id: created.id, accountId: ada.accountId });
    m.clock.advance(5000);
    const revoked = await keys.revoke(ada, created.id);
    expect(revoked.revoked_at).toBe('2026-11-28T10:00:05.000Z');
    expect(await resolve(created.key)).toBeUndefined();
    m.clock.advance(5000);
    expect(await keys.revoke(ada, created.id)).toEqual(revoked);
    expect(await keys.list(bob)).toEqual([]);
    expect((await keys.list(ada)).map((k) => k.revoked_at)).toEqual(['2026-11-28T10:00:05.000Z']);
  });

  it('refuses a key past the active limit (API_KEY_LIMIT_REACHED, nothing stored) until one is revoked', async () => {
    const { keys } = setup();
    const ada = caller();
    const bob = caller();
    const made = [];
    for (let i = 0; i < MAX_ACTIVE_API_KEYS; i++) made.push(await keys.create(ada, { name: `k${i}` }));
    expect(await codeOf(keys.create(ada, { name: 'one more' }))).toBe('API_KEY_LIMIT_REACHED');
    expect(await keys.list(ada)).toHaveLength(MAX_ACTIVE_API_KEYS);
    // Another account's limit is its own.
    expect(await codeOf(keys.create(bob, { name: 'one more' }))).toBe('ok');
    await keys.revoke(ada, made[0]?.id as string);
    expect(await codeOf(keys.create(ada, { name: 'one more' }))).toBe('ok');
    expect(await codeOf(keys.create(ada, { name: 'and another' }))).toBe('API_KEY_LIMIT_REACHED');
  });
});
