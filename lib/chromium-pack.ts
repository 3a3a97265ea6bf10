/**
 * Chromium as the layer ships it (functions/renderer/chromium-pack.ts launches it; its parts are
 * named by CHROMIUM_PACK in functions/wiring.ts), built at synth from @sparticuz/chromium's brotli
 * files, everything unpacked (issue 42): the binary (190.9 MB of Chromium 143) with SwiftShader's
 * GL libraries beside it, Amazon Linux 2023's libraries (4 MB), @sparticuz/chromium's fonts. A cold
 * start inflates nothing; before, a zstd pack of the binary (81 MB) took 0.38 s of CPU to inflate
 * and, measured, ~0.5 s more of the first PDF at 2,048 MB. It fits Lambda's 250 MiB because the CJK
 * fonts left the layer (lib/layer-fonts.ts, fetched on first need).
 *
 * Inflating the binary takes ~1.9 s of CPU, so it is kept in node_modules/.cache by the version it
 * came from and reused by every later synth.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { CHROMIUM_PACK } from '../functions/wiring.js';

/** Named in the layer's asset hash: a change to how the layer holds Chromium changes the asset. */
export const CHROMIUM_PACK_LAYOUT = 'unpacked';

/** Where Lambda finds the pack: the layer is mounted at /opt. */
export const LAYER_CHROMIUM_PACK_DIR = `/opt/${CHROMIUM_PACK.dir}`;

/** The brotli files @sparticuz/chromium ships, which the pack replaces. */
export const SPARTICUZ_ARCHIVES = ['chromium.br', 'al2023.tar.br', 'swiftshader.tar.br', 'fonts.tar.br'];

const untar = (archive: string, into: string): void => {
  mkdirSync(into, { recursive: true });
  const tar = join(into, '..', `${archive.split('/').at(-1)}.tar`);
  writeFileSync(tar, brotliDecompressSync(readFileSync(archive)));
  try {
    execFileSync('tar', ['xf', tar, '-C', into, '--no-same-owner']);
  } finally {
    rmSync(tar, { force: true });
  }
};

/**
 * Writes Chromium into `packDir` from @sparticuz/chromium at `chromiumDir` (its `bin/` holds the
 * brotli files), reusing the binary cached under `cacheDir`.
 */
export const assembleChromiumPack = (
  chromiumDir: string,
  version: string,
  packDir: string,
  cacheDir: string,
): void => {
  const bin = join(chromiumDir, 'bin');
  mkdirSync(packDir, { recursive: true });
  const cached = join(cacheDir, `chromium-${version}`);
  if (!existsSync(cached)) {
    mkdirSync(cacheDir, { recursive: true });
    const partial = `${cached}.${process.pid}.partial`;
    writeFileSync(partial, brotliDecompressSync(readFileSync(join(bin, 'chromium.br'))));
    renameSync(partial, cached);
  }
  const binary = join(packDir, CHROMIUM_PACK.binary);
  cpSync(cached, binary);
  chmodSync(binary, 0o755);
  // al2023.tar holds lib/...; swiftshader.tar its files at the top (beside the binary, where
  // Chromium loads them from); fonts.tar fonts.conf and fonts/.
  untar(join(bin, 'al2023.tar.br'), packDir);
  untar(join(bin, 'swiftshader.tar.br'), packDir);
  untar(join(bin, 'fonts.tar.br'), join(packDir, CHROMIUM_PACK.fonts));
};
