/**
 * The fonts the layer leaves out (issue 42), fetched on first need by one single-process renderer
 * (the Lambda model: one browser per process, relaunched to see what it fetched): a Japanese page,
 * then a Korean page, then a page with both each print in their own fetched family. A CI run of
 * the Lambda-like sandbox printed the Korean page in Tinos after Noto Sans JP had been fetched,
 * although Noto Sans KR was fetched and the browser relaunched (functions/renderer/fetched-fonts.ts).
 *
 * The fault injected: the fetched fonts' directories keep one modification time throughout.
 * fontconfig trusts a directory's cache while that time is unchanged, so with the families sharing
 * one directory (as in that CI run) the relaunched browser read the cache written when it held
 * Noto Sans JP alone and printed the Korean page in Tinos: this file failed so before the change.
 * With a directory per family, listed once complete, and a cache directory per set of families
 * (fetched-fonts.ts), the directories' times no longer matter.
 *
 * The renderer runs in this process against a fonts directory like the layer's (every font but the
 * fetched ones, the layer's fonts.conf) and fetches from an s3rver on loopback, as the bundle does
 * from the assets bucket (test/helpers/font-bucket.ts).
 */
import { type Dirent, readdirSync, utimesSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RenderRequest } from '../../functions/renderer/contract.js';
import type { RendererInstance } from '../../functions/renderer/renderer.js';
import { FETCHED_FONTS_VARIABLES, RENDERER_VARIABLES } from '../../functions/wiring.js';
import { resolveLayerFonts } from '../../lib/layer-fonts.js';
import { PROJECT_ROOT } from '../../lib/service-function.js';
import { type FontBucket, startFontBucket } from '../helpers/font-bucket.js';
import { isMissingGlyph, readGlyphs } from '../helpers/pdf-fonts.js';
import { pdffonts } from '../helpers/pdf-readers.js';
import { renderRequest } from '../helpers/render-fixtures.js';

const uploads = new Map<string, Buffer>();
const uploadServer: Server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    uploads.set(req.url ?? '', Buffer.concat(chunks));
    res.writeHead(200).end();
  });
});

let uploadBase = '';
let fontsDir = '';
let fontBucket: FontBucket;
let renderer: RendererInstance;
let tmp = '';
let pinning: NodeJS.Timeout | undefined;

/** Every directory under `<dir>/fetched-fonts-*` (the renderer's fetched fonts) back to one time. */
const pinDirectories = (dir: string): void => {
  const walk = (path: string, depth: number): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (!e.isDirectory() || (depth === 0 && !e.name.startsWith('fetched-fonts-'))) continue;
      const child = join(path, e.name);
      try {
        utimesSync(child, PINNED, PINNED);
      } catch {}
      if (depth < 2) walk(child, depth + 1);
    }
  };
  walk(dir, 0);
};
const PINNED = 1_700_000_000;

