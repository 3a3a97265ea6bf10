/**
 * The fonts the Chromium layer leaves out (the CJK fonts, 59 MB of Lambda's 250 MiB; issue 42),
 * fetched from S3 into /tmp on the first page that needs them, while that render waits.
 *
 * Which page needs which: its HTML's characters, by script (as the missing-glyph check's
 * glyphCheckNeeded reads them, page-diagnostics.ts): kana need Noto Sans JP, Hangul Noto Sans KR,
 * Han the font of each CJK language the page names (lang="ja", "ko", "zh-TW"/"zh-HK"/"zh-MO",
 * other "zh"), or Noto Sans SC when it names none (fontconfig's choice for Han without a lang,
 * layers/chromium/fonts.conf). A page whose script writes CJK text into it is not seen here.
 *
 * How Chromium sees them: its fontconfig reads the font directories once, at launch; measured, a
 * fresh browser context (multi-process) or page (single-process) opened after the files landed
 * still prints the missing-glyph boxes. So once a render's fonts have landed, the browser host
 * relaunches Chromium if it was launched before them (browser.ts refreshFonts, by `generation`):
 * once per family, on the first page that needs it.
 *
 * Each launch gets a fontconfig file of its own (fontconfigFile()): the layer's, plus the directory
 * of every family landed by then, and a cache directory of its own for that set of families. Each
 * family lands in a directory of its own, listed only once complete and never written again. Both
 * matter: fontconfig keeps a cache per font directory and takes it as current while the directory's
 * modification time is unchanged. With one directory for every family, a single-process renderer
 * that fetched Noto Sans JP, then Noto Sans KR, relaunched on a cache that listed Noto Sans JP
 * alone and printed the Korean page in Tinos (a CI run of the Lambda-like sandbox; measured here
 * with the directory's time held still: Chromium never saw the second family).
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { FetchedFontsConfig } from '../core/config.js';
import { log } from './log.js';

const JP = 'Noto Sans JP';
const KR = 'Noto Sans KR';
const SC = 'Noto Sans SC';
const TC = 'Noto Sans TC';

const KANA = /[\p{Script=Hiragana}\p{Script=Katakana}]/u;
const HANGUL = /\p{Script=Hangul}/u;
const HAN = /[\p{Script=Han}\p{Script=Bopomofo}]/u;
const LANG = /\blang\s*=\s*["']?([a-z]{2,3}(?:[-_][a-z0-9]+)*)/gi;

/** The CJK font families a page written from `html` prints with (its own CJK text only). */
export const cjkFamiliesOf = (html: string): string[] => {
  const families = new Set<string>();
  if (KANA.test(html)) families.add(JP);
  if (HANGUL.test(html)) families.add(KR);
  if (HAN.test(html)) {
    let named = false;
    for (const [, tag] of html.matchAll(LANG)) {
      const lang = (tag ?? '').toLowerCase().replace('_', '-');
      const family = lang.startsWith('ja')
        ? JP
        : lang.startsWith('ko')
          ? KR
          : /^zh-(tw|hk|mo|hant)/.test(lang)
            ? TC
            : lang.startsWith('zh')
              ? SC
              : undefined;
      if (family === undefined) continue;
      families.add(family);
      named = true;
    }
    if (!named) families.add(SC);
  }
  return [...families].sort();
};

/** An object's bytes (the S3 client, made on the first fetch: cold starts that need none never load it). */
export type FetchObject = (bucket: string, key: string) => Promise<Uint8Array>;

const s3Fetch: FetchObject = async (bucket, key) => {
  const { S3Client, GetObjectCommand } = await import('@aws-sdk/client-s3');
  s3Client ??= new S3Client({
    // The local stack and the Lambda-like sandbox point AWS_ENDPOINT_URL_S3 at their S3 server.
    ...(process.env.AWS_ENDPOINT_URL_S3 ? { forcePathStyle: true } : {}),
  });
  const { Body } = await s3Client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  if (!Body) throw new Error(`s3://${bucket}/${key} has no body`);
  return Body.transformToByteArray();
};
let s3Client: import('@aws-sdk/client-s3').S3Client | undefined;

export interface FetchedFonts {
  /**
   * Chromium's FONTCONFIG_FILE for a launch now: the layer's, with the directory of every family
   * landed so far and a cache directory of that set's own (written on the first launch with it).
   */
  fontconfigFile(): string;
  /** The directories of the families landed so far, one per family (marks read their faces there). */
  dirs(): string[];
  /** Of the families a page needs, those not fetched yet (and fetchable). */
  missingFor(html: string): string[];
  /** The fetched families `html` may need, landed or not. */
  wantedBy(html: string): string[];
  /** Fetches `families` (once each, shared by concurrent callers); resolves when all have landed. */
  ensure(families: readonly string[]): Promise<void>;
  /** How many families have landed: a browser launched at a lower count has not seen them all. */
  generation(): number;
  /** Deletes the fetch directory. */
  close(): Promise<void>;
}

