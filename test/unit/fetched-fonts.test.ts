/**
 * The fonts the layer leaves out (functions/renderer/fetched-fonts.ts): which a page needs, and the
 * fetch into the renderer's own font directory, once per family, with a fontconfig file that adds
 * it to the layer's. The Chromium side (a relaunched browser prints them) is in
 * test/integration/lambda-sandbox.test.ts.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cjkFamiliesOf,
  createFetchedFonts,
  type FetchedFonts,
} from '../../functions/renderer/fetched-fonts.js';

describe('the CJK fonts a page needs', () => {
  it.each([
    ['<p>Invoice 42, total €1.234,00</p>', []],
    ['<p>請求書：お支払い</p>', ['Noto Sans JP', 'Noto Sans SC']],
    ['<html lang="ja"><p>請求書：お支払い</p>', ['Noto Sans JP']],
    ['<p>청구서</p>', ['Noto Sans KR']],
    ['<p>发票</p>', ['Noto Sans SC']],
    ['<p lang="zh-TW">發票</p>', ['Noto Sans TC']],
    ['<p lang="zh-Hant-HK">發票</p>', ['Noto Sans TC']],
    ['<p lang="zh-HK">發票</p><p lang="zh-CN">发票</p>', ['Noto Sans SC', 'Noto Sans TC']],
    ['<p lang="en">Kanji 漢字</p>', ['Noto Sans SC']],
  ])('%s: %j', (html, families) => {
    expect(cjkFamiliesOf(html)).toEqual(families);
  });
});

describe('fetching them', () => {
  let fonts: FetchedFonts | undefined;
  afterEach(async () => {
    await fonts?.close();
    fonts = undefined;
  });

  const config = {
    bucket: 'fonts-bucket',
    families: {
      'Noto Sans JP': [
        { key: 'a.ttf', file: 'NotoSansJP_400Regular.ttf' },
        { key: 'b.ttf', file: 'NotoSansJP_700Bold.ttf' },
      ],
      'Noto Sans KR': [{ key: 'c.ttf', file: 'NotoSansKR_400Regular.ttf' }],
    },
  };

  it('fetches each family a page needs once, into a directory its own fontconfig file adds to the layer’s', async () => {
    const asked: string[] = [];
    fonts = createFetchedFonts(config, '/opt/fonts/fonts.conf', async (bucket, key) => {
      asked.push(`${bucket}/${key}`);
      await new Promise((r) => setTimeout(r, 20));
      return new TextEncoder().encode(`font ${key}`);
    });
    const conf = readFileSync(fonts.fontconfigFile, 'utf8');
    expect(conf).toContain('<include>/opt/fonts/fonts.conf</include>');
    expect(conf).toContain(`<dir>${fonts.dir}</dir>`);
    expect(fonts.generation()).toBe(0);

    const page = '<p lang="ja">請求書</p><p>청구서</p><p lang="zh-TW">發票</p>';
    // Noto Sans TC is not among the fetchable families: not asked for.
    expect(fonts.missingFor(page)).toEqual(['Noto Sans JP', 'Noto Sans KR']);
    // Two renders at once share the fetch.
    await Promise.all([fonts.ensure(fonts.missingFor(page)), fonts.ensure(['Noto Sans JP'])]);
    expect(asked.sort()).toEqual(['fonts-bucket/a.ttf', 'fonts-bucket/b.ttf', 'fonts-bucket/c.ttf']);
    expect(readdirSync(fonts.dir).sort()).toEqual([
      'NotoSansJP_400Regular.ttf',
      'NotoSansJP_700Bold.ttf',
      'NotoSansKR_400Regular.ttf',
    ]);
    expect(readFileSync(`${fonts.dir}/NotoSansJP_700Bold.ttf`, 'utf8')).toBe('font b.ttf');
    expect(fonts.generation()).toBe(2);
    expect(fonts.missingFor(page)).toEqual([]);
    await fonts.ensure(['Noto Sans JP']);
    expect(asked).toHaveLength(3);
  });

  it('tries a family again after a failed fetch, and leaves no partial file', async () => {
    let fail = true;
    fonts = createFetchedFonts(config, undefined, async (_, key) => {
      if (fail && key === 'b.ttf') throw new Error('S3 said no');
      return new TextEncoder().encode(key);
    });
    await expect(fonts.ensure(['Noto Sans JP'])).rejects.toThrow('S3 said no');
    expect(fonts.generation()).toBe(0);
    expect(fonts.missingFor('<p lang="ja">請求書</p>')).toEqual(['Noto Sans JP']);
    expect(readdirSync(fonts.dir).filter((f) => f.includes('partial'))).toEqual([]);
    fail = false;
    await fonts.ensure(['Noto Sans JP']);
    expect(fonts.generation()).toBe(1);
    const dir = fonts.dir;
    await fonts.close();
    expect(existsSync(dir)).toBe(false);
    fonts = undefined;
  });
});
