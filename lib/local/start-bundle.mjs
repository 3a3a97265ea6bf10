// @ts-check
/**
 * `npm start` runs bin/local.ts as JavaScript that esbuild bundled, not as TypeScript through tsx:
 * through tsx and Node's module loaders, loading the stack's ~1,800 modules (ours, the AWS SDK,
 * zod, puppeteer, the emulators) took about 1.4 s of one core before the port was bound; one
 * bundle loads in about a third of that. Plain JavaScript, because it runs before anything can
 * compile TypeScript.
 *
 * The bundle lives in node_modules/.cache/pdf-render-service/start/<key>/, with the renderer's
 * templating worker and the API's parse worker beside it (as the Lambda bundles carry theirs,
 * lib/service-function.ts). Its key is the content of every source file it was built from, the
 * size and modification time of every bundled file from node_modules, package-lock.json, and this
 * file: a start whose sources differ from the last build's builds again first (a few seconds), so
 * a stale build never runs.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The repository root: bin/, lib/, functions/ and node_modules/. */
export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * What is built: `npm start`'s bin/local.ts (the default), or another entry that starts the stack
 * the same way (the tests' stack processes, test/helpers/stack-process.ts), each in a cache
 * directory of its own.
 * @typedef {object} BundleTarget
 * @property {string} name the cache directory's name
 * @property {string} entry the source entry, relative to the root
 * @property {string} out the bundle's name, without `.mjs`
 */

/** @type {BundleTarget} The source entry, as `npm start` ran it through tsx before. */
export const START = { name: 'start', entry: 'bin/local.ts', out: 'local' };

/** @type {BundleTarget} The admin command (`npm run admin`), as it ran through tsx before. */
export const ADMIN = { name: 'admin', entry: 'bin/admin.ts', out: 'admin' };

/** @type {BundleTarget} The token command (`npm run token`), as it ran through tsx before. */
export const TOKEN = { name: 'token', entry: 'bin/token.ts', out: 'token' };

/**
 * Worker threads' scripts, bundled beside the entry's bundle under the names the pools look for
 * there (functions/renderer/templating-pool.ts, functions/templating/parse-pool.ts).
 */
const WORKERS = {
  'templating-worker.cjs': 'functions/renderer/templating-worker.ts',
  'parse-worker.cjs': 'functions/templating/parse-worker.ts',
};

/**
 * Left to Node at run time, from node_modules: packages that find files beside their own (the
 * Chromium binary of @sparticuz/chromium, classic-level's native module), load their parts by
 * computed names (dynalite's actions), or are native themselves (esbuild, for the dashboard's
 * build on its first request).
 */
const EXTERNAL = ['@sparticuz/chromium', 'classic-level', 'dynalite', 'esbuild'];

/** Lets bundled CommonJS dependencies `require` Node's built-ins from the ES module bundle. */
const ESM_REQUIRE_BANNER =
  "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

/**
 * Gives the CommonJS worker bundles a working `import.meta.url` (esbuild would leave it empty), as
 * lib/service-function.ts does for the Lambdas' workers. Used with the define below.
 */
const CJS_IMPORT_META_URL_BANNER =
  "const __import_meta_url = require('node:url').pathToFileURL(__filename).href;";

/** Builds kept besides the newest: a stack still running keeps starting workers from its own. */
const KEPT_BUILDS = 3;

/**
 * @typedef {object} Manifest
 * @property {string} key
 * @property {Record<string, string>} sources source file (relative to the root) → sha256 of its content
 * @property {Record<string, string>} packages bundled file from node_modules → `size:mtimeMs`
 */

/**
 * @param {string} root
 * @param {BundleTarget} target
 */
const cacheDir = (root, target) => join(root, 'node_modules', '.cache', 'pdf-render-service', target.name);

/** @param {string | Buffer} data */
const sha256 = (data) => createHash('sha256').update(data).digest('hex');

/** @param {string} file */
const statKey = (file) => {
  const s = statSync(file);
  return `${s.size}:${s.mtimeMs}`;
};

/**
 * What the key covers besides the inputs: how they are built (this file, esbuild's version, the
 * compiler and package settings) and which packages are installed (package-lock.json).
 * @param {string} root
 */
const settingsDigest = (root) => {
  const parts = [
    fileURLToPath(import.meta.url),
    ...['package.json', 'package-lock.json', 'tsconfig.json'].map((f) => join(root, f)),
  ]
    .map((f) => (existsSync(f) ? sha256(readFileSync(f)) : '-'))
    .join(',');
  const esbuildPackage = join(root, 'node_modules', 'esbuild', 'package.json');
  const esbuildVersion = existsSync(esbuildPackage)
    ? JSON.parse(readFileSync(esbuildPackage, 'utf8')).version
    : '-';
  return `${parts},esbuild ${esbuildVersion},node ${process.versions.node.split('.')[0]},${root}`;
};

/**
 * @param {string} root
 * @param {Pick<Manifest, 'sources' | 'packages'>} inputs
 */
const keyOf = (root, inputs) =>
  sha256(
    JSON.stringify([
      settingsDigest(root),
      Object.entries(inputs.sources).sort(),
      Object.entries(inputs.packages).sort(),
    ]),
  ).slice(0, 16);

/**
 * The current content of the inputs a manifest lists, or undefined when one is gone (or cannot be
 * read: a build from it would not be this build).
 * @param {string} root
 * @param {Manifest} manifest
 * @returns {Pick<Manifest, 'sources' | 'packages'> | undefined}
 */
const currentInputs = (root, manifest) => {
  try {
    /** @type {Record<string, string>} */
    const sources = {};
    for (const file of Object.keys(manifest.sources)) sources[file] = sha256(readFileSync(join(root, file)));
    /** @type {Record<string, string>} */
    const packages = {};
    for (const file of Object.keys(manifest.packages)) packages[file] = statKey(join(root, file));
    return { sources, packages };
  } catch {
    return undefined;
  }
};

/**
 * The last build's entry when its inputs are as they were; else why not.
 * @param {string} [root]
 * @param {BundleTarget} [target]
 * @returns {{ entry: string } | { stale: 'no build yet' | 'sources changed' }}
 */
export const freshBuild = (root = PROJECT_ROOT, target = START) => {
  let manifest;
  try {
    manifest = /** @type {Manifest} */ (
      JSON.parse(readFileSync(join(cacheDir(root, target), 'current.json'), 'utf8'))
    );
  } catch {
    return { stale: 'no build yet' };
  }
  const entry = join(cacheDir(root, target), manifest.key, `${target.out}.mjs`);
  if (!existsSync(entry)) return { stale: 'no build yet' };
  const inputs = currentInputs(root, manifest);
  return inputs && keyOf(root, inputs) === manifest.key ? { entry } : { stale: 'sources changed' };
};

/**
 * `import.meta.url` of lib/ and bin/ code stays its source file's: it finds the project's files
 * from there (local-renderer.ts the fonts, the dashboard its site). functions/ code is written to
 * be bundled, as in its Lambda, and finds its workers beside the bundle. Every source file's
 * content is hashed as esbuild reads it, so that the key is of what was built.
 * @param {string} root
 * @param {Record<string, string>} sources
 * @returns {import('esbuild').Plugin}
 */
const sourcesPlugin = (root, sources) => ({
  name: 'local-sources',
  setup(build) {
    build.onLoad({ filter: /\.(ts|tsx|mts|cts|js|mjs|cjs|json)$/ }, (args) => {
      const file = relative(root, args.path);
      if (file.startsWith('..') || file.split(sep).includes('node_modules')) return undefined;
      const text = readFileSync(args.path);
      sources[file.split(sep).join('/')] = sha256(text);
      const extension = /** @type {string} */ (/\.([a-z]+)$/.exec(args.path)?.[1]);
      /** @type {import('esbuild').Loader} */
      const loader =
        extension === 'json' ? 'json' : extension === 'tsx' ? 'tsx' : /ts$/.test(extension) ? 'ts' : 'js';
      let contents = text.toString('utf8');
      if (!file.startsWith(`functions${sep}`) && contents.includes('import.meta.url')) {
        contents = contents.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href));
      }
      return { contents, loader };
    });
  },
});

