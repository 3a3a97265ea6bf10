/**
 * The Chromium layer: its pins agree with package.json and node_modules, it ships what Node loads
 * from @sparticuz/chromium and nothing else, and the renderer bundle leaves out exactly what the
 * layer provides (except packages it must import itself).
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assembleLayer,
  bundleExternals,
  ChromiumLayerError,
  checkLayerPin,
  type LayerPackage,
  resolveLayerPackages,
} from '../../lib/chromium-layer.js';
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
    assembleLayer(packages, out);
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

  it('is laid out as nodejs/node_modules, with the Chromium archives and without typings or source maps', () => {
    const chromium = join(out, 'nodejs', 'node_modules', '@sparticuz', 'chromium');
    expect(readJson(join(chromium, 'package.json')).version).toBe(
      checkLayerPin(PROJECT_ROOT, LAYER_DIR).chromiumVersion,
    );
    for (const archive of ['chromium.br', 'al2023.tar.br', 'fonts.tar.br', 'swiftshader.tar.br']) {
      expect(existsSync(join(chromium, 'bin', archive)), archive).toBe(true);
    }
    expect(existsSync(join(chromium, 'build', 'cjs', 'index.cjs'))).toBe(true);
    expect(existsSync(join(chromium, 'build', 'cjs', 'index.d.ts'))).toBe(false);
    expect(existsSync(join(chromium, 'README.md'))).toBe(false);
    expect(existsSync(join(chromium, 'LICENSE'))).toBe(true);
    for (const pkg of packages) {
      expect(existsSync(join(out, 'nodejs', 'node_modules', pkg.name, 'package.json')), pkg.name).toBe(true);
    }
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
