/**
 * The Chromium pack the renderer starts Chromium from (functions/renderer/chromium-pack.ts; its
 * parts are named by CHROMIUM_PACK in functions/wiring.ts), built at synth from
 * @sparticuz/chromium's brotli files: the binary recompressed with zstd, which inflates ~5x faster
 * than brotli at about the same size (190.9 MB of Chromium 143: brotli 61.8 MB, 1.9 s of CPU to
 * inflate; zstd level 3 81.1 MB, 0.38 s; level 9 72.6 MB, 0.45 s; level 19 65.3 MB, 0.73 s; gzip
 * -9 84.8 MB, 0.60 s; measured with Node's zlib on the build machine), and the rest unpacked:
 * Amazon Linux 2023's libraries (4 MB), SwiftShader (15 MB), @sparticuz/chromium's fonts.
 * Level 3: the fastest to inflate, and 1.2 s to build instead of 5 s or minutes.
 *
 * Building it takes ~3 s of CPU, so the binary is kept in node_modules/.cache by the version it
 * came from and reused by every later synth.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync, constants, zstdCompressSync } from 'node:zlib';
import { CHROMIUM_PACK } from '../functions/wiring.js';

export const CHROMIUM_PACK_ZSTD_LEVEL = 3;

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
 * Writes the pack into `packDir` from @sparticuz/chromium at `chromiumDir` (its `bin/` holds the
 * brotli files), reusing the zstd binary cached under `cacheDir`.
 */
export const assembleChromiumPack = (
  chromiumDir: string,
  version: string,
  packDir: string,
  cacheDir: string,
): void => {
  const bin = join(chromiumDir, 'bin');
  mkdirSync(packDir, { recursive: true });
  const cached = join(cacheDir, `chromium-${version}-zstd${CHROMIUM_PACK_ZSTD_LEVEL}.zst`);
  if (!existsSync(cached)) {
    mkdirSync(cacheDir, { recursive: true });
    const binary = brotliDecompressSync(readFileSync(join(bin, 'chromium.br')));
    const partial = `${cached}.${process.pid}.partial`;
    writeFileSync(
      partial,
      zstdCompressSync(binary, { params: { [constants.ZSTD_c_compressionLevel]: CHROMIUM_PACK_ZSTD_LEVEL } }),
    );
    renameSync(partial, cached);
  }
  cpSync(cached, join(packDir, CHROMIUM_PACK.binary));
  // al2023.tar holds lib/...; swiftshader.tar its files at the top; fonts.tar fonts.conf and fonts/.
  untar(join(bin, 'al2023.tar.br'), packDir);
  untar(join(bin, 'swiftshader.tar.br'), join(packDir, CHROMIUM_PACK.besideBinary));
  untar(join(bin, 'fonts.tar.br'), join(packDir, CHROMIUM_PACK.fonts));
};
