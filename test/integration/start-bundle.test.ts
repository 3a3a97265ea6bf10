/**
 * `npm start` runs bin/local.ts from a bundle it builds into node_modules/.cache
 * (lib/local/start-bundle.mjs). Here on a copy of the project's sources (bin/, lib/, functions/, layers/
 * and the package files) whose node_modules links to the project's packages but has a cache of
 * its own: a start without any build builds and serves PDFs, the next one runs that build, and a
 * changed source is built again before anything runs, so a stale build never does.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateIssuer } from '../../lib/local/issuer.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Started {
  readonly baseUrl: string;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** SIGTERM, then its exit code, or its signal's name when one ended it. */
  stop(): Promise<number | string | null>;
}

/** `node bin/start.mjs` in `root`, as `npm start` runs it, until it says where it listens. */
const start = async (root: string, dataDir: string): Promise<Started> => {
  const child: ChildProcess = spawn(process.execPath, ['bin/start.mjs'], {
    cwd: root,
    env: { ...process.env, PORT: '0', DATA_DIR: dataDir, POWERTOOLS_LOG_LEVEL: 'ERROR' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<number | string | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal)),
  );
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const found = /listening on (http:\/\/\S+) /.exec(stdout);
      if (found) {
        clearInterval(timer);
        resolve(found[1] as string);
      }
    }, 20);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`bin/start.mjs exited (${code}) before listening:\n${stdout}\n${stderr}`));
    });
  });
  return {
    baseUrl,
    stdout: () => stdout,
    stderr: () => stderr,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
};

describe('npm start from its bundle', () => {
  let root: string;
  let dataDir: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'pdf-service-start-bundle-'));
    dataDir = join(root, '.data');
    for (const dir of ['bin', 'lib', 'functions', 'layers']) {
      await cp(join(ROOT, dir), join(root, dir), {
        recursive: true,
        filter: (source) => !source.includes(`${join('site', '.out')}`),
      });
    }
    for (const file of ['package.json', 'package-lock.json', 'tsconfig.json', '.nvmrc']) {
      await cp(join(ROOT, file), join(root, file));
    }
    // The project's packages, but not its cache: this copy's builds stay its own.
    await mkdir(join(root, 'node_modules'));
    for (const entry of await readdir(join(ROOT, 'node_modules'))) {
      if (entry !== '.cache')
        await symlink(join(ROOT, 'node_modules', entry), join(root, 'node_modules', entry));
    }
  });

  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('builds on a start without any build, and the build serves PDFs', async () => {
    const stack = await start(root, dataDir);
    try {
      expect(stack.stderr()).toContain('local stack: building bin/local.ts (no build yet)');
      const issuer = await loadOrCreateIssuer(dataDir);
      const token = await issuer.issueToken({ sub: 'user-1', email: 'user-1@example.com' });
      const res = await fetch(`${stack.baseUrl}/v1/pdf`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ html: '<h1>Hello {{ name }}</h1>', variables: { name: 'bundle' } }),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      const pdf = await fetch(((await res.json()) as { download_url: string }).download_url);
      expect(new TextDecoder().decode((await pdf.arrayBuffer()).slice(0, 5))).toBe('%PDF-');
    } finally {
      expect(await stack.stop(), stack.stderr()).toBe(0);
    }
  });

  it('runs the last build when no source changed', async () => {
    const stack = await start(root, dataDir);
    expect(await stack.stop(), stack.stderr()).toBe(0);
    expect(stack.stderr()).not.toContain('building');
  });

  it('builds again before it starts when a source changed, so a stale build never runs', async () => {
    const entry = join(root, 'bin', 'local.ts');
    const source = await readFile(entry, 'utf8');
    expect(source).toContain('`Dashboard: ');
    await writeFile(entry, source.replace('`Dashboard: ', '`Changed dashboard: '));
    const stack = await start(root, dataDir);
    expect(await stack.stop(), stack.stderr()).toBe(0);
    expect(stack.stderr()).toContain('local stack: building bin/local.ts (sources changed)');
    expect(stack.stdout()).toContain('Changed dashboard: ');
  });
});
