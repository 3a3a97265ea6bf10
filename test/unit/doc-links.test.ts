/**
 * Every link in the README and docs/ resolves (a file of the repository, and the heading an anchor
 * names), and every comment in the code that points at a document names one that exists. A clone
 * has nothing beside the repository, so no link may leave it (to the folder beside it).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The folder beside the repository that a clone does not have. */
const OUTSIDE = ['..', 'shared', ''].join('/');
const DOCUMENTS = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => !f.split('/').some((part) => part.startsWith('.') || part === 'node_modules'))
    .map((f) => `docs/${f}`),
].filter((f) => f.endsWith('.md'));

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
const anchorOf = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const anchorsOf = (file: string): Set<string> => {
  const text = readFileSync(join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1] ?? '')));
};

const sourceFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(ts|mjs|sh)$/.test(entry.name) ? [path] : [];
  });

describe('documentation links', () => {
  it.each(DOCUMENTS)('%s: every relative link and anchor resolves inside the repository', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
    const broken: string[] = [];
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (!target || /^[a-z]+:/i.test(target)) continue; // https:, mailto:
      const [path = '', anchor] = target.split('#');
      const resolved = path === '' ? file : relative(ROOT, join(ROOT, dirname(file), path));
      if (resolved.startsWith('..') || !existsSync(join(ROOT, resolved))) {
        broken.push(`${target} (no file ${resolved})`);
      } else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
        broken.push(`${target} (no heading #${anchor} in ${resolved})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('code comments name documents that exist', () => {
    const broken: string[] = [];
    for (const file of ['bin', 'lib', 'functions', 'test', '.ci'].flatMap(sourceFiles)) {
      for (const [doc] of readFileSync(join(ROOT, file), 'utf8').matchAll(
        /\b(?:docs\/[\w./-]+\.md|README\.md)\b/g,
      )) {
        if (!existsSync(join(ROOT, doc))) broken.push(`${file}: ${doc}`);
      }
      if (readFileSync(join(ROOT, file), 'utf8').includes(OUTSIDE)) broken.push(`${file}: ${OUTSIDE}`);
    }
    expect(broken).toEqual([]);
  });
});
