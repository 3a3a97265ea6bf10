/**
 * AssetBlobs in memory: links are `data:` URLs of the bytes (what the renderer fetches, as it
 * fetches a presigned GET), so a render on memory parts loads an asset as on S3.
 */
import type { AssetBlobs, AssetType } from '../../domain/assets/assets.js';

export interface MemoryAssetBlobs extends AssetBlobs {
  keys(): string[];
}

export const createMemoryAssetBlobs = (): MemoryAssetBlobs => {
  const objects = new Map<string, { bytes: Uint8Array; type: AssetType }>();
  const dataUrl = (objectKey: string) => {
    const found = objects.get(objectKey);
    if (!found) throw new Error(`no asset object ${objectKey}`);
    return `data:${found.type};base64,${Buffer.from(found.bytes).toString('base64')}`;
  };
  return {
    async put(objectKey, bytes, type) {
      objects.set(objectKey, { bytes: new Uint8Array(bytes), type });
    },
    async delete(objectKey) {
      objects.delete(objectKey);
    },
    readUrl: async (objectKey) => dataUrl(objectKey),
    downloadUrl: async (objectKey) => dataUrl(objectKey),
    keys: () => [...objects.keys()].sort(),
  };
};