/**
 * Builds the bundle and its workers and makes it the current build.
 * @param {string} [root]
 * @param {BundleTarget} [target]
 * @returns {Promise<string>} the entry to import
 */
export const buildStartBundle = async (root = PROJECT_ROOT, target = START) => {
  const { build } = await import('esbuild');
  const dir = cacheDir(root, target);
  mkdirSync(dir, { recursive: true });
  const staging = join(dir, `.building-${process.pid}-${randomBytes(4).toString('hex')}`);
  /** @type {Record<string, string>} */
  const sources = {};
  /** @type {import('esbuild').BuildOptions} */
  const common = {
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    target: 'node22',
    // ES builds first: a UMD main (jsonc-parser's) requires its parts at run time, which no bundle holds.
    mainFields: ['module', 'main'],
    external: EXTERNAL,
    sourcemap: true,
    sourcesContent: false,
    metafile: true,
    logLevel: 'error',
    plugins: [sourcesPlugin(root, sources)],
  };
  try {
    const results = await Promise.all([
      build({
        ...common,
        entryPoints: { [target.out]: join(root, target.entry) },
        outdir: staging,
        format: 'esm',
        // The dashboard's build, the tracer and the rest loaded on demand stay chunks of their own.
        splitting: true,
        outExtension: { '.js': '.mjs' },
        banner: { js: ESM_REQUIRE_BANNER },
      }),
      ...Object.entries(WORKERS).map(([outfile, entry]) =>
        build({
          ...common,
          entryPoints: [join(root, entry)],
          outfile: join(staging, outfile),
          format: 'cjs',
          banner: { js: CJS_IMPORT_META_URL_BANNER },
          define: { 'import.meta.url': '__import_meta_url' },
        }),
      ),
    ]);
    /** @type {Record<string, string>} */
    const packages = {};
    for (const result of results) {
      for (const input of Object.keys(result.metafile?.inputs ?? {})) {
        const file = relative(root, resolve(root, input)).split(sep).join('/');
        if (file.split('/').includes('node_modules')) packages[file] = statKey(join(root, file));
      }
    }
    const key = keyOf(root, { sources, packages });
    const built = join(dir, key);
    try {
      renameSync(staging, built);
    } catch (e) {
      // Another start built the same sources meanwhile: its build is this one.
      if (!existsSync(join(built, `${target.out}.mjs`))) throw e;
      rmSync(staging, { recursive: true, force: true });
    }
    /** @type {Manifest} */
    const manifest = { key, sources, packages };
    const pointer = join(dir, `.current-${process.pid}-${randomBytes(4).toString('hex')}.json`);
    writeFileSync(pointer, `${JSON.stringify(manifest)}\n`);
    renameSync(pointer, join(dir, 'current.json'));
    pruneBuilds(dir, key);
    return join(built, `${target.out}.mjs`);
  } catch (e) {
    rmSync(staging, { recursive: true, force: true });
    throw e;
  }
};

