/**
 * Account assets (issue 40): an account's own images (PNG, JPEG, WebP, SVG) and fonts (TTF, OTF,
 * WOFF2), uploaded once (PUT /v1/assets/{name}, session only) and named by a template through
 * `asset('logo.png')`, which gives a URL of the asset origin (templating/assets.ts) that only the
 * renderer resolves: from storage, in its request interceptor, never from the network.
 *
 * Whose assets a render sees: always the account that renders (the job's account), whoever wrote
 * the template. So a public template of another account names the caller's own assets in the
 * caller's renders, and its author's never: another account's asset is not found by name (404
 * ASSET_NOT_FOUND) nor by URL (the page's request for it answers 404).
 *
 * What is kept: the bytes in the bucket (`assets/<account>/<upload id>`, AssetBlobs), what is
 * known of them in the table (AssetStore), with the account's total held under its limit there.
 */
import { isoNow } from '../common/clock.js';
import { ServiceError } from '../common/errors.js';
import type { Clock, RenderAsset } from '../common/ports.js';
import type { Principal } from '../common/principal.js';

/** The media types an asset may have, by what its bytes are (checked, not trusted). */
export const ASSET_TYPES = {
  'image/png': 'image',
  'image/jpeg': 'image',
  'image/webp': 'image',
  'image/svg+xml': 'image',
  'font/ttf': 'font',
  'font/otf': 'font',
  'font/woff2': 'font',
} as const;
export type AssetType = keyof typeof ASSET_TYPES;
export type AssetKind = (typeof ASSET_TYPES)[AssetType];
export const isAssetType = (t: string): t is AssetType => Object.hasOwn(ASSET_TYPES, t);

/** One file's bytes at most: a Lambda's event carries the body in base64 (4/3) within its 6 MiB. */
export const MAX_ASSET_BYTES = 4 * 1024 * 1024;
/** An account's assets together, at most. */
export const MAX_ACCOUNT_ASSET_BYTES = 50 * 1024 * 1024;
/** An account's assets, at most (each render that names one lists them). */
export const MAX_ASSETS = 100;

/** Letters, digits, `.`, `_`, `-`; starting with a letter or digit; 1-100 characters. */
export const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** An asset as the API shows it. */
export interface Asset {
  readonly name: string;
  readonly kind: AssetKind;
  readonly content_type: AssetType;
  readonly size_bytes: number;
  /** SHA-256 of the bytes, hex: what changed when a name is uploaded again. */
  readonly sha256: string;
  readonly created_at: string;
}

/** An asset as the table keeps it. */
export interface StoredAsset extends Asset {
  readonly account_id: string;
  /** Where its bytes are in the bucket. */
  readonly object_key: string;
}

export type AssetPutOutcome =
  | { readonly kind: 'stored'; readonly replaced: StoredAsset | undefined }
  | { readonly kind: 'quotaExceeded'; readonly usedBytes: number }
  | { readonly kind: 'limitReached' };

export interface AssetLimits {
  readonly maxAccountBytes: number;
  readonly maxAssets: number;
}

/** What the table knows of an account's assets (adapters/dynamodb/assets.ts, adapters/memory/assets.ts). */
export interface AssetStore {
  /**
   * Keeps the asset, replacing one of the same name, unless the account's assets would then be
   * over `maxAccountBytes` together or more than `maxAssets` in number.
   */
  put(asset: StoredAsset, limits: AssetLimits): Promise<AssetPutOutcome>;
  get(accountId: string, name: string): Promise<StoredAsset | undefined>;
  /** By name. */
  list(accountId: string): Promise<StoredAsset[]>;
  /** The asset as it was, or undefined when the account has none of that name. */
  delete(accountId: string, name: string): Promise<StoredAsset | undefined>;
}

/** Where assets' bytes are (adapters/s3/asset-blobs.ts, adapters/memory/asset-blobs.ts). */
export interface AssetBlobs {
  put(objectKey: string, bytes: Uint8Array, contentType: AssetType): Promise<void>;
  delete(objectKey: string): Promise<void>;
  /** A presigned GET, valid for a render's budget: what the renderer fetches the bytes through. */
  readUrl(objectKey: string): Promise<string>;
  /** A presigned GET that downloads the file as `filename`. */
  downloadUrl(objectKey: string, filename: string, contentType: AssetType): Promise<string>;
}

/**
 * What the bytes are, checked against what the caller says they are (adapters/assets/inspect.ts):
 * throws 422 INVALID_ASSET naming the field (`Content-Type` or `body`) for anything else, an SVG
 * that carries a script or refers outside itself included.
 */
export type AssetInspector = (bytes: Uint8Array, contentType: string) => Promise<AssetType>;

