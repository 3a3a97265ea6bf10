/**
 * The asset use cases (domain/assets/assets.ts) on memory parts with the real inspector: the
 * account's limits (413 ASSET_QUOTA_EXCEEDED naming the limit, 409 ASSET_LIMIT_REACHED), what is
 * kept of a refused or replaced upload (nothing, and only the new bytes), and what a render is
 * given (the rendering account's assets only, each loadable through its link).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { inspectAsset } from '../../functions/adapters/assets/inspect.js';
import { createMemoryAssetBlobs } from '../../functions/adapters/memory/asset-blobs.js';
import { createMemoryAssetStore } from '../../functions/adapters/memory/assets.js';
import { createAssetManagement, createAssetResolver } from '../../functions/domain/assets/assets.js';
import type { Principal } from '../../functions/domain/common/principal.js';
import { solidPng } from '../helpers/png.js';

const principal = (accountId: string): Principal => ({
  accountId,
  email: undefined,
  credential: 'session',
  plan: 'free',
});

let uploads = 0;
const setup = (limits: { maxAccountBytes?: number; maxAssets?: number } = {}) => {
  const store = createMemoryAssetStore();
  const blobs = createMemoryAssetBlobs();
  const faults: string[] = [];
  const assets = createAssetManagement({
    store,
    blobs,
    inspect: inspectAsset,
    clock: { now: () => new Date('2026-11-29T10:00:00.000Z') },
    newUploadId: () => `u${++uploads}`,
    digest: (b) => createHash('sha256').update(b).digest('hex'),
    onFault: (m) => faults.push(m),
    limits,
  });
  return { assets, blobs, store, faults, resolver: createAssetResolver({ store, blobs }) };
};

const png = solidPng(10, 10, [1, 2, 3]);

describe('asset limits', () => {
  it("answers 413 ASSET_QUOTA_EXCEEDED naming the account's limit, and keeps nothing of the refused file", async () => {
    const { assets, blobs } = setup({ maxAccountBytes: png.length * 2 });
    await assets.put(principal('a'), 'one.png', 'image/png', png);
    await assets.put(principal('a'), 'two.png', 'image/png', png);
    const refused = assets.put(principal('a'), 'three.png', 'image/png', png);
    await expect(refused).rejects.toMatchObject({
      code: 'ASSET_QUOTA_EXCEEDED',
    });
    await expect(refused).rejects.toThrow(/the account's limit of/);
    expect(blobs.keys()).toHaveLength(2);
  });

  it('answers 409 ASSET_LIMIT_REACHED past the count; a replacement is no new asset', async () => {
    const { assets } = setup({ maxAssets: 1 });
    await assets.put(principal('a'), 'one.png', 'image/png', png);
    await expect(assets.put(principal('a'), 'two.png', 'image/png', png)).rejects.toMatchObject({
      code: 'ASSET_LIMIT_REACHED',
    });
    await expect(assets.put(principal('a'), 'one.png', 'image/png', png)).resolves.toMatchObject({
      name: 'one.png',
    });
  });

  it("a replaced asset's old bytes are removed; a deleted one's too", async () => {
    const { assets, blobs } = setup();
    await assets.put(principal('a'), 'logo.png', 'image/png', png);
    const [first] = blobs.keys();
    await assets.put(principal('a'), 'logo.png', 'image/png', solidPng(10, 10, [9, 9, 9]));
    expect(blobs.keys()).toHaveLength(1);
    expect(blobs.keys()[0]).not.toBe(first);
    await assets.delete(principal('a'), 'logo.png');
    expect(blobs.keys()).toEqual([]);
  });
});

describe("a render's assets", () => {
  it("are the rendering account's only, each loadable through its link", async () => {
    const { assets, resolver } = setup();
    await assets.put(principal('a'), 'logo.png', 'image/png', png);
    const mine = await resolver.forRender('a');
    expect(Object.keys(mine)).toEqual(['logo.png']);
    const bytes = Buffer.from(await (await fetch(mine['logo.png']?.url ?? '')).arrayBuffer());
    expect(bytes.equals(png)).toBe(true);
    expect(await resolver.forRender('b')).toEqual({});
  });
});