/**
 * The current build's entry: the last build when its inputs are as they were, else a new one.
 * @param {string} [root]
 * @param {BundleTarget} [target]
 * @returns {Promise<string>}
 */
export const currentBuild = async (root = PROJECT_ROOT, target = START) => {
  const fresh = freshBuild(root, target);
  return 'entry' in fresh ? fresh.entry : buildStartBundle(root, target);
};

/**
 * @param {string} dir
 * @param {string} current
 */
const pruneBuilds = (dir, current) => {
  const hourAgo = Date.now() - 3600_000;
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    // Left by a start that was killed while it built.
    if (d.name.startsWith('.') && statSync(join(dir, d.name)).mtimeMs < hourAgo) {
      rmSync(join(dir, d.name), { recursive: true, force: true });
    }
  }
  const builds = readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && /^[0-9a-f]{16}$/.test(d.name) && d.name !== current)
    .map((d) => ({ name: d.name, at: statSync(join(dir, d.name)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const old of builds.slice(KEPT_BUILDS)) rmSync(join(dir, old.name), { recursive: true, force: true });
};

/**
 * Runs a bin/ entry from its bundle, built first when there is none yet or a source changed since
 * the last build; through tsx when the build fails (a read-only node_modules, a source esbuild
 * refuses), saying why. `npm start` (bin/start.mjs) and `npm run admin` (bin/admin.mjs): through
 * tsx, the admin command took 3.5 s of one core per call, most of it loading the stack's sources.
 * @param {BundleTarget} target
 * @param {() => Promise<unknown>} throughTsx imports the source entry with tsx registered
 * @param {string} what how a build names the entry on stderr
 */
export const runBundled = async (target, throughTsx, what = target.entry) => {
  const fresh = freshBuild(PROJECT_ROOT, target);
  let entry;
  if ('entry' in fresh) {
    entry = fresh.entry;
  } else {
    const started = performance.now();
    process.stderr.write(`${what}: building ${target.entry} (${fresh.stale}) ...\n`);
    try {
      entry = await buildStartBundle(PROJECT_ROOT, target);
      process.stderr.write(`${what}: built in ${Math.round(performance.now() - started)} ms\n`);
    } catch (e) {
      process.stderr.write(
        `${what}: the build failed (${e instanceof Error ? e.message : String(e)}); running ${target.entry} through tsx\n`,
      );
    }
  }
  if (entry) {
    // V8's code for the bundle, kept beside it from the first run on: compiling its 8 MB again at
    // every start was about 130 ms of the 450 ms before the port was bound. Node 22.1 and later.
    const nodeModule = await import('node:module');
    nodeModule.enableCompileCache?.(join(dirname(entry), '.compile-cache'));
    await import(entry);
  } else {
    const { register } = await import('tsx/esm/api');
    register();
    await throughTsx();
  }
};
