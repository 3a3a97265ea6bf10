/**
 * The signing key store (domain/signing/signing-keys.ts) in memory, as the DynamoDB adapter
 * behaves: at most `limit` keys an account, listed newest first (by id, as the sort key orders
 * them), each account's keys its own. Held to test/contract/signing-keys.contract.ts with it.
 */
import type { SigningKeyStore, StoredSigningKey } from '../../domain/signing/signing-keys.js';

export const createMemorySigningKeyStore = (): SigningKeyStore => {
  const accounts = new Map<string, Map<string, StoredSigningKey>>();
  const of = (accountId: string) => {
    let keys = accounts.get(accountId);
    if (!keys) {
      keys = new Map();
      accounts.set(accountId, keys);
    }
    return keys;
  };
  return {
    async create(key, limit) {
      const keys = of(key.account_id);
      if (keys.size >= limit) return { kind: 'limitReached' };
      keys.set(key.id, structuredClone(key));
      return { kind: 'created' };
    },
    async get(accountId, keyId) {
      const found = accounts.get(accountId)?.get(keyId);
      return found ? structuredClone(found) : undefined;
    },
    async list(accountId) {
      return [...of(accountId).values()]
        .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
        .map((k) => structuredClone(k));
    },
    async delete(accountId, keyId) {
      const keys = accounts.get(accountId);
      const found = keys?.get(keyId);
      if (!found) return undefined;
      keys?.delete(keyId);
      return found;
    },
  };
};
