/**
 * Builds the dashboard's static site with the project's own esbuild, offline: at synth for the
 * CDK app (buildSiteSync) and on first request for the local stack (buildSite, in memory). The
 * page loads one small module (Preact, oidc-client-ts and the pages); the template editor
 * (CodeMirror with HTML and Jinja) is a chunk of its own that the page imports only when an editor
 * opens. File names carry a content hash, so `assets/` can be cached for good; index.html and
 * config.json cannot.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, type BuildResult, build, buildSync, type Metafile } from 'esbuild';
import { snippetRoutes } from './api-routes.js';

/** The page's source: index.html, main.tsx and the rest. */
export const SITE_SOURCE_DIR = fileURLToPath(new URL('./site/', import.meta.url));
/** Where built files go, relative to the site root. */
export const ASSETS_DIR = 'assets';
/** Files at the site root besides index.html (config.json is written by whoever serves the site). */
const STATIC_FILES = ['favicon.svg'];
/** The starter templates' thumbnails, at the site root's starters/<slug>.png. */
export const STARTER_THUMBNAILS_DIR = 'starters';
/** The API reference page: Scalar's viewer showing the API's /openapi.json, on this page only. */
export const REFERENCE_PAGE = 'reference.html';
/**
 * @scalar/api-reference's standalone bundle (Vue and all, one classic script defining `Scalar`),
 * served from `assets/` under a content-hashed name: 4.3 MB, 1.3 MB gzipped, which only the
 * reference page loads. Measured against Redoc 3.0.1's standalone (2.3 MB, 650 KB gzipped): Redoc
 * styles itself through styled-components, whose <style> text depends on the document, so no hash
 * can allow it, and its bundle must be loaded as a module; Scalar inserts fixed CSS, which a
 * policy allows by hash (headers.ts REFERENCE_STYLE_HASHES).
 */
const REFERENCE_VIEWER = fileURLToPath(
  new URL('../../node_modules/@scalar/api-reference/dist/browser/standalone.js', import.meta.url),
);
export const CONFIG_FILE = 'config.json';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

export const contentTypeOf = (path: string): string =>
  CONTENT_TYPES[/\.[a-z]+$/.exec(path)?.[0] ?? ''] ?? 'application/octet-stream';

export interface BuiltSite {
  /** Path relative to the site root (`index.html`, `assets/main-XXXX.js`) → contents. */
  readonly files: ReadonlyMap<string, Uint8Array>;
  /** The scripts the page loads before it can show anything: the entry and what it imports statically. */
  readonly initialScripts: readonly string[];
  /** Scripts only the template editor loads (its dynamic import and what only it needs). */
  readonly editorScripts: readonly string[];
  /** Scripts only the batches and webhooks pages load (site/pages/later.ts and what only they need). */
  readonly laterPageScripts: readonly string[];
  /** esbuild's metafile, output paths relative to the site root. */
  readonly metafile: Metafile;
  /** What only the API reference page loads: the viewer, then its start (site/reference.js). */
  readonly referenceScripts: readonly string[];
}

const OUT = join(SITE_SOURCE_DIR, '.out');
/** The module of the pages loaded when one opens, as esbuild names entry points (relative to the site source). */
const LATER_PAGES_ENTRY = 'pages/later.ts';

