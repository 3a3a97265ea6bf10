/**
 * The asset store (domain/assets/assets.ts) in memory, as the DynamoDB adapter behaves: by name
 * in the account, the account's bytes and count held under their limits (a replaced asset's
 * bytes counted once). Held to test/contract/assets.contract.ts with it.
 */
import type { AssetStore, StoredAsset } from '../../domain/assets/assets.js';

export const createMemoryAssetStore = (): AssetStore => {
  const accounts = new Map<string, Map<string, StoredAsset>>();
  const of = (accountId: string) => {
    let assets = accounts.get(accountId);
    if (!assets) {
      assets = new Map();
      accounts.set(accountId, assets);
    }
    return assets;
  };
  return {
    async put(asset, limits) {
      const assets = of(asset.account_id);
      const replaced = assets.get(asset.name);
      const used = [...assets.values()].reduce((n, a) => n + a.size_bytes, 0);
      if (!replaced && assets.size >= limits.maxAssets) return { kind: 'limitReached' };
      if (used + asset.size_bytes > limits.maxAccountBytes) return { kind: 'quotaExceeded', usedBytes: used };
      assets.set(asset.name, structuredClone(asset));
      return { kind: 'stored', replaced: replaced ? structuredClone(replaced) : undefined };
    },
    async get(accountId, name) {
      const found = accounts.get(accountId)?.get(name);
      return found ? structuredClone(found) : undefined;
    },
    async list(accountId) {
      return [...of(accountId).values()]
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .map((a) => structuredClone(a));
    },
    async delete(accountId, name) {
      const assets = accounts.get(accountId);
      const found = assets?.get(name);
      if (!found) return undefined;
      assets?.delete(name);
      return found;
    },
  };
};
