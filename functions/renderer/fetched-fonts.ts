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
 * still prints the missing-glyph boxes. So the renderer's Chromium is launched with a fontconfig
 * file of the renderer's own, which includes the layer's and adds the fetch directory; once a
 * render's fonts have landed, the browser host relaunches Chromium if it was launched before them
 * (browser.ts refreshFonts, by `generation`): once per family, on the first page that needs it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
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
  /** Chromium's FONTCONFIG_FILE: the layer's, with the fetch directory added. */
  readonly fontconfigFile: string;
  /** Where the fetched fonts land. */
  readonly dir: string;
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
  const dir = join(root, 'fonts');
  const fontconfigFile = join(root, 'fonts.conf');
  writeFileSync(
    fontconfigFile,
    '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n<fontconfig>\n' +
      (baseFontconfigFile ? `  <include>${escapeXml(baseFontconfigFile)}</include>\n` : '') +
      `  <dir>${escapeXml(dir)}</dir>\n</fontconfig>\n`,
  );
  const landed = new Set<string>();
  const fetching = new Map<string, Promise<void>>();

  const fetchFamily = async (family: string): Promise<void> => {
    const files = config.families[family] ?? [];
    const started = performance.now();
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
    dir,
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
