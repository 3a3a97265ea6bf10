/**
 * The floor: the same final HTML through the same Chromium binary with the same flags, on a warm
 * browser, timing `page.setContent(html, {waitUntil})` (+ `page.waitForSelector` when the fixture
 * asks for it) + `page.pdf(sameOptions)` and nothing else. Each measured render gets a fresh page
 * (opened before the clock starts, closed after it stops) in the browser's default context: no
 * context per render, no interception, no proxy, no upload, no API.
 */
import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser } from 'puppeteer-core';
import { readRendererConfig } from '../../functions/core/config.js';
import { chromiumArgs } from '../../functions/renderer/browser.js';
import { localFontconfigFile } from '../../lib/layer-fonts.js';
import type { Fixture } from './fixtures/index.js';
import { ROOT } from './service.js';

export const FLOOR_DEFINITION =
  'same Chromium binary and flags (minus the egress proxy), warm browser, fresh page per render opened ' +
  'before the clock; timed: setContent(html, {waitUntil}) [+ waitForSelector] + pdf(same options)';

export const launchFloorBrowser = async (): Promise<{ browser: Browser; executablePath: string }> => {
  chromium.setGraphicsMode = false;
  const executablePath = readRendererConfig().chromeExecutablePath ?? (await chromium.executablePath());
  const args = chromiumArgs(chromium.args, 'http://127.0.0.1:9').filter((a) => !a.startsWith('--proxy-'));
  const browser = await puppeteer.launch({
    executablePath,
    args,
    ignoreDefaultArgs: ['--disable-popup-blocking'],
    headless: 'shell',
    pipe: true,
    // The renderer's fonts (the service's: the layer's, from node_modules).
    env: {
      ...process.env,
      FONTCONFIG_FILE: readRendererConfig().fontconfigFile ?? localFontconfigFile(ROOT),
    },
  });
  return { browser, executablePath };
};

export const floorOnce = async (
  browser: Browser,
  fixture: Fixture,
): Promise<{ ms: number; bytes: number }> => {
  const { pdf, pageLoad } = fixture.options;
  const page = await browser.newPage();
  try {
    const started = performance.now();
    await page.setContent(fixture.html, { waitUntil: pageLoad.waitUntil, timeout: pageLoad.timeoutMs });
    if (pageLoad.waitForSelector) await page.waitForSelector(pageLoad.waitForSelector);
    const bytes = await page.pdf({
      format: pdf.format,
      landscape: pdf.landscape,
      printBackground: pdf.printBackground,
      margin: {
        top: `${pdf.margins.top}in`,
        right: `${pdf.margins.right}in`,
        bottom: `${pdf.margins.bottom}in`,
        left: `${pdf.margins.left}in`,
      },
      preferCSSPageSize: false,
      tagged: readRendererConfig().taggedPdf,
    });
    return { ms: performance.now() - started, bytes: bytes.byteLength };
  } finally {
    await page.close();
  }
};
