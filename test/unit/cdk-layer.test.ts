/**
 * The Chromium layer: its pins agree with package.json and node_modules, it ships what Node loads
 * from @sparticuz/chromium and nothing else, with the fonts, their licenses and fonts.conf in
 * fonts/, within Lambda's size limit, and the renderer bundle leaves out exactly what the layer
 * provides (except packages it must import itself).
 */
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PACK } from '../../functions/wiring.js';
import {
  assembleLayer,
  bundleExternals,
  ChromiumLayerError,
  checkLayerPin,
  chromiumPackCache,
  LAMBDA_UNZIPPED_LIMIT_BYTES,
  type LayerPackage,
  resolveLayerPackages,
} from '../../lib/chromium-layer.js';
import { SPARTICUZ_ARCHIVES } from '../../lib/chromium-pack.js';
import {
  LAYER_FONTCONFIG_FILE,
  LAYER_FONTS,
  LayerFontsError,
  localFontconfigFile,
  resolveLayerFonts,
} from '../../lib/layer-fonts.js';
import { handlerEntry, PROJECT_ROOT } from '../../lib/service-function.js';

const LAYER_DIR = join(PROJECT_ROOT, 'layers', 'chromium');
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

describe('the layer pin', () => {
  it('pins @sparticuz/chromium and puppeteer-core exactly, as package.json and node_modules do', () => {
    const pin = checkLayerPin(PROJECT_ROOT, LAYER_DIR);
    const root = readJson(join(PROJECT_ROOT, 'package.json'));
    expect(pin.chromiumVersion).toBe(root.dependencies['@sparticuz/chromium']);
    expect(pin.puppeteerCoreVersion).toBe(root.dependencies['puppeteer-core']);
    expect(pin.chromiumVersion).toMatch(/^\d+\.\d+\.\d+$/);
  });

  describe('against a project whose pins disagree', () => {
    let project: string;
    const withRootPins = (chromium: string, puppeteer: string) => {
      const root = readJson(join(PROJECT_ROOT, 'package.json'));
      root.dependencies['@sparticuz/chromium'] = chromium;
      root.dependencies['puppeteer-core'] = puppeteer;
      writeFileSync(join(project, 'package.json'), JSON.stringify(root));
    };

    beforeAll(() => {
      project = mkdtempSync(join(tmpdir(), 'cdk-layer-pin-'));
      symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(project, 'node_modules'));
      cpSync(LAYER_DIR, join(project, 'layers', 'chromium'), { recursive: true });
    });
    afterAll(() => rmSync(project, { recursive: true, force: true }));

    it('refuses a root package.json that pins another Chromium', () => {
      const pin = checkLayerPin(PROJECT_ROOT, LAYER_DIR);
      withRootPins('143.0.3', pin.puppeteerCoreVersion);
      expect(() => checkLayerPin(project, join(project, 'layers', 'chromium'))).toThrow(
        /change both together/,
      );
    });

    it('refuses a range instead of an exact version', () => {
      const pin = checkLayerPin(PROJECT_ROOT, LAYER_DIR);
      withRootPins(`^${pin.chromiumVersion}`, pin.puppeteerCoreVersion);
      expect(() => checkLayerPin(project, join(project, 'layers', 'chromium'))).toThrow(ChromiumLayerError);
    });
  });
});

