/**
 * The ApiKeyStore (domain/api-keys.ts) in memory, as the DynamoDB adapter behaves: a key is found
 * by its digest while it is not revoked, `last_used_at` moves at most once a minute, an account
 * has at most `limit` active keys (exact under concurrency: the check and the write are one
 * step), keys list newest first with revoked ones, and revoking twice answers the same record.
 * The contract (test/contract/api-keys.contract.ts) runs the same cases against both.
 */
import {
  type ActiveApiKey,
  type ApiKeyRecord,
  type ApiKeyStore,
  newApiKeyRecord,
} from '../../domain/accounts/api-keys.js';
import { isoNow } from '../../domain/common/clock.js';
import type { Clock } from '../../domain/common/ports.js';

const LAST_USED_RESOLUTION_MS = 60_000;

interface Stored {
  readonly accountId: string;
  readonly digest: string;
  record: ApiKeyRecord;
}

export const createMemoryApiKeyStore = (clock: Clock): ApiKeyStore => {
  const byDigest = new Map<string, Stored>();
  const byAccount = new Map<string, Map<string, Stored>>();
  const keysOf = (accountId: string) => {
    let keys = byAccount.get(accountId);
    if (!keys) {
      keys = new Map();
      byAccount.set(accountId, keys);
    }
    return keys;
  };
  return {
    async useByDigest(digest): Promise<ActiveApiKey | undefined> {
      const stored = byDigest.get(digest);
      if (!stored || stored.record.revoked_at) return undefined;
      const now = clock.now();
      const lastUsed = stored.record.last_used_at ? Date.parse(stored.record.last_used_at) : 0;
      if (now.getTime() - lastUsed >= LAST_USED_RESOLUTION_MS) {
        stored.record = { ...stored.record, last_used_at: isoNow(now) };
      }
      return { id: stored.record.id, accountId: stored.accountId };
    },
    async revokedAt(digest) {
      return byDigest.get(digest)?.record.revoked_at ?? undefined;
    },
    async create(accountId, key, limit) {
      const keys = keysOf(accountId);
      const active = [...keys.values()].filter((k) => !k.record.revoked_at).length;
      if (active >= limit) return { kind: 'limitReached' };
      const record = newApiKeyRecord(key, isoNow(clock.now()));
      const stored = { accountId, digest: key.digest, record };
      keys.set(key.id, stored);
      byDigest.set(key.digest, stored);
      return { kind: 'created', record: { ...record } };
    },
    async list(accountId) {
      return [...keysOf(accountId).values()]
        .sort((a, b) => (a.record.id < b.record.id ? 1 : a.record.id > b.record.id ? -1 : 0))
        .map((k) => ({ ...k.record }));
    },
    async revoke(accountId, keyId) {
      const stored = byAccount.get(accountId)?.get(keyId);
      if (!stored) return undefined;
      if (!stored.record.revoked_at) stored.record = { ...stored.record, revoked_at: isoNow(clock.now()) };
      return { ...stored.record };
    },
  };
};