const buildOptions = (): BuildOptions & { write: false; metafile: true } => ({
  entryPoints: { main: join(SITE_SOURCE_DIR, 'main.tsx') },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'browser',
  // Browsers with ES2022 and constructed stylesheets: the last two years of the evergreen ones.
  target: ['chrome111', 'edge111', 'firefox115', 'safari16.4'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  // Licence comments of the bundled libraries stay, at the end of each file.
  legalComments: 'eof',
  charset: 'utf8',
  define: {
    'process.env.NODE_ENV': '"production"',
    // The routes the code snippets call, from the route declarations (lib/dashboard/api-routes.ts).
    __API_ROUTES__: JSON.stringify(snippetRoutes()),
  },
  outdir: OUT,
  entryNames: `${ASSETS_DIR}/[name]-[hash]`,
  chunkNames: `${ASSETS_DIR}/[name]-[hash]`,
  assetNames: `${ASSETS_DIR}/[name]-[hash]`,
  write: false,
  metafile: true,
  logLevel: 'silent',
  absWorkingDir: SITE_SOURCE_DIR,
});

const siteRelative = (path: string): string => relative(OUT, path).split('\\').join('/');

/** The outputs reachable from `start` through imports of the given kinds. */
const reachable = (metafile: Metafile, start: string, kinds: readonly string[]): Set<string> => {
  const seen = new Set<string>();
  const visit = (out: string) => {
    if (seen.has(out)) return;
    seen.add(out);
    for (const i of metafile.outputs[out]?.imports ?? []) if (kinds.includes(i.kind)) visit(i.path);
  };
  visit(start);
  return seen;
};

const assemble = (
  result: BuildResult & { outputFiles: { path: string; contents: Uint8Array }[] },
): BuiltSite => {
  const metafile = result.metafile as Metafile;
  // The metafile names outputs relative to absWorkingDir; make them relative to the site root.
  const outputs: Metafile['outputs'] = {};
  const fromMeta = (p: string) => siteRelative(join(SITE_SOURCE_DIR, p));
  for (const [path, output] of Object.entries(metafile.outputs)) {
    outputs[fromMeta(path)] = {
      ...output,
      imports: output.imports.map((i) => (i.external ? i : { ...i, path: fromMeta(i.path) })),
    };
  }
  const site: Metafile = { inputs: metafile.inputs, outputs };
  const entry = Object.entries(outputs).find(
    ([path, o]) => o.entryPoint !== undefined && path.endsWith('.js'),
  );
  if (!entry) throw new Error('dashboard build: no entry script in the output');
  const [mainJs, main] = entry;
  const mainCss = main.cssBundle;
  const initial = reachable(site, mainJs, ['import-statement']);
  const all = reachable(site, mainJs, ['import-statement', 'dynamic-import']);
  const laterRoot = Object.entries(outputs).find(([, o]) => o.entryPoint === LATER_PAGES_ENTRY)?.[0];
  if (!laterRoot) throw new Error(`dashboard build: no chunk for ${LATER_PAGES_ENTRY}`);
  const later = [...reachable(site, laterRoot, ['import-statement', 'dynamic-import'])].filter(
    (p) => !initial.has(p),
  );
  const editor = [...all].filter((p) => !initial.has(p) && !later.includes(p));

  const files = new Map<string, Uint8Array>();
  for (const f of result.outputFiles) files.set(siteRelative(f.path), f.contents);
  const template = readFileSync(join(SITE_SOURCE_DIR, 'index.html'), 'utf8');
  if (!template.includes('<!-- assets -->'))
    throw new Error('dashboard build: index.html lacks <!-- assets -->');
  const tags = [
    ...(mainCss ? [`<link rel="stylesheet" href="${siteRelative(join(SITE_SOURCE_DIR, mainCss))}">`] : []),
    ...[...initial].filter((p) => p !== mainJs).map((p) => `<link rel="modulepreload" href="${p}">`),
    `<script type="module" src="${mainJs}"></script>`,
  ];
  files.set('index.html', new TextEncoder().encode(template.replace('<!-- assets -->', tags.join('\n    '))));
  for (const name of STATIC_FILES) files.set(name, readFileSync(join(SITE_SOURCE_DIR, name)));
  // The starter templates' thumbnails (lib/starters, `npm run starters:thumbnails`).
  for (const name of readdirSync(join(SITE_SOURCE_DIR, STARTER_THUMBNAILS_DIR)).filter((n) =>
    n.endsWith('.png'),
  ))
    files.set(
      `${STARTER_THUMBNAILS_DIR}/${name}`,
      readFileSync(join(SITE_SOURCE_DIR, STARTER_THUMBNAILS_DIR, name)),
    );
  /** Hashed as esbuild names the rest, so that every script in `assets/` can be cached for good. */
  const hashed = (name: string, contents: Uint8Array): string => {
    const path = `${ASSETS_DIR}/${name}-${createHash('sha256').update(contents).digest('hex').slice(0, 8).toUpperCase()}.js`;
    files.set(path, contents);
    return path;
  };
  const viewerPath = hashed('api-reference', readFileSync(REFERENCE_VIEWER));
  const initPath = hashed('reference', readFileSync(join(SITE_SOURCE_DIR, 'reference.js')));
  const reference = readFileSync(join(SITE_SOURCE_DIR, REFERENCE_PAGE), 'utf8');
  if (!reference.includes('<!-- viewer -->'))
    throw new Error(`dashboard build: ${REFERENCE_PAGE} lacks <!-- viewer -->`);
  files.set(
    REFERENCE_PAGE,
    new TextEncoder().encode(
      reference.replace(
        '<!-- viewer -->',
        `<script src="${viewerPath}"></script>\n    <script src="${initPath}"></script>`,
      ),
    ),
  );
  return {
    files,
    initialScripts: [...initial],
    editorScripts: editor,
    laterPageScripts: later,
    metafile: site,
    referenceScripts: [viewerPath, initPath],
  };
};

/** Builds the site in memory (the local stack serves it from there). */
export const buildSite = async (): Promise<BuiltSite> => assemble(await build(buildOptions()));

let built: BuiltSite | undefined;

/** The same build, synchronously and once per process (CDK constructs are built synchronously). */
export const buildSiteSync = (): BuiltSite => {
  built ??= assemble(buildSync(buildOptions()));
  return built;
};

/**
 * Writes the built site into a directory named after its content (under the system's temporary
 * directory, reused while the content is the same) and returns it: CDK assets are directories.
 * Everything but `assets/` goes to `root/`, the hashed files to `assets/`, so that each can be
 * deployed with its own caching.
 */
export const writeSite = (site: BuiltSite, parent = tmpdir()): { root: string; assets: string } => {
  const hash = createHash('sha256');
  for (const [path, contents] of [...site.files].sort(([a], [b]) => a.localeCompare(b))) {
    hash.update(path).update('\0').update(contents).update('\0');
  }
  const dir = join(parent, `pdf-service-dashboard-${hash.digest('hex').slice(0, 16)}`);
  const result = { root: join(dir, 'root'), assets: join(dir, ASSETS_DIR) };
  if (existsSync(dir)) return result;
  const tmp = `${dir}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  for (const [path, contents] of site.files) {
    const target = path.startsWith(`${ASSETS_DIR}/`) ? join(tmp, path) : join(tmp, 'root', path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, contents);
  }
  try {
    renameSync(tmp, dir);
  } catch (e) {
    // Another process wrote the same content first.
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(dir)) throw e;
  }
  return result;
};
