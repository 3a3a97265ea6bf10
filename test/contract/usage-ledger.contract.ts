/**
 * The UsageLedger port's contract (domain/accounts/usage-ledger.ts): the same cases for the memory
 * ledger and the DynamoDB adapter on dynalite.
 */
import { describe, expect, it } from 'vitest';
import type { UsageEntry, UsageLedger } from '../../functions/domain/accounts/usage-ledger.js';
import { type StoreBackend, unique } from './stores.js';

const entry = (
  account: string,
  job: string,
  month = '2026-11',
  at = '2026-11-28T10:00:00.000Z',
): UsageEntry => ({
  account_id: account,
  job_id: job,
  month,
  kind: 'render',
  units: 1,
  pages: 2,
  bytes: 1234,
  render_ms: 40,
  batch_id: null,
  completed_at: at,
});

export const usageLedgerContract = (backend: StoreBackend<UsageLedger>): void => {
  describe(`the usage ledger on ${backend.name}`, () => {
    it('records one entry per job however often it is recorded, and reads an account’s month', async () => {
      const ledger = backend.create({} as never, {});
      const account = unique('acct');
      expect(await ledger.record(entry(account, 'job_a'))).toBe(true);
      expect(await ledger.record(entry(account, 'job_a'))).toBe(false);
      expect(await ledger.record({ ...entry(account, 'job_a'), bytes: 9 })).toBe(false);
      await ledger.record(entry(account, 'job_b'));
      await ledger.record(entry(account, 'job_c', '2026-10', '2026-10-30T10:00:00.000Z'));
      const month = await ledger.ofAccountMonth(account, '2026-11');
      expect(month.map((e) => e.job_id)).toEqual(['job_a', 'job_b']);
      expect(month[0]).toEqual(entry(account, 'job_a'));
      expect((await ledger.ofAccountMonth(account, '2026-10')).map((e) => e.job_id)).toEqual(['job_c']);
    });

    it("reads a month of every account, and nothing of another month's", async () => {
      const ledger = backend.create({} as never, {});
      const month = `2031-${String(1 + Math.floor(Math.random() * 12)).padStart(2, '0')}`;
      const accounts = [unique('acct'), unique('acct'), unique('acct')];
      for (const [i, account] of accounts.entries()) {
        for (let j = 0; j <= i; j++)
          await ledger.record(entry(account, `job_${i}_${j}`, month, `${month}-02T00:00:00.000Z`));
      }
      await ledger.record(entry(accounts[0] as string, 'job_other', '2031-13'));
      const read = await ledger.ofMonth(month);
      const mine = read.filter((e) => accounts.includes(e.account_id));
      expect(mine).toHaveLength(6);
      expect(mine.every((e) => e.month === month)).toBe(true);
      expect(new Set(mine.map((e) => e.job_id)).size).toBe(6);
    });

    it('keeps each entry unpublished until it is marked published, oldest first', async () => {
      const ledger = backend.create({} as never, {});
      const account = unique('acct');
      const older = entry(account, 'job_old', '2026-11', '2000-01-01T00:00:00.000Z');
      const newer = entry(account, 'job_new', '2026-11', '2000-01-01T00:00:01.000Z');
      await ledger.record(newer);
      await ledger.record(older);
      const pending = (await ledger.unpublished(1000)).filter((e) => e.account_id === account);
      expect(pending.map((e) => e.job_id)).toEqual(['job_old', 'job_new']);
      await ledger.markPublished(older);
      await ledger.markPublished(older);
      // Recording it again does not make it unpublished again (the event is not sent twice).
      await ledger.record(older);
      const left = (await ledger.unpublished(1000)).filter((e) => e.account_id === account);
      expect(left.map((e) => e.job_id)).toEqual(['job_new']);
      expect((await ledger.ofAccountMonth(account, '2026-11')).map((e) => e.job_id)).toEqual([
        'job_new',
        'job_old',
      ]);
    });
  });
};