beforeAll(async () => {
  await new Promise<void>((resolve) => uploadServer.listen(0, '127.0.0.1', () => resolve()));
  uploadBase = `http://127.0.0.1:${(uploadServer.address() as AddressInfo).port}`;
  // The layer's fonts directory: its fonts.conf and every font but the fetched ones (linked).
  const fonts = resolveLayerFonts(PROJECT_ROOT);
  fontsDir = await mkdtemp(join(tmpdir(), 'layer-fonts-'));
  await writeFile(join(fontsDir, 'fonts.conf'), fonts.fontsConf);
  for (const f of fonts.files) await symlink(f.source, join(fontsDir, f.name));
  // Each fetched file under a key of its own, as the synthesized template names S3 assets.
  const families: Record<string, { key: string; file: string }[]> = {};
  for (const f of fonts.fetchedFiles) {
    const files = families[f.font.family] ?? [];
    families[f.font.family] = files;
    files.push({ key: `assets/${f.name}`, file: f.name });
  }
  fontBucket = await startFontBucket({ [RENDERER_VARIABLES.fetchedFonts]: JSON.stringify(families) });
  // The renderer's S3 client reads its endpoint and credentials from the environment, and its
  // fetched fonts land under TMPDIR: this file runs in a process of its own.
  tmp = await mkdtemp(join(tmpdir(), 'fetched-fonts-test-'));
  Object.assign(process.env, { AWS_REGION: 'eu-west-1', TMPDIR: tmp, ...fontBucket.environment });
  // The fault: the fetched fonts' directories held at one modification time (every 2 ms; a
  // relaunch takes ~100 ms), so no directory looks changed to fontconfig when a family lands.
  pinning = setInterval(() => pinDirectories(tmp), 2);
  const { readRendererConfig } = await import('../../functions/core/config.js');
  const { createInProcessRenderer } = await import('../../functions/renderer/in-process.js');
  renderer = createInProcessRenderer(
    readRendererConfig({
      ...process.env,
      ...fontBucket.environment,
      [RENDERER_VARIABLES.fontconfigFile]: join(fontsDir, 'fonts.conf'),
      [FETCHED_FONTS_VARIABLES.bucket]: fontBucket.environment[FETCHED_FONTS_VARIABLES.bucket],
      RENDERER_PROCESS_MODEL: 'single',
    }),
  );
}, 120_000);

afterAll(async () => {
  clearInterval(pinning);
  await renderer?.close();
  await fontBucket?.close();
  uploadServer.closeAllConnections();
  uploadServer.close();
  for (const dir of [fontsDir, tmp].filter(Boolean)) await rm(dir, { recursive: true, force: true });
});

let uploadCount = 0;
const request = (jobId: string, html: string): RenderRequest =>
  renderRequest(`${uploadBase}/fetched-${++uploadCount}.pdf`, html, {
    jobId,
    pageLoad: { timeoutMs: 15_000 },
    limits: { maxPages: 100 },
  });

/** The fonts embedded in the PDF a render uploaded, without their subset tags. */
const embedded = async (req: RenderRequest): Promise<string[]> => {
  const pdf = uploads.get(new URL(req.upload.url).pathname);
  if (!pdf) throw new Error(`${req.jobId}: nothing uploaded`);
  return (await pdffonts(pdf)).map((f) => f.name.replace(/^[A-Z]{6}\+/, ''));
};

/** The characters a render's PDF draws as empty boxes (no font had them). */
const missingGlyphs = async (req: RenderRequest): Promise<string[]> =>
  (await readGlyphs(uploads.get(new URL(req.upload.url).pathname) as Buffer))
    .filter(isMissingGlyph)
    .map((g) => g.unicode);

describe('fonts fetched on first need by a single-process renderer (issue 42)', () => {
  it('prints a Japanese page, then a Korean page, then both, each in its fetched family', async () => {
    const japanese = request('job_fetched_ja', '<p lang="ja">請求書：お支払いは月末までに</p>');
    expect(await renderer.render(japanese)).toMatchObject({ ok: true });
    expect(await embedded(japanese)).toContain('NotoSansJP-Regular');
    expect(await missingGlyphs(japanese)).toEqual([]);
    expect(renderer.browser.processModel()).toBe('single');

    // The second family: fetched after the browser had seen the first.
    const korean = request('job_fetched_ko', '<p lang="ko">청구서 1번: 영수증</p>');
    expect(await renderer.render(korean)).toMatchObject({ ok: true });
    expect(await embedded(korean)).toContain('NotoSansKR-Regular');
    expect(await missingGlyphs(korean)).toEqual([]);

    // Both on one page: neither fetched again, both drawn.
    const both = request(
      'job_fetched_both',
      '<p lang="ja">お支払いは月末までに</p><p lang="ko">청구서 2번: 영수증</p>',
    );
    expect(await renderer.render(both)).toMatchObject({ ok: true });
    expect(await embedded(both)).toEqual(
      expect.arrayContaining(['NotoSansJP-Regular', 'NotoSansKR-Regular']),
    );
    expect(await missingGlyphs(both)).toEqual([]);
  }, 120_000);
});
