/**
 * The renderer's Chromium layer, built offline from the packages `npm install` already put in
 * node_modules: @sparticuz/chromium (pinned exactly in layers/chromium/package.json) and the
 * packages Node loads from it, laid out as `nodejs/node_modules/...`, where Lambda's Node.js
 * runtimes resolve layer packages from (NODE_PATH), and the fonts Chromium prints with in
 * `fonts/` (lib/layer-fonts.ts). No Docker and no network: synth copies files.
 *
 * Before anything is built, the pins are checked against each other and against what is
 * installed, so a layer whose Chromium does not match the bundled puppeteer-core never deploys.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import { Architecture, Code, LayerVersion, type Runtime } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { buildSync, type Metafile } from 'esbuild';
import { CHROMIUM_PACK } from '../functions/wiring.js';
import {
  assembleChromiumPack,
  CHROMIUM_PACK_LAYOUT,
  LAYER_CHROMIUM_PACK_DIR,
  SPARTICUZ_ARCHIVES,
} from './chromium-pack.js';
import {
  assembleFonts,
  type FontSet,
  LAYER_FONTCONFIG_FILE,
  LAYER_FONTS_DIR,
  resolveLayerFonts,
} from './layer-fonts.js';

const CHROMIUM_PACKAGE = '@sparticuz/chromium';
const PUPPETEER_PACKAGE = 'puppeteer-core';

export class ChromiumLayerError extends Error {
  constructor(message: string) {
    super(`Chromium layer: ${message}`);
    this.name = 'ChromiumLayerError';
  }
}

interface PackageJson {
  readonly name: string;
  readonly version: string;
  readonly main?: string;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly peerDependenciesMeta?: Readonly<Record<string, { readonly optional?: boolean }>>;
}

const readPackageJson = (file: string): PackageJson => JSON.parse(readFileSync(file, 'utf8')) as PackageJson;

const EXACT_VERSION = /^\d+\.\d+\.\d+$/;

export interface LayerPin {
  /** The exact @sparticuz/chromium version the layer ships. */
  readonly chromiumVersion: string;
  /** The exact puppeteer-core version that Chromium was released for (bundled into the renderer). */
  readonly puppeteerCoreVersion: string;
}

/**
 * Checks that layers/chromium/package.json, the root package.json and node_modules agree, and
 * that puppeteer-core drives the Chromium major the layer ships. Throws with what to fix.
 */
export const checkLayerPin = (projectRoot: string, layerDir: string): LayerPin => {
  const layer = readPackageJson(join(layerDir, 'package.json'));
  const root = readPackageJson(join(projectRoot, 'package.json'));
  const pinned = (
    pkg: PackageJson,
    name: string,
    where: string,
    field: 'dependencies' | 'peerDependencies',
  ) => {
    const v = pkg[field]?.[name];
    if (v === undefined || !EXACT_VERSION.test(v)) {
      throw new ChromiumLayerError(`${where} must pin ${name} to an exact version in ${field}, found "${v}"`);
    }
    return v;
  };
  const chromiumVersion = pinned(layer, CHROMIUM_PACKAGE, 'layers/chromium/package.json', 'dependencies');
  const puppeteerCoreVersion = pinned(
    layer,
    PUPPETEER_PACKAGE,
    'layers/chromium/package.json',
    'peerDependencies',
  );
  const rootChromium = pinned(root, CHROMIUM_PACKAGE, 'package.json', 'dependencies');
  const rootPuppeteer = pinned(root, PUPPETEER_PACKAGE, 'package.json', 'dependencies');
  if (rootChromium !== chromiumVersion || rootPuppeteer !== puppeteerCoreVersion) {
    throw new ChromiumLayerError(
      `package.json pins ${CHROMIUM_PACKAGE}@${rootChromium} and ${PUPPETEER_PACKAGE}@${rootPuppeteer}, ` +
        `layers/chromium/package.json pins ${chromiumVersion} and ${puppeteerCoreVersion}: change both together`,
    );
  }
  for (const [name, want] of [
    [CHROMIUM_PACKAGE, chromiumVersion],
    [PUPPETEER_PACKAGE, puppeteerCoreVersion],
  ] as const) {
    const file = join(projectRoot, 'node_modules', name, 'package.json');
    const installed = existsSync(file) ? readPackageJson(file).version : 'nothing';
    if (installed !== want) {
      throw new ChromiumLayerError(
        `node_modules has ${name}@${installed}, the pin is ${want}: run npm install`,
      );
    }
  }
  // puppeteer-core names the browser build it speaks CDP with; @sparticuz/chromium's major is
  // the Chromium major it ships. They must be the same browser generation.
  const revisions = readFileSync(
    join(projectRoot, 'node_modules', PUPPETEER_PACKAGE, 'lib', 'cjs', 'puppeteer', 'revisions.js'),
    'utf8',
  );
  const shell = /'chrome-headless-shell':\s*'(\d+)\./.exec(revisions)?.[1];
  const chromiumMajor = chromiumVersion.split('.')[0];
  if (shell !== chromiumMajor) {
    throw new ChromiumLayerError(
      `${PUPPETEER_PACKAGE}@${puppeteerCoreVersion} drives Chrome ${shell ?? '(unknown)'}, ` +
        `${CHROMIUM_PACKAGE}@${chromiumVersion} ships Chromium ${chromiumMajor}`,
    );
  }
  return { chromiumVersion, puppeteerCoreVersion };
};