const sizeOf = (bytes: number): string =>
  `${bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${Math.round(bytes / 1024)} KiB`} (${bytes.toLocaleString('en-US')} bytes)`;

export const assetNotFound = (name: string) =>
  new ServiceError('ASSET_NOT_FOUND', `Asset ${JSON.stringify(name)} was not found`);

const invalidName = (name: string) =>
  new ServiceError(
    'INVALID_ASSET',
    'The asset name must be 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit',
    {
      details: [{ field: 'name', issue: `${JSON.stringify(name.slice(0, 120))} is not a valid asset name` }],
    },
  );

/** The 413 of a file over the per-file limit, which it names. */
export const assetTooLarge = (bytes: number | undefined, maxBytes = MAX_ASSET_BYTES) =>
  new ServiceError(
    'ASSET_TOO_LARGE',
    `The file is ${bytes === undefined ? 'over the limit' : `${bytes.toLocaleString('en-US')} bytes`}: an asset is at most ${sizeOf(maxBytes)}. Compress the image, or subset the font (WOFF2).`,
    { details: [{ field: 'body', issue: `is over the per-file limit of ${maxBytes} bytes` }] },
  );

export const assetView = (a: Asset): Asset => ({
  name: a.name,
  kind: a.kind,
  content_type: a.content_type,
  size_bytes: a.size_bytes,
  sha256: a.sha256,
  created_at: a.created_at,
});

export interface AssetDeps {
  readonly store: AssetStore;
  readonly blobs: AssetBlobs;
  readonly inspect: AssetInspector;
  readonly clock: Clock;
  readonly newUploadId: () => string;
  readonly digest: (bytes: Uint8Array) => string;
  readonly onFault: (message: string, error: unknown) => void;
  /** @default MAX_ASSET_BYTES, MAX_ACCOUNT_ASSET_BYTES, MAX_ASSETS */
  readonly limits?: {
    readonly maxBytes?: number;
    readonly maxAccountBytes?: number;
    readonly maxAssets?: number;
  };
}

/** An asset with its download link (GET /v1/assets/{name}), valid as PDF links are. */
export interface AssetWithLink extends Asset {
  readonly download_url: string;
}

/** The assets resource's use cases (PUT and DELETE: session; GET: session or API key). */
export const createAssetManagement = (deps: AssetDeps) => {
  const { store, blobs, clock } = deps;
  const maxBytes = deps.limits?.maxBytes ?? MAX_ASSET_BYTES;
  const maxAccountBytes = deps.limits?.maxAccountBytes ?? MAX_ACCOUNT_ASSET_BYTES;
  const maxAssets = deps.limits?.maxAssets ?? MAX_ASSETS;
  const checkName = (name: string) => {
    if (!ASSET_NAME.test(name)) throw invalidName(name);
  };
  const find = async (principal: Principal, name: string) => {
    const found = ASSET_NAME.test(name) ? await store.get(principal.accountId, name) : undefined;
    if (!found) throw assetNotFound(name);
    return found;
  };
  const dropBlob = (objectKey: string, why: string) =>
    blobs.delete(objectKey).catch((e: unknown) => deps.onFault(why, e));

  return {
    limits: { maxBytes, maxAccountBytes, maxAssets },
    async put(principal: Principal, name: string, contentType: string, bytes: Uint8Array): Promise<Asset> {
      checkName(name);
      if (bytes.byteLength > maxBytes) throw assetTooLarge(bytes.byteLength, maxBytes);
      const type = await deps.inspect(bytes, contentType);
      const objectKey = `assets/${principal.accountId}/${deps.newUploadId()}`;
      const stored: StoredAsset = {
        name,
        kind: ASSET_TYPES[type],
        content_type: type,
        size_bytes: bytes.byteLength,
        sha256: deps.digest(bytes),
        created_at: isoNow(clock.now()),
        account_id: principal.accountId,
        object_key: objectKey,
      };
      await blobs.put(objectKey, bytes, type);
      let outcome: AssetPutOutcome;
      try {
        outcome = await store.put(stored, { maxAccountBytes, maxAssets });
      } catch (e) {
        await dropBlob(objectKey, 'asset bytes not removed after a failed write');
        throw e;
      }
      if (outcome.kind !== 'stored') {
        await dropBlob(objectKey, 'refused asset bytes not removed');
        if (outcome.kind === 'limitReached') {
          throw new ServiceError(
            'ASSET_LIMIT_REACHED',
            `An account has at most ${maxAssets} assets: delete one first`,
          );
        }
        throw new ServiceError(
          'ASSET_QUOTA_EXCEEDED',
          `Your assets take ${outcome.usedBytes.toLocaleString('en-US')} bytes; with this file (${bytes.byteLength.toLocaleString('en-US')} bytes) they would pass the account's limit of ${sizeOf(maxAccountBytes)}: delete some first`,
          { details: [{ field: 'body', issue: `is over the account's limit of ${maxAccountBytes} bytes` }] },
        );
      }
      if (outcome.replaced) await dropBlob(outcome.replaced.object_key, 'replaced asset bytes not removed');
      return assetView(stored);
    },
    list: async (principal: Principal): Promise<Asset[]> =>
      (await store.list(principal.accountId)).map(assetView),
    async get(principal: Principal, name: string): Promise<AssetWithLink> {
      const found = await find(principal, name);
      return {
        ...assetView(found),
        download_url: await blobs.downloadUrl(found.object_key, found.name, found.content_type),
      };
    },
    async delete(principal: Principal, name: string): Promise<Asset> {
      const deleted = ASSET_NAME.test(name) ? await store.delete(principal.accountId, name) : undefined;
      if (!deleted) throw assetNotFound(name);
      await dropBlob(deleted.object_key, 'deleted asset bytes not removed');
      return assetView(deleted);
    },
  };
};

export type AssetManagement = ReturnType<typeof createAssetManagement>;

/**
 * The assets a render may load: the rendering account's, each with a link the renderer fetches
 * it through. Listed only when the render's templates name `asset(` at all (most do not, and
 * pay nothing for it).
 */
export const createAssetResolver = (deps: Pick<AssetDeps, 'store' | 'blobs'>) => ({
  async forRender(accountId: string): Promise<Record<string, RenderAsset>> {
    const found = await deps.store.list(accountId);
    const entries = await Promise.all(
      found.map(
        async (a) =>
          [a.name, { url: await deps.blobs.readUrl(a.object_key), contentType: a.content_type }] as const,
      ),
    );
    return Object.fromEntries(entries);
  },
});

export type AssetResolver = ReturnType<typeof createAssetResolver>;

/** Whether a render's templates may name an asset (a cheap test before any lookup). */
export const namesAssets = (...sources: readonly (string | null | undefined)[]): boolean =>
  sources.some((s) => typeof s === 'string' && s.includes('asset'));
