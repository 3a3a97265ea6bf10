/**
 * The renderer's settings (functions/core/config.ts, readRendererConfig) and the Chromium flags
 * each process model launches with: defaults, accepted spellings, and a named error for the rest.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_MAX_PAGE_REQUESTS, readRendererConfig } from '../../functions/core/config.js';
import { chromiumArgs } from '../../functions/renderer/warm-browser.js';

describe('readRendererConfig', () => {
  it('defaults to auto and the default request budget', () => {
    expect(readRendererConfig({})).toMatchObject({
      processModel: 'auto',
      maxPageRequests: DEFAULT_MAX_PAGE_REQUESTS,
    });
    expect(DEFAULT_MAX_PAGE_REQUESTS).toBe(2000);
  });

  it.each([
    ['auto', 'auto'],
    ['multi', 'multi'],
    ['single', 'single'],
    [' Single ', 'single'],
    ['', 'auto'],
  ])('reads RENDERER_PROCESS_MODEL=%j as %s', (value, model) => {
    expect(readRendererConfig({ RENDERER_PROCESS_MODEL: value }).processModel).toBe(model);
  });

  it.each(['multiprocess', 'single-process', '1', 'true'])(
    'refuses RENDERER_PROCESS_MODEL=%j, naming the variable and the choices',
    (value) => {
      expect(() => readRendererConfig({ RENDERER_PROCESS_MODEL: value })).toThrow(ConfigError);
      expect(() => readRendererConfig({ RENDERER_PROCESS_MODEL: value })).toThrow(
        /^RENDERER_PROCESS_MODEL must be one of auto, multi, single, got "/,
      );
    },
  );

  it.each([
    ['1', 1],
    ['500', 500],
    ['1000000', 1_000_000],
  ])('reads RENDERER_MAX_PAGE_REQUESTS=%s', (value, n) => {
    expect(readRendererConfig({ RENDERER_MAX_PAGE_REQUESTS: value }).maxPageRequests).toBe(n);
  });

  it.each(['0', '-5', '2.5', '1e3', 'lots', '1000001', '99999999999999999999'])(
    'refuses RENDERER_MAX_PAGE_REQUESTS=%s, naming the variable',
    (value) => {
      expect(() => readRendererConfig({ RENDERER_MAX_PAGE_REQUESTS: value })).toThrow(
        `RENDERER_MAX_PAGE_REQUESTS must be a whole number from 1 to 1000000, got "${value}"`,
      );
    },
  );

  it('reads FONTCONFIG_FILE when it names a file, and refuses one that names none', () => {
    expect(readRendererConfig({}).fontconfigFile).toBeUndefined();
    const conf = fileURLToPath(new URL('../../layers/chromium/fonts.conf', import.meta.url));
    expect(readRendererConfig({ FONTCONFIG_FILE: conf }).fontconfigFile).toBe(conf);
    // Chromium would start without a font and print every character as nothing.
    expect(() => readRendererConfig({ FONTCONFIG_FILE: '/opt/fonts/nothing.conf' })).toThrow(
      'FONTCONFIG_FILE names no file: "/opt/fonts/nothing.conf"',
    );
  });
});

describe('chromiumArgs', () => {
  const base = [
    '--single-process',
    '--no-zygote',
    '--no-sandbox',
    '--disable-web-security',
    "--headless='shell'",
    '--disable-features=AudioServiceOutOfProcess,IsolateOrigins,site-per-process',
    '--enable-features=SharedArrayBuffer',
  ];

  it('multi-process: no --single-process, no --no-zygote, nothing that weakens isolation', () => {
    const args = chromiumArgs(base, 'http://127.0.0.1:1234', 'multi');
    expect(args).not.toContain('--single-process');
    expect(args).not.toContain('--no-zygote');
    expect(args).toContain('--no-sandbox');
    expect(args).toContain('--disable-features=AudioServiceOutOfProcess');
    expect(args).toContain('--proxy-server=http://127.0.0.1:1234');
    expect(args.join(' ')).not.toMatch(/disable-web-security|site-per-process|SharedArrayBuffer|headless/);
  });

  it('single-process: keeps --single-process and --no-zygote, and drops the rest the same way', () => {
    const args = chromiumArgs(base, 'http://127.0.0.1:1234', 'single');
    expect(args.filter((a) => a === '--single-process')).toHaveLength(1);
    expect(args).toContain('--no-zygote');
    expect(args.join(' ')).not.toMatch(/disable-web-security|site-per-process|SharedArrayBuffer|headless/);
    // Single-process even from flags that did not ask for it.
    expect(chromiumArgs(['--no-sandbox'], 'http://127.0.0.1:1', 'single')).toEqual(
      expect.arrayContaining(['--single-process', '--no-zygote']),
    );
  });
});
