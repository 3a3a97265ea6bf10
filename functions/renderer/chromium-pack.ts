/**
 * Chromium from the layer's pack (lib/chromium-layer.ts builds it; CHROMIUM_PACK in wiring.ts
 * names its parts), instead of @sparticuz/chromium's brotli files. Why: @sparticuz/chromium
 * inflates 191 MB of brotli on one thread at every cold start, 1.7 s of CPU measured in the
 * Lambda-like sandbox, more than half of a 2,048 MB renderer's first PDF. Shipping Chromium
 * unpacked does not fit Lambda's 250 MiB (292 MiB with the fonts); the pack keeps the binary
 * compressed with zstd, which inflates ~5x faster (0.38 s against 1.9 s of CPU for the same binary,
 * measured), and ships the rest unpacked: the libraries, SwiftShader, @sparticuz/chromium's fonts.
 * Every script's fonts stay in the layer, so no page waits on a download.
 *
 * The binary is inflated once per execution environment into /tmp (a temporary name, then a
 * rename: a second renderer in the same /tmp never runs a half-written file), SwiftShader linked
 * beside it, and the libraries put first on Chromium's LD_LIBRARY_PATH.
 */
import {
  createReadStream,
  createWriteStream,
  existsSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
} from 'node:fs';
import { chmod, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import * as zlib from 'node:zlib';
import { CHROMIUM_PACK } from '../wiring.js';
import { log } from './log.js';

export interface UnpackedChromium {
  readonly executablePath: string;
  /** To put first on Chromium's LD_LIBRARY_PATH. */
  readonly libraryPath: string;
}

const unpacked = new Map<string, Promise<UnpackedChromium>>();

/** Chromium from the pack at `packDir`, inflated on the first call (per process and /tmp). */
export const chromiumFromPack = (packDir: string, into: string = tmpdir()): Promise<UnpackedChromium> => {
  const key = `${packDir}\0${into}`;
  let done = unpacked.get(key);
  if (!done) {
    done = unpack(packDir, into).catch((e: unknown) => {
      unpacked.delete(key);
      throw e;
    });
    unpacked.set(key, done);
  }
  return done;
};

const unpack = async (packDir: string, into: string): Promise<UnpackedChromium> => {
  const dir = join(into, 'chromium-pack');
  const executablePath = join(dir, 'chromium');
  const libraryPath = join(packDir, CHROMIUM_PACK.lib);
  const besides = join(packDir, CHROMIUM_PACK.besideBinary);
  const fonts = join(into, 'fonts');
  // Which pack the binary in /tmp came from: in Lambda /tmp starts empty and the layer never
  // changes, but a /tmp that outlives its pack (a machine running stacks from several builds, one
  // after another) holds another Chromium, and links into a directory that is gone.
  const packed = statSync(join(packDir, CHROMIUM_PACK.binary));
  const identity = `${packDir}\n${packed.size}\n${packed.mtimeMs}`;
  const marker = join(dir, 'pack');
  const linked = (link: string, target: string) => {
    try {
      return readlinkSync(link) === target;
    } catch {
      return false;
    }
  };
  const current = () => {
    try {
      return (
        readFileSync(marker, 'utf8') === identity &&
        existsSync(executablePath) &&
        readdirSync(besides).every((name) => linked(join(dir, name), join(besides, name))) &&
        linked(fonts, join(packDir, CHROMIUM_PACK.fonts))
      );
    } catch {
      return false;
    }
  };
  if (current()) return { executablePath, libraryPath };
  // zstd is in Node's zlib from 22.15 and 23.8; Lambda's nodejs24.x has it.
  if (typeof zlib.createZstdDecompress !== 'function') {
    throw new Error(`Chromium pack: this Node.js (${process.version}) has no zstd`);
  }
  const started = performance.now();
  const cpu = process.cpuUsage();
  await mkdir(dir, { recursive: true });
  await Promise.all(
    readdirSync(besides).map(async (name) => {
      await rm(join(dir, name), { force: true });
      await symlink(join(besides, name), join(dir, name));
    }),
  );
  // @sparticuz/chromium's fonts, where its fonts.conf (included by ours) expects them.
  if (!linked(fonts, join(packDir, CHROMIUM_PACK.fonts))) {
    await rm(fonts, { force: true }).catch(() => undefined);
    await symlink(join(packDir, CHROMIUM_PACK.fonts), fonts).catch(() => undefined);
  }
  const partial = `${executablePath}.${process.pid}.partial`;
  await pipeline(
    createReadStream(join(packDir, CHROMIUM_PACK.binary), { highWaterMark: 2 ** 22 }),
    zlib.createZstdDecompress({ chunkSize: 2 ** 21 }),
    createWriteStream(partial, { mode: 0o700 }),
  );
  await chmod(partial, 0o755);
  await rename(partial, executablePath);
  await writeFile(marker, identity);
  const used = process.cpuUsage(cpu);
  log('INFO', 'chromium-unpacked', {
    ms: Math.round(performance.now() - started),
    cpuMs: Math.round((used.user + used.system) / 1000),
    from: join(packDir, CHROMIUM_PACK.binary),
    to: executablePath,
  });
  return { executablePath, libraryPath };
};
