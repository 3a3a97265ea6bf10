/**
 * The fonts the renderer's Chromium prints with: Noto for the world's scripts, color emoji, and
 * metric-compatible stand-ins for Arial/Helvetica, Times and Courier. They come from npm packages
 * (Google Fonts' TTFs, as @expo-google-fonts publishes them, OFL-1.1), installed by `npm ci` like
 * everything else, and pinned exactly in package.json and layers/chromium/package.json. One
 * regular and one bold face per script (and italics for the metric-compatible families, whose
 * widths differ from the upright ones); Chromium slants and emboldens the rest.
 *
 * Synth copies them, their licenses and layers/chromium/fonts.conf into the Chromium layer's
 * `fonts/` (/opt/fonts in Lambda, where FONTCONFIG_FILE points); the local stack links the same
 * files into a directory under node_modules/.cache, so both render with the same fonts.
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

export interface LayerFont {
  /** The npm package: its face directories hold the TTFs, LICENSE_FONT their license. */
  readonly packageName: string;
  /** The family name fontconfig and CSS know it by. */
  readonly family: string;
  /** What it is there for. */
  readonly covers: string;
  /** The faces shipped: directories of the package, each holding one `.ttf`. */
  readonly faces: readonly string[];
  /**
   * Left out of the layer (to fit Lambda's 250 MiB with Chromium unpacked, issue 42): uploaded as
   * S3 assets and fetched into /tmp on a page's first need (functions/renderer/fetched-fonts.ts).
   */
  readonly fetched?: true;
}

const REGULAR_BOLD = ['400Regular', '700Bold'] as const;
const WITH_ITALICS = ['400Regular', '400Regular_Italic', '700Bold', '700Bold_Italic'] as const;

export const LAYER_FONTS: readonly LayerFont[] = [
  {
    packageName: '@expo-google-fonts/arimo',
    family: 'Arimo',
    covers: 'Arial, Helvetica and sans-serif (same metrics as Arial); Latin, Greek, Cyrillic, Hebrew',
    faces: WITH_ITALICS,
  },
  {
    packageName: '@expo-google-fonts/tinos',
    family: 'Tinos',
    covers: 'Times New Roman, Times and serif (same metrics as Times New Roman)',
    faces: WITH_ITALICS,
  },
  {
    packageName: '@expo-google-fonts/cousine',
    family: 'Cousine',
    covers: 'Courier New, Courier and monospace (same metrics as Courier New)',
    faces: WITH_ITALICS,
  },
  {
    packageName: '@expo-google-fonts/noto-sans',
    family: 'Noto Sans',
    covers: 'Latin, Greek, Cyrillic and Devanagari beyond the above',
    faces: REGULAR_BOLD,
  },
  {
    packageName: '@expo-google-fonts/noto-sans-arabic',
    family: 'Noto Sans Arabic',
    covers: 'Arabic',
    faces: REGULAR_BOLD,
  },
  {
    packageName: '@expo-google-fonts/noto-sans-hebrew',
    family: 'Noto Sans Hebrew',
    covers: 'Hebrew',
    faces: REGULAR_BOLD,
  },
  {
    packageName: '@expo-google-fonts/noto-sans-devanagari',
    family: 'Noto Sans Devanagari',
    covers: 'Devanagari (Hindi, Marathi, Nepali)',
    faces: REGULAR_BOLD,
  },
  {
    packageName: '@expo-google-fonts/noto-sans-bengali',
    family: 'Noto Sans Bengali',
    covers: 'Bengali',
    faces: REGULAR_BOLD,
  },
  {
    packageName: '@expo-google-fonts/noto-sans-tamil',
    family: 'Noto Sans Tamil',
    covers: 'Tamil',
    faces: REGULAR_BOLD,
  },
  {
    packageName: '@expo-google-fonts/noto-sans-thai',
    family: 'Noto Sans Thai',
    covers: 'Thai',
    faces: REGULAR_BOLD,
  },
  {
    packageName: '@expo-google-fonts/noto-sans-sc',
    family: 'Noto Sans SC',
    covers: 'Simplified Chinese (and Han without a lang)',
    faces: REGULAR_BOLD,
    fetched: true,
  },
  {
    packageName: '@expo-google-fonts/noto-sans-tc',
    family: 'Noto Sans TC',
    covers: 'Traditional Chinese (zh-TW, zh-HK)',
    faces: REGULAR_BOLD,
    fetched: true,
  },
  {
    packageName: '@expo-google-fonts/noto-sans-jp',
    family: 'Noto Sans JP',
    covers: 'Japanese',
    faces: REGULAR_BOLD,
    fetched: true,
  },
  {
    packageName: '@expo-google-fonts/noto-sans-kr',
    family: 'Noto Sans KR',
    covers: 'Korean',
    faces: REGULAR_BOLD,
    fetched: true,
  },
  {
    packageName: '@expo-google-fonts/noto-color-emoji',
    family: 'Noto Color Emoji',
    covers: 'emoji, in color',
    // The only face it has.
    faces: ['400Regular'],
  },
];

/** Where the fonts sit in the layer, and so under /opt in Lambda. */
export const LAYER_FONTS_DIR = 'fonts';
/** The renderer's FONTCONFIG_FILE in Lambda: the layer's fonts.conf. */
export const LAYER_FONTCONFIG_FILE = `/opt/${LAYER_FONTS_DIR}/fonts.conf`;

export class LayerFontsError extends Error {
  constructor(message: string) {
    super(`Layer fonts: ${message}`);
    this.name = 'LayerFontsError';
  }
}

