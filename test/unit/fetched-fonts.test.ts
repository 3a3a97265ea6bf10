/**
 * The fonts the layer leaves out (functions/renderer/fetched-fonts.ts): which a page needs, and the
 * fetch into a directory of its own per family, once per family, with a fontconfig file per set of
 * families landed that adds their directories to the layer's, with a cache directory of its own. The Chromium side (a relaunched browser prints them) is in
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

  it('fetches each family a page needs once, each into a directory of its own, which the next launch’s fontconfig file adds to the layer’s with a cache of its own', async () => {
    const asked: string[] = [];
    fonts = createFetchedFonts(config, '/opt/fonts/fonts.conf', async (bucket, key) => {
      asked.push(`${bucket}/${key}`);
      await new Promise((r) => setTimeout(r, 20));
      return new TextEncoder().encode(`font ${key}`);
    });
    const before = fonts.fontconfigFile();
    const confBefore = readFileSync(before, 'utf8');
    expect(confBefore).toContain('<include>/opt/fonts/fonts.conf</include>');
    expect(confBefore).not.toContain('<dir>');
    expect(fonts.generation()).toBe(0);
    expect(fonts.dirs()).toEqual([]);

    const page = '<p lang="ja">請求書</p><p>청구서</p><p lang="zh-TW">發票</p>';
    // Noto Sans TC is not among the fetchable families: not asked for.
    expect(fonts.missingFor(page)).toEqual(['Noto Sans JP', 'Noto Sans KR']);
    // Two renders at once share the fetch.
    await Promise.all([fonts.ensure(['Noto Sans JP']), fonts.ensure(['Noto Sans JP'])]);
    expect(asked.sort()).toEqual(['fonts-bucket/a.ttf', 'fonts-bucket/b.ttf']);
    const [jp] = fonts.dirs();
    expect(readdirSync(jp as string).sort()).toEqual(['NotoSansJP_400Regular.ttf', 'NotoSansJP_700Bold.ttf']);
    expect(readFileSync(`${jp}/NotoSansJP_700Bold.ttf`, 'utf8')).toBe('font b.ttf');
    const withJp = fonts.fontconfigFile();
    expect(withJp).not.toBe(before);
    // Asked again with the same families: the same file.
    expect(fonts.fontconfigFile()).toBe(withJp);

    await fonts.ensure(fonts.missingFor(page));
    expect(asked).toHaveLength(3);
    expect(fonts.generation()).toBe(2);
    expect(fonts.missingFor(page)).toEqual([]);
    const dirs = fonts.dirs();
    expect(dirs).toHaveLength(2);
    expect(dirs[0]).toBe(jp);
    // Korean in its own directory: the Japanese one is as it was when the last launch listed it.
    expect(readdirSync(dirs[1] as string)).toEqual(['NotoSansKR_400Regular.ttf']);
    expect(readdirSync(jp as string)).toHaveLength(2);
    const withBoth = fonts.fontconfigFile();
    const conf = readFileSync(withBoth, 'utf8');
    for (const dir of dirs) expect(conf).toContain(`<dir>${dir}</dir>`);
    // Each set of families has a cache directory of its own, listed first (fontconfig writes into
    // the first), then the earlier sets' (read only), all before the layer's.
    const cachedirs = (file: string) =>
      [...readFileSync(file, 'utf8').matchAll(/<cachedir>([^<]+)<\/cachedir>/g)].map((m) => m[1]);
    const [none, jpOnly, both] = [before, withJp, withBoth].map(cachedirs);
    expect(new Set([none?.[0], jpOnly?.[0], both?.[0]]).size).toBe(3);
    expect(jpOnly).toEqual([jpOnly?.[0], none?.[0]]);
    expect(both).toEqual([both?.[0], jpOnly?.[0], none?.[0]]);
    expect(conf.lastIndexOf('<cachedir>')).toBeLessThan(conf.indexOf('<include>'));
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
    // Nothing listed for the next launch, and no partial file left where the family lands.
    expect(fonts.dirs()).toEqual([]);
    expect(readFileSync(fonts.fontconfigFile(), 'utf8')).not.toContain('<dir>');
    fail = false;
    await fonts.ensure(['Noto Sans JP']);
    expect(fonts.generation()).toBe(1);
    const [dir] = fonts.dirs();
    expect(readdirSync(dir as string).sort()).toEqual([
      'NotoSansJP_400Regular.ttf',
      'NotoSansJP_700Bold.ttf',
    ]);
    await fonts.close();
    expect(existsSync(dir as string)).toBe(false);
    fonts = undefined;
  });
});
