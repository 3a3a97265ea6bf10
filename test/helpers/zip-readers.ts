/**
 * Real ZIP readers, as a person checking an archive would run them: Info-ZIP's unzip and zipinfo,
 * on the archive written to a temporary file. None reads a ZIP with our own code.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const onZip = async <T>(zip: Uint8Array, read: (file: string) => Promise<T>): Promise<T> => {
  const dir = await mkdtemp(join(tmpdir(), 'zip-reader-'));
  try {
    const file = join(dir, 'in.zip');
    await writeFile(file, zip);
    return await read(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

export interface ZipEntryRow {
  readonly name: string;
  /** zipinfo's method: `stor` (stored), `defN` (deflated), ... */
  readonly method: string;
}

/** `unzip -tq` (every entry's CRC checked) and `zipinfo`'s rows: each entry's name and method, in order. */
export const zipEntries = (zip: Uint8Array): Promise<{ tested: string; entries: ZipEntryRow[] }> =>
  onZip(zip, async (file) => {
    const tested = (await run('unzip', ['-tq', file])).stdout.trim();
    const names = (await run('zipinfo', ['-1', file])).stdout.trimEnd().split('\n');
    // zipinfo -l: permissions, version, os, size, type, csize, method, date, time, name.
    const rows = (await run('zipinfo', ['-l', file])).stdout.split('\n').slice(2, 2 + names.length);
    return {
      tested,
      entries: names.map((name, i) => ({ name, method: rows[i]?.trim().split(/\s+/)[6] ?? '' })),
    };
  });

/** `unzip -p`: one entry's bytes. */
export const zipEntry = (zip: Uint8Array, name: string): Promise<Uint8Array> =>
  onZip(zip, async (file) => {
    const { stdout } = await run('unzip', ['-p', file, name], {
      encoding: 'buffer',
      maxBuffer: 256 * 1024 * 1024,
    });
    return new Uint8Array(stdout);
  });