export interface LayerPackage {
  readonly name: string;
  readonly version: string;
  /** Where it is installed. */
  readonly dir: string;
}

const PACKAGE_IN_PATH = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//g;

/** The innermost package a resolved file belongs to, and whether it sits in a nested node_modules. */
const packageOf = (file: string): { name: string; nested: boolean } | undefined => {
  const names = [...file.matchAll(PACKAGE_IN_PATH)].map((m) => m[1] as string);
  const name = names.at(-1);
  return name === undefined ? undefined : { name, nested: names.length > 1 };
};

/** Every installed copy of `names` anywhere under node_modules, nested ones included. */
const installedCopies = (projectRoot: string, names: ReadonlySet<string>): Map<string, Set<string>> => {
  const copies = new Map<string, Set<string>>();
  const walk = (modulesDir: string): void => {
    if (!existsSync(modulesDir)) return;
    for (const entry of readdirSync(modulesDir)) {
      const dirs = entry.startsWith('@')
        ? readdirSync(join(modulesDir, entry)).map(
            (sub) => [`${entry}/${sub}`, join(modulesDir, entry, sub)] as const,
          )
        : [[entry, join(modulesDir, entry)] as const];
      for (const [name, dir] of dirs) {
        const manifest = join(dir, 'package.json');
        if (names.has(name) && existsSync(manifest)) {
          const versions = copies.get(name) ?? new Set<string>();
          versions.add(readPackageJson(manifest).version);
          copies.set(name, versions);
        }
        walk(join(dir, 'node_modules'));
      }
    }
  };
  walk(join(projectRoot, 'node_modules'));
  return copies;
};

/**
 * esbuild's analyses of this process, by their inputs: each bundles the renderer's or Chromium's
 * whole dependency tree (a second or two of CPU), and a process that synthesizes several apps (the
 * template tests, dozens of configurations) asks the same two questions of the same installed
 * files every time. Callers only read a metafile.
 */
const analyses = new Map<string, Metafile>();

const analyse = (projectRoot: string, entryPoints: string[], external: readonly string[]): Metafile => {
  const key = JSON.stringify([projectRoot, entryPoints, external]);
  const known = analyses.get(key);
  if (known) return known;
  const metafile = analyseAfresh(projectRoot, entryPoints, external);
  analyses.set(key, metafile);
  return metafile;
};

const analyseAfresh = (projectRoot: string, entryPoints: string[], external: readonly string[]) => {
  const { metafile, errors } = buildSync({
    entryPoints,
    absWorkingDir: projectRoot,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    external: [...external],
    write: false,
    metafile: true,
    outdir: 'analysis',
    logLevel: 'silent',
  });
  if (errors.length > 0 || !metafile) {
    throw new ChromiumLayerError(`cannot resolve ${entryPoints.join(', ')}: ${errors[0]?.text}`);
  }
  return metafile;
};

/**
 * The packages Node loads when the renderer requires @sparticuz/chromium: esbuild resolves its
 * CommonJS entry the way Node does (default conditions: the Bare-runtime packages that its
 * dependencies declare but Node never loads stay out) and reports every file it reached. Optional
 * peers (follow-redirects' `debug`) are the application's to provide, so they stay out too.
 *
 * The renderer bundle leaves these packages external, so each must be the only installed version:
 * otherwise a bundled dependency could silently get another version from the layer at run time.
 */
