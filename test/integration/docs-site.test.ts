/**
 * The documentation site (`npm run docs:build`, VitePress): docs/ builds, every page of it becomes
 * a page of the site, and a link to a page that does not exist fails the build. Heavy tier: two
 * builds, half a minute each on two busy cores.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify, stripVTControlCharacters } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { DOCS_SITE_DIR } from '../../lib/local/docs-site.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BUILD_TIMEOUT_MS = 240_000;

const markdownPages = async (dir: string): Promise<string[]> =>
  (await readdir(dir, { recursive: true, encoding: 'utf8' }))
    .filter((f) => f.endsWith('.md') && !f.split('/').some((part) => part.startsWith('.')))
    .sort();

/** A copy of docs/ inside the project (VitePress's config imports `vitepress` from its node_modules). */
let scratch: string | undefined;
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('npm run docs:build', () => {
  it(
    'builds every page of docs/ into the site',
    async () => {
      const built = await run('npm', ['run', 'docs:build'], {
        cwd: ROOT,
        timeout: BUILD_TIMEOUT_MS,
        maxBuffer: 16 * 1024 * 1024,
      });
      expect(built.stdout).toContain('build complete');
      const site = join(ROOT, DOCS_SITE_DIR);
      const missing = (await markdownPages(join(ROOT, 'docs')))
        .map((page) => page.replace(/\.md$/, '.html'))
        .filter((page) => !existsSync(join(site, page)));
      expect(missing).toEqual([]);
    },
    BUILD_TIMEOUT_MS,
  );

  it(
    'fails on a link to a page that does not exist, naming it',
    async () => {
      const cache = join(ROOT, 'node_modules', '.cache');
      await mkdir(cache, { recursive: true });
      scratch = await mkdtemp(join(cache, 'docs-site-'));
      const built = /^\.vitepress[/\\](dist|cache)/;
      await cp(join(ROOT, 'docs'), join(scratch, 'docs'), {
        recursive: true,
        filter: (source) => !built.test(relative(join(ROOT, 'docs'), source)),
      });
      await writeFile(
        join(scratch, 'docs', 'webhooks.md'),
        '# Webhooks\n\nSee [the retries](webhook-retries.md).\n',
      );
      const failed = await run('npx', ['vitepress', 'build', join(scratch, 'docs')], {
        cwd: ROOT,
        timeout: BUILD_TIMEOUT_MS,
        maxBuffer: 16 * 1024 * 1024,
      }).then(
        () => undefined,
        (e: { code?: number; stdout?: string; stderr?: string }) => e,
      );
      expect(failed?.code).not.toBe(0);
      // CI forces colour: the file name and the link come wrapped in escape codes.
      expect(stripVTControlCharacters(`${failed?.stdout}${failed?.stderr}`)).toMatch(
        /dead link .*webhook-retries in file webhooks\.md/,
      );
    },
    BUILD_TIMEOUT_MS,
  );
});
