/**
 * A full DATA_DIR (issue 19, part 6): `npm start` on a small tmpfs, filled by a file. Renders
 * answer 507 INSUFFICIENT_STORAGE with Retry-After, the stack keeps running (before, an uncaught
 * LevelDB I/O error from dynalite, or ENOSPC from s3rver, ended the process), and renders succeed
 * again once the file is deleted.
 *
 * Mounting needs root, as this machine and CI run tests; where tmpfs cannot be mounted, a small
 * ext4 file system in a file is loop-mounted instead.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NpmStart, npmStart } from '../helpers/npm-start.js';
import { sleep, timedApi } from '../helpers/template-abuse.js';

const SIZE_MIB = 24;

/** Unmounts, waiting for the stack's last processes to let go of it. */
const unmountDir = async (dir: string): Promise<void> => {
  for (let attempt = 0; ; attempt++) {
    try {
      execFileSync('umount', [dir], { stdio: 'pipe' });
      return;
    } catch (e) {
      if (attempt >= 20) throw e;
      await sleep(250);
    }
  }
};

const mountSmall = async (dir: string): Promise<() => Promise<void>> => {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${SIZE_MIB}m`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch {
    const image = `${dir}.img`;
    await writeFile(image, '');
    execFileSync('truncate', ['-s', `${SIZE_MIB}M`, image]);
    execFileSync('mkfs.ext4', ['-q', '-F', image]);
    execFileSync('mount', ['-o', 'loop', image, dir], { stdio: 'pipe' });
    return async () => {
      await unmountDir(dir);
      await rm(image, { force: true });
    };
  }
  return () => unmountDir(dir);
};

/** Writes until the file system refuses (ENOSPC). */
const fill = async (file: string): Promise<void> => {
  const handle = await open(file, 'w');
  const chunk = Buffer.alloc(256 * 1024, 1);
  try {
    for (;;) await handle.write(chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  } finally {
    await handle.close().catch(() => {});
  }
};

describe('npm start with a full DATA_DIR', () => {
  let mountPoint: string;
  let unmount: (() => Promise<void>) | undefined;
  let stack: NpmStart | undefined;

  beforeAll(async () => {
    mountPoint = await mkdtemp(join(tmpdir(), 'pdf-service-small-disk-'));
    unmount = await mountSmall(mountPoint);
  });
  afterAll(async () => {
    await stack?.kill();
    await unmount?.();
    await rm(mountPoint, { recursive: true, force: true });
  });

  it('answers 507 INSUFFICIENT_STORAGE, keeps running, and renders again once space returns', async () => {
    stack = await npmStart({ dataDir: join(mountPoint, 'data') });
    const api = timedApi(stack.baseUrl);
    const token = await stack.sessionToken();
    const render = () =>
      api('/v1/pdf', { method: 'POST', token, body: { html: '<h1>Invoice</h1>' }, timeoutMs: 60_000 });
    const first = await render();
    expect(first.status, first.text).toBe(201);

    const filler = join(mountPoint, 'filler');
    await fill(filler);
    for (let i = 0; i < 3; i++) {
      const full = await render();
      expect(full.status, `${full.text}\n${stack.output().slice(-3000)}`).toBe(507);
      expect(full.json.error.code).toBe('INSUFFICIENT_STORAGE');
      expect(Number(full.headers?.get('retry-after'))).toBeGreaterThan(0);
    }
    // Still serving: a request that writes nothing answers as usual.
    expect((await api('/v1/me', { timeoutMs: 10_000 })).status).toBe(401);

    await rm(filler);
    const after = await render();
    expect(after.status, after.text).toBe(201);
    expect((await render()).status).toBe(201);
  });
});
