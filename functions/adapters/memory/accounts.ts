/**
 * The AccountStore (domain/accounts.ts) in memory, as the DynamoDB adapter behaves: an account is
 * created once on the free plan (a concurrent first request gets the same one), a session's
 * email is kept up to date, a plan is set only on an existing account, and accounts are found by
 * email case-insensitively, oldest first. The account contract (test/contract/accounts.contract.ts)
 * runs the same cases against both.
 */
import type { Account, AccountStore } from '../../domain/accounts/accounts.js';
import { isoNow } from '../../domain/common/clock.js';
import type { Clock } from '../../domain/common/ports.js';
import { DEFAULT_PLAN } from '../../settings.js';

const normalizeEmail = (email: string): string => email.trim().toLowerCase();

export interface MemoryAccountStore extends AccountStore {
  /** Every account, as an admin export would list them. */
  all(): Account[];
}

export const createMemoryAccountStore = (clock: Clock): MemoryAccountStore => {
  const accounts = new Map<string, Account>();
  return {
    async ensure(accountId, email) {
      const existing = accounts.get(accountId);
      if (existing) {
        if (!email || existing.email === email) return { ...existing };
        const updated = { ...existing, email };
        accounts.set(accountId, updated);
        return { ...updated };
      }
      const account: Account = {
        id: accountId,
        email: email ?? null,
        plan: DEFAULT_PLAN,
        created_at: isoNow(clock.now()),
      };
      accounts.set(accountId, account);
      return { ...account };
    },
    async get(accountId) {
      const account = accounts.get(accountId);
      return account ? { ...account } : undefined;
    },
    async setPlan(accountId, plan) {
      const before = accounts.get(accountId);
      if (!before) return undefined;
      const after = { ...before, plan };
      accounts.set(accountId, after);
      return { before: { ...before }, after: { ...after } };
    },
    async findByEmail(email) {
      const wanted = normalizeEmail(email);
      return [...accounts.values()]
        .filter((a) => a.email !== null && normalizeEmail(a.email) === wanted)
        .map((a) => ({ ...a }))
        .sort((a, b) => a.created_at.localeCompare(b.created_at));
    },
    all: () => [...accounts.values()].map((a) => ({ ...a })),
  };
};
