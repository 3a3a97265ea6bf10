/**
 * Where a render's page gets the account's assets from (issue 40): each asset's bytes fetched from
 * storage, through the presigned link the render was handed, once, when the page first asks.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { RenderRequest } from './contract.js';
import type { AssetSource, ServedAsset } from './interception.js';

/** An asset's bytes at most, as the renderer fetches them (the API holds uploads to 4 MiB). */
const MAX_ASSET_FETCH_BYTES = 8 * 1024 * 1024;
/** How long fetching one asset from storage may take. */
const ASSET_FETCH_MS = 10_000;

/**
 * The render's assets, each fetched from storage (its presigned link) once, when the page first
 * asks for it: what the interceptor answers the page's asset requests with.
 */
export const assetSource = (assets: NonNullable<RenderRequest['assets']>, log: Logger): AssetSource => {
  const loaded = new Map<string, Promise<ServedAsset | undefined>>();
  const load = async (name: string): Promise<ServedAsset | undefined> => {
    const asset = Object.hasOwn(assets, name) ? assets[name] : undefined;
    if (!asset) return undefined;
    try {
      const res = await fetch(asset.url, { signal: AbortSignal.timeout(ASSET_FETCH_MS) });
      if (!res.ok) throw new Error(`storage answered ${res.status}`);
      const body = new Uint8Array(await res.arrayBuffer());
      if (body.byteLength > MAX_ASSET_FETCH_BYTES) throw new Error('the asset is over its size limit');
      return { body, contentType: asset.contentType };
    } catch (e) {
      log.error(
        'asset-fetch-failed',
        e instanceof Error ? { name: e.name, error: e.message } : { error: String(e) },
      );
      return undefined;
    }
  };
  return (name) => {
    let found = loaded.get(name);
    if (!found) {
      found = load(name);
      loaded.set(name, found);
    }
    return found;
  };
};
