/** The usage ledger in memory (functions/domain/accounts/usage-ledger.ts), held to the same contract. */
import type { UsageEntry, UsageLedger } from '../../domain/accounts/usage-ledger.js';

const keyOf = (e: Pick<UsageEntry, 'account_id' | 'job_id' | 'month'>) =>
  `${e.account_id}\n${e.month}\n${e.job_id}`;

const byJob = (a: UsageEntry, b: UsageEntry) =>
  a.account_id === b.account_id ? (a.job_id < b.job_id ? -1 : 1) : a.account_id < b.account_id ? -1 : 1;

export const createMemoryUsageLedger = (): UsageLedger & {
  readonly entries: ReadonlyMap<string, UsageEntry>;
} => {
  const entries = new Map<string, UsageEntry>();
  const outbox = new Set<string>();
  return {
    entries,
    async record(entry) {
      const key = keyOf(entry);
      if (entries.has(key)) return false;
      entries.set(key, { ...entry });
      outbox.add(key);
      return true;
    },
    async ofAccountMonth(accountId, month) {
      return [...entries.values()].filter((e) => e.account_id === accountId && e.month === month).sort(byJob);
    },
    async ofMonth(month) {
      return [...entries.values()].filter((e) => e.month === month).sort(byJob);
    },
    async unpublished(limit) {
      return [...outbox]
        .map((k) => entries.get(k) as UsageEntry)
        .sort((a, b) => (a.completed_at < b.completed_at ? -1 : 1))
        .slice(0, limit);
    },
    async markPublished(entry) {
      outbox.delete(keyOf(entry));
    },
  };
};
