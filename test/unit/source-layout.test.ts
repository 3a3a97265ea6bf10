import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;
/** The house rule: a source file that grows past this is split along its seams (STYLE.md). */
const MAX_LINES = 600;

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.(ts|mts|cts|mjs|cjs)$/.test(entry.name) ? [path] : [];
  });

describe('source layout', () => {
  it(`keeps every source file under functions/ at ${MAX_LINES} lines or fewer`, () => {
    const files = sources(join(ROOT, 'functions'));
    expect(files.length).toBeGreaterThan(100);
    const over = files
      .map((file) => ({
        file: relative(ROOT, file),
        lines: readFileSync(file, 'utf8').split('\n').length - 1,
      }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(over).toEqual([]);
  });
});
