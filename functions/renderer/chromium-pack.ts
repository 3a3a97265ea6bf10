/**
 * Chromium from the layer (lib/chromium-layer.ts builds it; CHROMIUM_PACK in wiring.ts names its
 * parts), instead of @sparticuz/chromium's brotli files. Why: @sparticuz/chromium inflates 191 MB
 * of brotli on one thread at every cold start (1.7 s of CPU measured in the Lambda-like sandbox);
 * a zstd pack cut that to 0.4 s but still cost ~0.5 s of a 2,048 MB renderer's first PDF. The
 * layer now ships Chromium unpacked, beside its SwiftShader libraries, and launches it from /opt
 * as it is: nothing is inflated or copied. To fit Lambda's 250 MiB, the CJK fonts are left out of
 * the layer and fetched on a page's first need (fetched-fonts.ts).
 *
 * Kept from @sparticuz/chromium: its fonts.conf and Open Sans, which the layer's fonts.conf includes
 * from /tmp/fonts; a link there is all a cold start writes.
 */
import { readlinkSync } from 'node:fs';
import { rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM_PACK } from '../wiring.js';

export interface UnpackedChromium {
  readonly executablePath: string;
  /** To put first on Chromium's LD_LIBRARY_PATH. */
  readonly libraryPath: string;
}

const linked = (link: string, target: string): boolean => {
  try {
    return readlinkSync(link) === target;
  } catch {
    return false;
  }
};

/** Chromium in the layer at `packDir`, with @sparticuz/chromium's fonts linked at `<into>/fonts`. */
export const chromiumFromPack = async (
  packDir: string,
  into: string = tmpdir(),
): Promise<UnpackedChromium> => {
  const fonts = join(into, 'fonts');
  const target = join(packDir, CHROMIUM_PACK.fonts);
  if (!linked(fonts, target)) {
    await rm(fonts, { force: true }).catch(() => undefined);
    await symlink(target, fonts).catch(() => undefined);
  }
  return {
    executablePath: join(packDir, CHROMIUM_PACK.binary),
    libraryPath: join(packDir, CHROMIUM_PACK.lib),
  };
};