export interface FontFile {
  readonly font: LayerFont;
  readonly version: string;
  /** The installed TTF. */
  readonly source: string;
  /** Its name in the fonts directory. */
  readonly name: string;
}

export interface FontSet {
  /** The fonts in the layer. */
  readonly files: readonly FontFile[];
  /** The fonts fetched on first need (LayerFont.fetched); the local stack links them with the rest. */
  readonly fetchedFiles: readonly FontFile[];
  /** Each package's license, by the file name it gets under `licenses/`. */
  readonly licenses: ReadonlyMap<string, string>;
  /** The fontconfig configuration (layers/chromium/fonts.conf). */
  readonly fontsConf: string;
  /** Changes exactly when a font, a version or fonts.conf changes. */
  readonly hash: string;
}

const readJson = (file: string): { version?: string; dependencies?: Record<string, string> } =>
  JSON.parse(readFileSync(file, 'utf8'));

/**
 * The font files to ship, checked: each package pinned exactly and alike in package.json and
 * layers/chromium/package.json, installed in that version, with each face's TTF and its license.
 */
export const resolveLayerFonts = (projectRoot: string): FontSet => {
  const layerDir = join(projectRoot, 'layers', 'chromium');
  const rootPins = readJson(join(projectRoot, 'package.json')).dependencies ?? {};
  const layerPins = readJson(join(layerDir, 'package.json')).dependencies ?? {};
  const files: FontFile[] = [];
  const licenses = new Map<string, string>();
  for (const font of LAYER_FONTS) {
    const pin = layerPins[font.packageName];
    if (pin === undefined || !/^\d+\.\d+\.\d+$/.test(pin) || rootPins[font.packageName] !== pin) {
      throw new LayerFontsError(
        `${font.packageName} must be pinned to one exact version in the dependencies of both ` +
          `package.json ("${rootPins[font.packageName]}") and layers/chromium/package.json ("${pin}")`,
      );
    }
    const dir = join(projectRoot, 'node_modules', font.packageName);
    const manifest = join(dir, 'package.json');
    const installed = existsSync(manifest) ? readJson(manifest).version : 'nothing';
    if (installed !== pin) {
      throw new LayerFontsError(
        `node_modules has ${font.packageName}@${installed}, the pin is ${pin}: run npm install`,
      );
    }
    for (const face of font.faces) {
      const faceDir = join(dir, face);
      const ttfs = existsSync(faceDir) ? readdirSync(faceDir).filter((f) => f.endsWith('.ttf')) : [];
      if (ttfs.length !== 1) {
        throw new LayerFontsError(
          `${font.packageName} has no single .ttf in ${face}/ (found ${ttfs.length})`,
        );
      }
      const name = ttfs[0] as string;
      files.push({ font, version: pin, source: join(faceDir, name), name });
    }
    const license = join(dir, 'LICENSE_FONT');
    if (!existsSync(license)) throw new LayerFontsError(`${font.packageName} has no LICENSE_FONT`);
    licenses.set(`${font.packageName.split('/').at(-1)}.txt`, license);
  }
  const fontsConf = readFileSync(join(layerDir, 'fonts.conf'), 'utf8');
  const hash = createHash('sha256')
    .update(fontsConf)
    .update(files.map((f) => `${f.font.packageName}@${f.version}/${f.name}`).join('\n'))
    .digest('hex');
  return {
    files: files.filter((f) => !f.font.fetched),
    fetchedFiles: files.filter((f) => f.font.fetched),
    licenses,
    fontsConf,
    hash,
  };
};

/**
 * Writes the fonts directory: fonts.conf, the TTFs and `licenses/`. `copy` for the layer; `link`
 * (symbolic links into node_modules) for the local stack, which saves copying ~90 MB.
 */
export const assembleFonts = (fonts: FontSet, outDir: string, how: 'copy' | 'link'): void => {
  mkdirSync(join(outDir, 'licenses'), { recursive: true });
  writeFileSync(join(outDir, 'fonts.conf'), fonts.fontsConf);
  const place = (source: string, target: string) =>
    how === 'copy' ? copyFileSync(source, target) : symlinkSync(source, target);
  // The layer leaves the fetched fonts out; the local stack has them all at hand.
  const files = how === 'copy' ? fonts.files : [...fonts.files, ...fonts.fetchedFiles];
  for (const file of files) place(file.source, join(outDir, file.name));
  for (const [name, source] of fonts.licenses) place(source, join(outDir, 'licenses', name));
};

/**
 * The local stack's fonts: the layer's set, linked into node_modules/.cache/pdf-render-service/
 * fonts-<hash>/ once, and its fonts.conf (the renderer's FONTCONFIG_FILE). The path stays the same
 * while the fonts do, so fontconfig's cache of it lasts across runs. Stacks that start together
 * (test files) each build in a directory of their own and the first rename wins.
 */
export const localFontconfigFile = (projectRoot: string): string => {
  const fonts = resolveLayerFonts(projectRoot);
  const cache = join(projectRoot, 'node_modules', '.cache', 'pdf-render-service');
  const dir = join(cache, `fonts-${fonts.hash.slice(0, 16)}`);
  const conf = join(dir, 'fonts.conf');
  if (existsSync(conf)) return conf;
  mkdirSync(cache, { recursive: true });
  const building = mkdtempSync(`${dir}.building-`);
  try {
    assembleFonts(fonts, building, 'link');
    renameSync(building, dir);
  } catch (e) {
    if (!existsSync(conf)) throw e;
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return conf;
};