describe('the layer contents', () => {
  let packages: LayerPackage[];
  let out: string;

  beforeAll(() => {
    packages = resolveLayerPackages(PROJECT_ROOT);
    out = mkdtempSync(join(tmpdir(), 'cdk-layer-'));
    assembleLayer(packages, resolveLayerFonts(PROJECT_ROOT), out, chromiumPackCache(PROJECT_ROOT));
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('holds @sparticuz/chromium with the runtime dependencies Node loads, and not puppeteer-core', () => {
    const names = packages.map((p) => p.name);
    expect(names).toContain('@sparticuz/chromium');
    expect(names).toEqual(expect.arrayContaining(['follow-redirects', 'tar-fs']));
    // Bundled into the renderer instead.
    expect(names).not.toContain('puppeteer-core');
    // Declared by tar-stream for the Bare runtime; Node never loads them.
    expect(names.filter((n) => n.startsWith('bare-'))).toEqual([]);
    // follow-redirects' optional peer: the application's to provide.
    expect(names).not.toContain('debug');
  });

  it('is laid out as nodejs/node_modules, without the brotli archives, typings or source maps', () => {
    const chromium = join(out, 'nodejs', 'node_modules', '@sparticuz', 'chromium');
    expect(readJson(join(chromium, 'package.json')).version).toBe(
      checkLayerPin(PROJECT_ROOT, LAYER_DIR).chromiumVersion,
    );
    // The pack replaces them: nothing in the layer is brotli that a launch would inflate.
    for (const archive of SPARTICUZ_ARCHIVES) {
      expect(existsSync(join(chromium, 'bin', archive)), archive).toBe(false);
    }
    expect(existsSync(join(chromium, 'build', 'cjs', 'index.cjs'))).toBe(true);
    expect(existsSync(join(chromium, 'build', 'cjs', 'index.d.ts'))).toBe(false);
    expect(existsSync(join(chromium, 'README.md'))).toBe(false);
    expect(existsSync(join(chromium, 'LICENSE'))).toBe(true);
    for (const pkg of packages) {
      expect(existsSync(join(out, 'nodejs', 'node_modules', pkg.name, 'package.json')), pkg.name).toBe(true);
    }
  });

  it('holds Chromium unpacked in chromium/: the binary as the brotli one inflates, executable, SwiftShader beside it, the rest unpacked', () => {
    const pack = join(out, CHROMIUM_PACK.dir);
    const binary = join(pack, CHROMIUM_PACK.binary);
    const br = readFileSync(
      join(PROJECT_ROOT, 'node_modules', '@sparticuz', 'chromium', 'bin', 'chromium.br'),
    );
    expect(readFileSync(binary).equals(brotliDecompressSync(br))).toBe(true);
    expect(statSync(binary).mode & 0o111).toBe(0o111);
    expect(existsSync(join(pack, CHROMIUM_PACK.lib, 'libnss3.so'))).toBe(true);
    expect(existsSync(join(pack, 'libGLESv2.so'))).toBe(true);
    expect(existsSync(join(pack, CHROMIUM_PACK.fonts, 'fonts.conf'))).toBe(true);
  });

  it("fits Lambda's 250 MiB: the layer unzipped with the renderer's bundle (11.1 MiB measured)", () => {
    const sizeOf = (path: string): number => {
      const st = lstatSync(path);
      if (!st.isDirectory()) return st.size;
      return readdirSync(path).reduce((sum, entry) => sum + sizeOf(join(path, entry)), 0);
    };
    // The renderer's code as synthesized (index.js, the templating worker, their source maps):
    // 11.1 MiB measured; bundle-smoke.test.ts checks the two as synthesized.
    const rendererBundleAtMost = 13 * 1024 * 1024;
    const layer = sizeOf(out);
    console.info(
      `layer ${(layer / 2 ** 20).toFixed(1)} MiB unzipped, of which fonts ${(sizeOf(join(out, 'fonts')) / 2 ** 20).toFixed(1)} MiB`,
    );
    expect(layer + rendererBundleAtMost).toBeLessThanOrEqual(LAMBDA_UNZIPPED_LIMIT_BYTES);
    // The fetched fonts are what made it fit: with them it would not.
    const fetched = resolveLayerFonts(PROJECT_ROOT).fetchedFiles.reduce(
      (n, f) => n + statSync(f.source).size,
      0,
    );
    expect(layer + fetched).toBeGreaterThan(LAMBDA_UNZIPPED_LIMIT_BYTES);
  });

  it('holds the fonts in fonts/ (/opt/fonts in Lambda): a regular and a bold face per script, fonts.conf and the licenses', () => {
    const fonts = join(out, 'fonts');
    expect(LAYER_FONTCONFIG_FILE).toBe('/opt/fonts/fonts.conf');
    expect(readFileSync(join(fonts, 'fonts.conf'), 'utf8')).toBe(
      readFileSync(join(LAYER_DIR, 'fonts.conf'), 'utf8'),
    );
    const ttfs = readdirSync(fonts).filter((f) => f.endsWith('.ttf'));
    const inLayer = LAYER_FONTS.filter((f) => !f.fetched);
    expect(ttfs).toHaveLength(inLayer.reduce((n, f) => n + f.faces.length, 0));
    // The CJK fonts are fetched on first need (functions/renderer/fetched-fonts.ts), not in the layer.
    expect(LAYER_FONTS.filter((f) => f.fetched).map((f) => f.family)).toEqual([
      'Noto Sans SC',
      'Noto Sans TC',
      'Noto Sans JP',
      'Noto Sans KR',
    ]);
    for (const ttf of ttfs) expect(ttf).not.toMatch(/^NotoSans(SC|TC|JP|KR)_/);
    for (const font of inLayer) {
      const file = font.family.replace(/ /g, '');
      expect(ttfs, font.family).toContain(`${file}_400Regular.ttf`);
      // Color emoji come in one face; everything else has its bold.
      if (font.family !== 'Noto Color Emoji') expect(ttfs, font.family).toContain(`${file}_700Bold.ttf`);
      const license = readFileSync(join(fonts, 'licenses', `${font.packageName.split('/')[1]}.txt`), 'utf8');
      expect(license, font.packageName).toContain('SIL OPEN FONT LICENSE Version 1.1');
    }
    // Copies, not links into node_modules: the layer is a zip of real files.
    for (const ttf of ttfs) expect(lstatSync(join(fonts, ttf)).isFile()).toBe(true);
  });

  it('lets the renderer bundle leave out the layer packages it requires, and keep those it import()s', () => {
    const externals = bundleExternals(
      PROJECT_ROOT,
      handlerEntry('renderer'),
      packages.map((p) => p.name),
    );
    expect(externals).toContain('@sparticuz/chromium');
    // @puppeteer/browsers loads tar-fs with import(), which NODE_PATH cannot serve.
    expect(externals).not.toContain('tar-fs');
    expect(externals.every((name) => packages.some((p) => p.name === name))).toBe(true);
  });
});

describe('the layer fonts', () => {
  let project: string;
  const withPin = (file: string, name: string, version: string) => {
    const json = readJson(file);
    json.dependencies[name] = version;
    writeFileSync(file, JSON.stringify(json));
  };

  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), 'cdk-layer-fonts-'));
    symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(project, 'node_modules'));
    cpSync(join(PROJECT_ROOT, 'package.json'), join(project, 'package.json'));
    cpSync(LAYER_DIR, join(project, 'layers', 'chromium'), { recursive: true });
  });
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it('are pinned exactly and alike in package.json and layers/chromium/package.json, as installed', () => {
    const root = readJson(join(PROJECT_ROOT, 'package.json'));
    const layer = readJson(join(LAYER_DIR, 'package.json'));
    for (const font of LAYER_FONTS) {
      expect(layer.dependencies[font.packageName], font.packageName).toMatch(/^\d+\.\d+\.\d+$/);
      expect(root.dependencies[font.packageName], font.packageName).toBe(
        layer.dependencies[font.packageName],
      );
    }
    expect(resolveLayerFonts(PROJECT_ROOT).files.length).toBeGreaterThan(LAYER_FONTS.length);
  });

  it('refuses a range, a pin that differs between the two, and a version that is not installed', () => {
    const rootFile = join(project, 'package.json');
    const layerFile = join(project, 'layers', 'chromium', 'package.json');
    const name = '@expo-google-fonts/noto-sans-jp';
    const pinned = readJson(layerFile).dependencies[name];
    withPin(rootFile, name, `^${pinned}`);
    expect(() => resolveLayerFonts(project)).toThrow(LayerFontsError);
    withPin(rootFile, name, '0.0.1');
    expect(() => resolveLayerFonts(project)).toThrow(/pinned to one exact version/);
    withPin(layerFile, name, '0.0.1');
    expect(() => resolveLayerFonts(project)).toThrow(/node_modules has @expo-google-fonts\/noto-sans-jp@/);
    withPin(rootFile, name, pinned);
    withPin(layerFile, name, pinned);
    expect(() => resolveLayerFonts(project)).not.toThrow();
  });

  it('are linked, not copied, for the local stack, at a path that stays while the fonts do', () => {
    const conf = localFontconfigFile(PROJECT_ROOT);
    expect(conf).toBe(localFontconfigFile(PROJECT_ROOT));
    expect(conf.startsWith(join(PROJECT_ROOT, 'node_modules', '.cache'))).toBe(true);
    expect(readFileSync(conf, 'utf8')).toBe(readFileSync(join(LAYER_DIR, 'fonts.conf'), 'utf8'));
    const dir = join(conf, '..');
    const ttfs = readdirSync(dir).filter((f) => f.endsWith('.ttf'));
    const all = resolveLayerFonts(PROJECT_ROOT);
    // The local stack has every font at hand, the fetched ones too.
    expect(ttfs.length).toBe(all.files.length + all.fetchedFiles.length);
    for (const ttf of ttfs) expect(lstatSync(join(dir, ttf)).isSymbolicLink()).toBe(true);
  });
});
