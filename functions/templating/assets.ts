/**
 * `asset(name)`: the URL of the rendering account's asset `name` (an image or a font uploaded
 * with PUT /v1/assets/{name}). The origin is reserved (.invalid resolves nowhere): only the
 * renderer answers it, from storage, in its request interceptor (renderer/interception.ts); a
 * browser or any other client gets nothing from it.
 */
import { PyCallable, typeError, Undefined, type Value } from './values.js';

export const ASSET_ORIGIN = 'https://assets.pdf-service.invalid';

export const assetUrl = (name: string): string => `${ASSET_ORIGIN}/${encodeURIComponent(name)}`;

/** The asset's name in a URL of the asset origin, or undefined for any other URL. */
export const assetNameOf = (url: string): string | undefined => {
  if (!url.startsWith(`${ASSET_ORIGIN}/`)) return undefined;
  const path = url.slice(ASSET_ORIGIN.length + 1).split(/[?#]/)[0] ?? '';
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
};

export const assetGlobal = (): Value =>
  new PyCallable('asset', (args, kwargs) => {
    if (kwargs.size || args.length !== 1)
      throw typeError('asset() takes exactly one argument: the asset name');
    const name = args[0] as Value;
    if (name instanceof Undefined) name.fail();
    if (typeof name !== 'string') throw typeError('asset() takes the asset name, a string');
    return assetUrl(name);
  });
