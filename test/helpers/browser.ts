/**
 * A browser for end-to-end tests of the dashboard: the Chromium the project already ships
 * (@sparticuz/chromium, or CHROME_EXECUTABLE_PATH), launched as a user's browser would run, with
 * the same-origin policy and site isolation on (the renderer's flags that weaken them are dropped).
 * Every page's console errors, uncaught exceptions and failed requests are collected, so a test
 * can assert there were none.
 */
import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { readRendererConfig } from '../../functions/core/config.js';

const DROPPED = new Set([
  '--disable-web-security',
  '--allow-running-insecure-content',
  '--disable-site-isolation-trials',
  '--single-process',
]);

export const launchTestBrowser = async (): Promise<Browser> => {
  chromium.setGraphicsMode = false;
  const executablePath = readRendererConfig().chromeExecutablePath ?? (await chromium.executablePath());
  return puppeteer.launch({
    executablePath,
    args: chromium.args.filter((a) => !DROPPED.has(a) && !a.startsWith('--headless')),
    headless: 'shell',
    pipe: true,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
};

export interface PageProblem {
  readonly page: string;
  readonly kind: 'console' | 'pageerror' | 'requestfailed';
  readonly text: string;
}

/** Records the page's console errors and warnings, uncaught errors and failed requests into `into`. */
export const watchPage = (page: Page, name: string, into: PageProblem[]): void => {
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warn')
      into.push({ page: name, kind: 'console', text: m.text() });
  });
  page.on('pageerror', (e) => into.push({ page: name, kind: 'pageerror', text: (e as Error).message }));
  page.on('requestfailed', (r) => {
    // A navigation the page itself replaces (the sign-in redirect) aborts what was loading.
    if (r.failure()?.errorText === 'net::ERR_ABORTED') return;
    into.push({
      page: name,
      kind: 'requestfailed',
      text: `${r.method()} ${r.url()}: ${r.failure()?.errorText}`,
    });
  });
};
