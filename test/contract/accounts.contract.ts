/**
 * The AccountStore port's contract (domain/accounts.ts): the same cases for the memory store and
 * the DynamoDB adapter on dynalite.
 */
import { describe, expect, it } from 'vitest';
import type { AccountStore } from '../../functions/domain/accounts/accounts.js';
import { DEFAULT_PLAN } from '../../functions/settings.js';
import { clockAt, type StoreBackend, unique } from './stores.js';

export const accountsContract = (backend: StoreBackend<AccountStore>): void => {
  describe(`the account store on ${backend.name}`, () => {
    it('creates an account once, on the default plan, at the time of its first request', async () => {
      const clock = clockAt();
      const store = backend.create(clock, {});
      const id = unique('acct');
      expect(await store.get(id)).toBeUndefined();
      const first = await store.ensure(id, undefined);
      expect(first).toEqual({ id, email: null, plan: DEFAULT_PLAN, created_at: '2026-11-28T10:00:00.000Z' });
      clock.advance(60_000);
      expect(await store.ensure(id, undefined)).toEqual(first);
      expect(await store.get(id)).toEqual(first);
    });

    it('gives concurrent first requests the same account', async () => {
      const store = backend.create(clockAt(), {});
      const id = unique('acct');
      const all = await Promise.all(Array.from({ length: 5 }, () => store.ensure(id, 'race@example.com')));
      expect(new Set(all.map((a) => a.created_at)).size).toBe(1);
      expect(all.every((a) => a.email === 'race@example.com')).toBe(true);
    });

    it("keeps a session's email up to date, and finds accounts by it, case-insensitively, oldest first", async () => {
      const clock = clockAt();
      const store = backend.create(clock, {});
      const email = `${unique('ada')}@Example.com`;
      const older = unique('acct');
      const newer = unique('acct');
      await store.ensure(older, 'someone@example.com');
      clock.advance(1000);
      await store.ensure(newer, email);
      clock.advance(1000);
      expect((await store.ensure(older, email)).email).toBe(email);
      expect((await store.findByEmail(email.toUpperCase())).map((a) => a.id)).toEqual([older, newer]);
      expect(await store.findByEmail('someone@example.com')).toEqual([]);
      // An API key's request names no email: the one kept stays.
      expect((await store.ensure(older, undefined)).email).toBe(email);
    });

    it('sets the plan of an existing account only, answering it before and after', async () => {
      const store = backend.create(clockAt(), {});
      const id = unique('acct');
      expect(await store.setPlan(id, 'pro')).toBeUndefined();
      expect(await store.get(id)).toBeUndefined();
      const account = await store.ensure(id, undefined);
      expect(await store.setPlan(id, 'pro')).toEqual({ before: account, after: { ...account, plan: 'pro' } });
      expect((await store.ensure(id, undefined)).plan).toBe('pro');
    });
  });
};
