/**
 * The asset store's contract (domain/assets/assets.ts: AssetStore): the same cases for the memory
 * store and the DynamoDB adapter on dynalite.
 */
import { describe, expect, it } from 'vitest';
import type { AssetStore, StoredAsset } from '../../functions/domain/assets/assets.js';
import { unique } from './stores.js';

export interface AssetStoreBackend {
  readonly name: string;
  create(): AssetStore;
}

const asset = (accountId: string, name: string, size = 100): StoredAsset => ({
  name,
  kind: name.endsWith('.ttf') ? 'font' : 'image',
  content_type: name.endsWith('.ttf') ? 'font/ttf' : 'image/png',
  size_bytes: size,
  sha256: 'ab'.repeat(32),
  created_at: '2026-11-29T10:00:00.000Z',
  account_id: accountId,
  object_key: `assets/${accountId}/${unique('upload')}`,
});

const ROOMY = { maxAccountBytes: 1_000_000, maxAssets: 50 };

export const assetStoreContract = (backend: AssetStoreBackend): void => {
  describe(`the asset store on ${backend.name}`, () => {
    it('keeps, lists by name, gets, replaces and deletes an account’s assets, each field as it was', async () => {
      const store = backend.create();
      const account = unique('acct');
      const logo = asset(account, 'logo.png');
      const font = asset(account, 'brand.ttf', 300);
      expect(await store.put(logo, ROOMY)).toEqual({ kind: 'stored', replaced: undefined });
      expect(await store.put(font, ROOMY)).toEqual({ kind: 'stored', replaced: undefined });
      expect(await store.get(account, 'logo.png')).toEqual(logo);
      expect((await store.list(account)).map((a) => a.name)).toEqual(['brand.ttf', 'logo.png']);
      const newer = asset(account, 'logo.png', 150);
      expect(await store.put(newer, ROOMY)).toEqual({ kind: 'stored', replaced: logo });
      expect(await store.get(account, 'logo.png')).toEqual(newer);
      expect(await store.delete(account, 'logo.png')).toEqual(newer);
      expect(await store.get(account, 'logo.png')).toBeUndefined();
      expect(await store.delete(account, 'logo.png')).toBeUndefined();
      expect(await store.list(account)).toEqual([font]);
    });

    it('never finds another account’s asset, nor deletes it', async () => {
      const store = backend.create();
      const owner = unique('acct');
      const other = unique('acct');
      const mine = asset(owner, 'logo.png');
      await store.put(mine, ROOMY);
      expect(await store.get(other, 'logo.png')).toBeUndefined();
      expect(await store.delete(other, 'logo.png')).toBeUndefined();
      expect(await store.list(other)).toEqual([]);
      expect(await store.get(owner, 'logo.png')).toEqual(mine);
    });

    it("holds the account's bytes under its limit, under concurrent writes; a delete gives its bytes back", async () => {
      const store = backend.create();
      const account = unique('acct');
      const limits = { maxAccountBytes: 1000, maxAssets: 50 };
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, (_, i) => store.put(asset(account, `a${i}.png`, 300), limits)),
      );
      expect(outcomes.filter((o) => o.kind === 'stored')).toHaveLength(3);
      const refused = outcomes.filter((o) => o.kind === 'quotaExceeded');
      expect(refused).toHaveLength(3);
      expect(refused[0]).toEqual({ kind: 'quotaExceeded', usedBytes: 900 });
      const [first] = await store.list(account);
      await store.delete(account, first?.name ?? '');
      expect((await store.put(asset(account, 'b.png', 400), limits)).kind).toBe('stored');
      expect((await store.put(asset(account, 'c.png', 1), limits)).kind).toBe('quotaExceeded');
    });

    it('refuses an asset past the count, but not a replacement', async () => {
      const store = backend.create();
      const account = unique('acct');
      const limits = { maxAccountBytes: 1_000_000, maxAssets: 2 };
      await store.put(asset(account, 'a.png'), limits);
      await store.put(asset(account, 'b.png'), limits);
      expect(await store.put(asset(account, 'c.png'), limits)).toEqual({ kind: 'limitReached' });
      expect((await store.put(asset(account, 'a.png', 50), limits)).kind).toBe('stored');
      await store.delete(account, 'b.png');
      expect((await store.put(asset(account, 'c.png'), limits)).kind).toBe('stored');
    });
  });
};