export const resolveLayerPackages = (projectRoot: string): LayerPackage[] => {
  const chromiumDir = join(projectRoot, 'node_modules', CHROMIUM_PACKAGE);
  const main = readPackageJson(join(chromiumDir, 'package.json')).main;
  if (!main) throw new ChromiumLayerError(`${CHROMIUM_PACKAGE} has no CommonJS entry (main)`);
  let optionalPeers: string[] = [];
  let names = new Set<string>();
  // Excluding an optional peer can only shrink the set, so this settles in a pass or two.
  for (let pass = 0; pass < 5; pass++) {
    const metafile = analyse(projectRoot, [join(chromiumDir, main)], optionalPeers);
    names = new Set<string>();
    for (const file of Object.keys(metafile.inputs)) {
      const pkg = packageOf(file);
      if (!pkg) continue;
      if (pkg.nested) {
        throw new ChromiumLayerError(
          `${file} is a nested copy; the layer's node_modules is flat: dedupe node_modules`,
        );
      }
      names.add(pkg.name);
    }
    const manifests = [...names].map((name) =>
      readPackageJson(join(projectRoot, 'node_modules', name, 'package.json')),
    );
    const required = new Set(manifests.flatMap((m) => Object.keys(m.dependencies ?? {})));
    const next = manifests
      .flatMap((m) => Object.entries(m.peerDependenciesMeta ?? {}).filter(([, meta]) => meta.optional))
      .map(([name]) => name)
      .filter((name) => !required.has(name))
      .sort();
    if (next.join() === optionalPeers.join()) break;
    optionalPeers = next;
  }
  for (const [name, versions] of installedCopies(projectRoot, names)) {
    if (versions.size > 1) {
      throw new ChromiumLayerError(
        `${name} is installed in several versions (${[...versions].join(', ')}); the renderer bundle would ` +
          'resolve it from the layer: dedupe node_modules',
      );
    }
  }
  return [...names].sort().map((name) => {
    const dir = join(projectRoot, 'node_modules', name);
    return { name, version: readPackageJson(join(dir, 'package.json')).version, dir };
  });
};

/**
 * Which layer packages a CommonJS bundle of `entry` should leave out. Lambda serves layer
 * packages through NODE_PATH, which `require` honours and `import()` does not (Node's ES module
 * resolver ignores NODE_PATH): a package that the bundled code loads with `import()` (puppeteer
 * does so for `debug`, and @puppeteer/browsers for `tar-fs`) must stay in the bundle.
 */
export const bundleExternals = (
  projectRoot: string,
  entry: string,
  layerPackages: readonly string[],
): string[] => {
  const metafile = analyse(projectRoot, [entry], layerPackages);
  const imported = new Set<string>();
  for (const input of Object.values(metafile.inputs)) {
    for (const edge of input.imports) {
      if (edge.external && edge.kind === 'dynamic-import') imported.add(edge.path);
    }
  }
  const isImported = (name: string) =>
    [...imported].some((path) => path === name || path.startsWith(`${name}/`));
  return layerPackages.filter((name) => !isImported(name));
};

/**
 * Files Node never loads at run time, and @sparticuz/chromium's brotli files (the pack replaces
 * them, lib/chromium-pack.ts). LICENSE files stay: the layer redistributes these packages.
 */
const SHIPPED = (path: string): boolean => {
  const name = basename(path);
  if (path.includes(`${CHROMIUM_PACKAGE}/bin/`) && SPARTICUZ_ARCHIVES.includes(name)) return false;
  if (name === 'node_modules' || name === '.github') return false;
  if (/\.d\.[cm]?ts$|\.[cm]?ts$|\.map$|\.md$|\.markdown$/i.test(name) && !/^licen[cs]e/i.test(name))
    return false;
  return true;
};

/**
 * Lays the packages out as a Lambda Node.js layer, `<outputDir>/nodejs/node_modules/<name>`, the
 * fonts in `<outputDir>/fonts`, and Chromium, unpacked, in `<outputDir>/chromium` (lib/chromium-pack.ts).
 * `cacheDir` keeps the inflated binary between synths.
 */
export const assembleLayer = (
  packages: readonly LayerPackage[],
  fonts: FontSet,
  outputDir: string,
  cacheDir: string,
): void => {
  const modules = join(outputDir, 'nodejs', 'node_modules');
  mkdirSync(modules, { recursive: true });
  for (const pkg of packages) {
    // Without nested node_modules: the layer is flat, and resolveLayerPackages has refused
    // anything that would need a second version.
    cpSync(pkg.dir, join(modules, pkg.name), { recursive: true, dereference: true, filter: SHIPPED });
  }
  assembleFonts(fonts, join(outputDir, LAYER_FONTS_DIR), 'copy');
  const chromium = packages.find((p) => p.name === CHROMIUM_PACKAGE);
  if (!chromium) throw new ChromiumLayerError(`${CHROMIUM_PACKAGE} is not among the layer's packages`);
  assembleChromiumPack(chromium.dir, chromium.version, join(outputDir, CHROMIUM_PACK.dir), cacheDir);
};

