/**
 * The ApiKeyStore port's contract (domain/api-keys.ts): the same cases for the memory store and
 * the DynamoDB adapter on dynalite.
 */
import { describe, expect, it } from 'vitest';
import type { ApiKeyStore, NewApiKey } from '../../functions/domain/accounts/api-keys.js';
import { newApiKeyId } from '../../functions/domain/common/ids.js';
import { clockAt, type StoreBackend, unique } from './stores.js';

const newKey = (name = 'ci'): NewApiKey => {
  const id = newApiKeyId();
  return { id, digest: unique('digest'), prefix: 'pdf_live_abcd', name };
};

export const apiKeysContract = (backend: StoreBackend<ApiKeyStore>): void => {
  describe(`the API key store on ${backend.name}`, () => {
    it('finds a created key by its digest until it is revoked, then never again', async () => {
      const clock = clockAt();
      const store = backend.create(clock, {});
      const account = unique('acct');
      const key = newKey();
      const created = await store.create(account, key, 25);
      expect(created).toEqual({
        kind: 'created',
        record: {
          id: key.id,
          prefix: key.prefix,
          name: 'ci',
          created_at: '2026-11-28T10:00:00.000Z',
          last_used_at: null,
          revoked_at: null,
        },
      });
      expect(await store.useByDigest(key.digest)).toEqual({ id: key.id, accountId: account });
      expect(await store.revokedAt(key.digest)).toBeUndefined();
      expect(await store.useByDigest(unique('digest'))).toBeUndefined();
      clock.advance(1000);
      const revoked = await store.revoke(account, key.id);
      expect(revoked).toMatchObject({ id: key.id, revoked_at: '2026-11-28T10:00:01.000Z' });
      expect(await store.useByDigest(key.digest)).toBeUndefined();
      // Why it is refused: revoked, and when (an unknown digest was never a key).
      expect(await store.revokedAt(key.digest)).toBe('2026-11-28T10:00:01.000Z');
      expect(await store.revokedAt(unique('digest'))).toBeUndefined();
      clock.advance(1000);
      // Again: the same record.
      expect(await store.revoke(account, key.id)).toEqual(revoked);
      // Another account's key is not this account's to revoke.
      expect(await store.revoke(unique('acct'), key.id)).toBeUndefined();
    });

    it('moves last_used_at on use, at most once a minute', async () => {
      const clock = clockAt();
      const store = backend.create(clock, {});
      const account = unique('acct');
      const key = newKey();
      await store.create(account, key, 25);
      await store.useByDigest(key.digest);
      clock.advance(30_000);
      await store.useByDigest(key.digest);
      expect((await store.list(account))[0]?.last_used_at).toBe('2026-11-28T10:00:00.000Z');
      clock.advance(31_000);
      await store.useByDigest(key.digest);
      expect((await store.list(account))[0]?.last_used_at).toBe('2026-11-28T10:01:01.000Z');
    });

    it('lists the account’s keys newest first, revoked ones included', async () => {
      const clock = clockAt();
      const store = backend.create(clock, {});
      const account = unique('acct');
      const ids: string[] = [];
      for (const name of ['a', 'b', 'c']) {
        const key = newKey(name);
        ids.push(key.id);
        await store.create(account, key, 25);
        clock.advance(1000);
        await new Promise((r) => setTimeout(r, 2)); // ULIDs of another millisecond
      }
      await store.revoke(account, ids[1] as string);
      const listed = await store.list(account);
      expect(listed.map((k) => k.name)).toEqual(['c', 'b', 'a']);
      expect(listed.map((k) => k.revoked_at !== null)).toEqual([false, true, false]);
      expect(await store.list(unique('acct'))).toEqual([]);
    });

    it('holds an account to its limit of active keys, exactly under concurrency; a revoked key frees its place', async () => {
      const store = backend.create(clockAt(), {});
      const account = unique('acct');
      const outcomes = await Promise.all(Array.from({ length: 6 }, () => store.create(account, newKey(), 3)));
      expect(outcomes.filter((o) => o.kind === 'created')).toHaveLength(3);
      expect(outcomes.filter((o) => o.kind === 'limitReached')).toHaveLength(3);
      const first = (await store.list(account))[0];
      expect((await store.create(account, newKey(), 3)).kind).toBe('limitReached');
      await store.revoke(account, first?.id as string);
      expect((await store.create(account, newKey(), 3)).kind).toBe('created');
      // Another account has its own places.
      expect((await store.create(unique('acct'), newKey(), 3)).kind).toBe('created');
    });
  });
};