const escapeXml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export const createFetchedFonts = (
  config: FetchedFontsConfig,
  baseFontconfigFile: string | undefined,
  fetchObject: FetchObject = s3Fetch,
): FetchedFonts => {
  const root = mkdtempSync(join(tmpdir(), 'fetched-fonts-'));
  /** A family's own directory: "Noto Sans JP" in `<root>/noto-sans-jp`. */
  const dirOf = (family: string): string => join(root, family.toLowerCase().replace(/[^a-z0-9]+/g, '-'));
  const landed = new Set<string>();
  const fetching = new Map<string, Promise<void>>();
  const landedDirs = (): string[] => [...landed].sort().map(dirOf);

  /** The fontconfig file for the families landed now, written once per set of families. */
  const fontconfigFile = (): string => {
    const dirs = landedDirs();
    const set = join(
      root,
      `launch-${dirs.length === 0 ? 'none' : dirs.map((d) => d.slice(root.length + 1)).join('+')}`,
    );
    const file = join(set, 'fonts.conf');
    if (existsSync(file)) return file;
    // The set's cache directory first: fontconfig writes its caches into the first it can. Fresh
    // for each set of families, so no cache in it predates a family. The earlier sets' follow, read
    // only: what they hold is for directories that never change once listed (the layer's, read
    // only; each family's, complete before any launch lists it), which the launch need not scan
    // again (the layer's fonts: ~40 ms).
    const cache = join(set, 'cache');
    mkdirSync(cache, { recursive: true });
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(
      partial,
      '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n<fontconfig>\n' +
        [cache, ...earlierCaches].map((c) => `  <cachedir>${escapeXml(c)}</cachedir>\n`).join('') +
        (baseFontconfigFile ? `  <include>${escapeXml(baseFontconfigFile)}</include>\n` : '') +
        dirs.map((d) => `  <dir>${escapeXml(d)}</dir>\n`).join('') +
        '</fontconfig>\n',
    );
    renameSync(partial, file);
    earlierCaches.unshift(cache);
    return file;
  };
  /** The cache directories of the sets launched before, newest first. */
  const earlierCaches: string[] = [];

  const fetchFamily = async (family: string): Promise<void> => {
    const files = config.families[family] ?? [];
    const started = performance.now();
    const dir = dirOf(family);
    await mkdir(dir, { recursive: true });
    let bytes = 0;
    // Every file settles before the family fails: no write is left running into the directory.
    const outcomes = await Promise.allSettled(
      files.map(async ({ key, file }) => {
        const partial = join(dir, `.${file}.${process.pid}.partial`);
        try {
          const body = await fetchObject(config.bucket, key);
          bytes += body.byteLength;
          await writeFile(partial, body);
          await rename(partial, join(dir, file));
        } catch (e) {
          await rm(partial, { force: true });
          throw e;
        }
      }),
    );
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) throw failed.reason;
    landed.add(family);
    log('INFO', 'fonts-fetched', {
      family,
      files: files.length,
      bytes,
      ms: Math.round(performance.now() - started),
    });
  };

  return {
    fontconfigFile,
    dirs: landedDirs,
    missingFor: (html) =>
      cjkFamiliesOf(html).filter((f) => !landed.has(f) && (config.families[f]?.length ?? 0) > 0),
    wantedBy: (html) => cjkFamiliesOf(html).filter((f) => (config.families[f]?.length ?? 0) > 0),
    ensure: async (families) => {
      await Promise.all(
        families.map((family) => {
          if (landed.has(family)) return undefined;
          let pending = fetching.get(family);
          if (!pending) {
            pending = fetchFamily(family).finally(() => fetching.delete(family));
            fetching.set(family, pending);
          }
          return pending;
        }),
      );
    },
    generation: () => landed.size,
    close: () => rm(root, { recursive: true, force: true }),
  };
};

/**
 * A render's wait for its fonts: fetched within `until` (its deadline), then the host's browser
 * relaunched if it was launched before them. A failed or late fetch is logged and the page prints
 * without them (its missing-glyph check says so).
 */
export const readyFonts = async (
  fonts: FetchedFonts,
  families: readonly string[],
  host: { refreshFonts(): Promise<void> },
  until: (fetching: Promise<void>) => Promise<void>,
  log: Pick<Logger, 'info' | 'warn'>,
): Promise<void> => {
  const started = performance.now();
  try {
    await until(fonts.ensure(families));
  } catch (e) {
    log.warn('fonts-fetch-failed', { families, error: (e as Error).message });
  }
  await host.refreshFonts();
  log.info('fonts-ready', { families, ms: Math.round(performance.now() - started) });
};