/** Where synth keeps the Chromium pack's compressed binary between runs. */
export const chromiumPackCache = (projectRoot: string): string =>
  join(projectRoot, 'node_modules', '.cache', 'pdf-render-service', 'chromium-pack');

/**
 * What Lambda allows a function's code and all its layers to take together, unzipped:
 * 250 MiB. Measured with Chromium unpacked and the CJK fonts left out (issue 42): the layer
 * 231.2 MiB, the renderer's code with its source maps 11.1 MiB.
 */
export const LAMBDA_UNZIPPED_LIMIT_BYTES = 250 * 1024 * 1024;

export interface ChromiumLayerProps {
  /** The repository root: package.json, node_modules and layers/chromium live here. */
  readonly projectRoot: string;
  /** The runtime of the function that uses the layer. */
  readonly runtime: Runtime;
}

/**
 * The Chromium layer. Its architecture is x86_64 because the @sparticuz/chromium npm package
 * ships the x64 build only; the function that uses it must match.
 */
export class ChromiumLayer extends LayerVersion {
  static readonly ARCHITECTURE = Architecture.X86_64;
  /** The fontconfig file Chromium must be pointed at (FONTCONFIG_FILE) to find the layer's fonts. */
  static readonly FONTCONFIG_FILE = LAYER_FONTCONFIG_FILE;
  /** The Chromium pack the renderer must be pointed at (CHROMIUM_PACK_DIR). */
  static readonly CHROMIUM_PACK_DIR = LAYER_CHROMIUM_PACK_DIR;

  /** The packages the layer provides, in `nodejs/node_modules`. */
  readonly packageNames: readonly string[];
  readonly pin: LayerPin;
  private readonly projectRoot: string;

  constructor(scope: Construct, id: string, props: ChromiumLayerProps) {
    const layerDir = join(props.projectRoot, 'layers', 'chromium');
    const pin = checkLayerPin(props.projectRoot, layerDir);
    const packages = resolveLayerPackages(props.projectRoot);
    const fonts = resolveLayerFonts(props.projectRoot);
    // The asset changes exactly when the pin, an installed package version or the fonts change.
    const assetHash = createHash('sha256')
      .update(readFileSync(join(layerDir, 'package.json')))
      .update(packages.map((p) => `${p.name}@${p.version}`).join('\n'))
      .update(fonts.hash)
      // The pack's layout: a change to how it is built changes the asset.
      .update(`chromium-pack ${CHROMIUM_PACK_LAYOUT} ${JSON.stringify(CHROMIUM_PACK)}`)
      .digest('hex');
    super(scope, id, {
      description:
        `@sparticuz/chromium ${pin.chromiumVersion} for puppeteer-core ${pin.puppeteerCoreVersion}, ` +
        `with fonts (Noto, Arimo, Tinos, Cousine; CJK fetched on need) in /opt/fonts and Chromium unpacked in ${LAYER_CHROMIUM_PACK_DIR}`,
      compatibleRuntimes: [props.runtime],
      compatibleArchitectures: [ChromiumLayer.ARCHITECTURE],
      // The fonts are OFL-1.1 (their licenses are in fonts/licenses).
      license: 'MIT AND OFL-1.1',
      code: Code.fromAsset(layerDir, {
        assetHashType: AssetHashType.CUSTOM,
        assetHash,
        bundling: {
          // Never pulled: the local bundler below always succeeds, so Docker is not needed.
          image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs22.x'),
          local: {
            tryBundle(outputDir: string): boolean {
              assembleLayer(packages, fonts, outputDir, chromiumPackCache(props.projectRoot));
              return true;
            },
          },
        },
      }),
    });
    this.pin = pin;
    this.packageNames = packages.map((p) => p.name);
    this.projectRoot = props.projectRoot;
  }

  /**
   * The externals for a CommonJS bundle of `entry` that runs with this layer: the layer's
   * packages, so nothing is shipped twice, except those the bundle loads with `import()`.
   */
  externalsFor(entry: string): string[] {
    return bundleExternals(this.projectRoot, entry, this.packageNames);
  }
}
