/**
 * Checks the floors of functions/ (functions/floors.ts): every import between two of its files
 * runs from a floor to the same floor or a lower one, and every file is on a floor. Part of
 * `npm run lint`; `tsx bin/floors.ts` prints each import that runs upward and exits 1.
 *
 * Imports are read as TypeScript reads them (ts.preProcessFile: `import`, `import type`,
 * `export … from`, `import('…')`), so a type-only import counts: it couples the floors as much.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { FLOORS, type Floor } from '../functions/floors.js';

const SOURCE = /\.(ts|mts|mjs)$/;

/** The floor of `file` (relative to functions/, `/`-separated): the longest path that holds it. */
export const floorOf = (file: string, floors: readonly Floor[] = FLOORS): number | undefined => {
  let best: { floor: number; length: number } | undefined;
  floors.forEach((floor, index) => {
    for (const path of floor.paths) {
      const holds = path.endsWith('/') ? file.startsWith(path) : file === path;
      if (holds && (!best || path.length > best.length)) best = { floor: index, length: path.length };
    }
  });
  return best?.floor;
};

/** `./x.js` from `dir/a.ts` as the file it names, among `files`; undefined if it names none. */
const resolve = (from: string, specifier: string, files: ReadonlySet<string>): string | undefined => {
  const base = posix.normalize(posix.join(posix.dirname(from), specifier));
  const candidates = [
    base,
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
    `${base}.ts`,
    `${base}/index.ts`,
  ];
  return candidates.find((candidate) => files.has(candidate));
};

export interface Problem {
  readonly file: string;
  readonly message: string;
}

/**
 * What breaks the floors in `sources` (file → its text, paths relative to functions/): imports
 * that run upward, files on no floor, relative imports that name no file.
 */
export const checkFloors = (
  sources: ReadonlyMap<string, string>,
  floors: readonly Floor[] = FLOORS,
): { readonly imports: number; readonly problems: readonly Problem[] } => {
  const files = new Set(sources.keys());
  const problems: Problem[] = [];
  let imports = 0;
  for (const [file, text] of sources) {
    const floor = floorOf(file, floors);
    if (floor === undefined) {
      problems.push({ file, message: 'is on no floor: place it in functions/floors.ts' });
      continue;
    }
    for (const { fileName: specifier } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!specifier.startsWith('.')) continue;
      const target = resolve(file, specifier, files);
      if (target === undefined) {
        // Outside functions/ (nothing there may import it), or a file that does not exist.
        problems.push({ file, message: `imports ${specifier}, which is no file under functions/` });
        continue;
      }
      imports += 1;
      const targetFloor = floorOf(target, floors);
      if (targetFloor !== undefined && targetFloor > floor) {
        problems.push({
          file,
          message: `(${floors[floor]?.name}) imports functions/${target} (${floors[targetFloor]?.name}), a higher floor`,
        });
      }
    }
  }
  return { imports, problems };
};

const sourcesUnder = (root: string): Map<string, string> => {
  const sources = new Map<string, string>();
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !SOURCE.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    sources.set(relative(root, path).split(/[\\/]/).join('/'), readFileSync(path, 'utf8'));
  }
  return sources;
};

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', 'functions');
  const sources = sourcesUnder(root);
  const { imports, problems } = checkFloors(sources);
  for (const { file, message } of problems) process.stderr.write(`functions/${file} ${message}\n`);
  const summary = `floors: ${sources.size} files on ${FLOORS.length} floors, ${imports} imports between them, ${problems.length} problems`;
  process.stdout.write(`${summary}\n`);
  if (problems.length > 0) process.exitCode = 1;
}
