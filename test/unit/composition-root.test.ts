/**
 * One composition root (issue 33): every store, queue and use case is built in functions/services.ts
 * and nowhere else, and no function's index.ts keeps state in a module-level `let`. Read from the
 * source tree, as source-layout.test.ts reads file lengths.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;
const FUNCTIONS = join(ROOT, 'functions');
const COMPOSITION_ROOT = 'functions/services.ts';
/** Its lower half: the clients, stores, queues and bucket it puts the use cases on. */
const COMPOSITION_ROOT_STORES = 'functions/services-stores.ts';

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.(ts|mts|cts)$/.test(entry.name) ? [path] : [];
  });

const read = (file: string) => ({ file: relative(ROOT, file), text: readFileSync(file, 'utf8') });

/** The value (not type-only) names a module imports from an adapter module. */
const adapterValueImports = (text: string): string[] =>
  [...text.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s+from\s+'([^']*\/adapters\/[^']*)'/g)].flatMap(
    ([, typeOnly, names]) =>
      typeOnly
        ? []
        : (names as string)
            .split(',')
            .map((n) => n.trim())
            .filter((n) => n !== '' && !n.startsWith('type ')),
  );

/** Top-level `let`/`var` declarations: state that outlives a call, outside the composition root. */
const moduleLets = (text: string): string[] =>
  text.split('\n').filter((line) => /^(export\s+)?(let|var)\s/.test(line));

describe('the composition root', () => {
  const files = sources(FUNCTIONS).map(read);
  const indexes = readdirSync(FUNCTIONS, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => files.filter((f) => f.file === `functions/${e.name}/index.ts`));

  it('finds the functions and their index files', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(indexes.map((f) => f.file)).toEqual(
      expect.arrayContaining([
        'functions/pdf/index.ts',
        'functions/batches/index.ts',
        'functions/render-worker/index.ts',
        'functions/sweeper/index.ts',
        'functions/webhook-sender/index.ts',
      ]),
    );
    expect(files.map((f) => f.file)).toContain(COMPOSITION_ROOT);
  });

  it('has no module-level let in any functions/*/index.ts', () => {
    const found = indexes.flatMap(({ file, text }) => moduleLets(text).map((line) => `${file}: ${line}`));
    expect(found).toEqual([]);
  });

  it('builds stores, clients and queues only in the composition root', () => {
    const outside = files.filter(
      ({ file }) =>
        file !== COMPOSITION_ROOT &&
        file !== COMPOSITION_ROOT_STORES &&
        !file.startsWith('functions/adapters/'),
    );
    const built = outside.flatMap(({ file, text }) => [
      ...adapterValueImports(text)
        .filter((name) => name.startsWith('create'))
        .map((name) => `${file}: imports ${name}`),
      ...[...text.matchAll(/\bcreate\w*Store\(/g)].map(([call]) => `${file}: calls ${call}`),
    ]);
    expect(built).toEqual([]);
  });

  it('detects what it forbids', () => {
    expect(moduleLets('let x = 1;\n  let y = 2;\nexport let z;\n')).toEqual(['let x = 1;', 'export let z;']);
    expect(
      adapterValueImports(
        "import { createJobStore, type X } from '../adapters/dynamodb/jobs.js';\nimport type { Y } from '../adapters/s3/client.js';",
      ),
    ).toEqual(['createJobStore']);
  });
});
