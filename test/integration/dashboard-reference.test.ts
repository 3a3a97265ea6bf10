/**
 * The API reference page (issue 24, part 6): the dashboard links it, and it shows the API's own
 * /openapi.json through Scalar's viewer, self-hosted and loaded on that page only, under a policy of
 * its own that allows the viewer's inline styles by hash and nothing else inline: a browser at
 * desktop and phone width sees every operation listed and no refusal of the page's policy.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../functions/openapi.js';
import { referenceContentSecurityPolicy } from '../../lib/dashboard/headers.js';
import { launchTestBrowser, type PageProblem, watchPage } from '../helpers/browser.js';
import { useLocalStack } from '../helpers/local-stack.js';

// Browser globals for the functions run in the page, typed loosely (the program's code runs in Node).
// biome-ignore lint/suspicious/noExplicitAny: see above
type Dom = any;
declare const document: Dom;
type HTMLElement = Dom;
type HTMLAnchorElement = Dom;

const local = useLocalStack();

/** The README's screenshots, as dashboard.test.ts takes them: docs/ only with DASHBOARD_SCREENSHOTS=docs. */
const SHOTS =
  process.env.DASHBOARD_SCREENSHOTS === 'docs'
    ? fileURLToPath(new URL('../../docs/screenshots/', import.meta.url))
    : fileURLToPath(new URL('../artifacts/dashboard/readme/', import.meta.url));

let browser: Browser;
beforeAll(async () => {
  browser = await launchTestBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** Every operation's summary, as the document gives it: what the reference must list. */
const summaries = (): string[] => {
  const doc = openApiDocument() as { paths: Record<string, Record<string, { summary?: string }>> };
  return Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.summary ?? ''));
};

const open = async (viewport: Parameters<Page['setViewport']>[0], problems: PageProblem[]) => {
  const page = await browser.newPage();
  await page.setViewport(viewport);
  watchPage(page, 'reference', problems);
  const res = await page.goto(new URL('reference.html', local.stack.dashboardUrl).href, {
    waitUntil: 'networkidle0',
  });
  return { page, res };
};

describe('the API reference page', () => {
  it.each([
    ['desktop', { width: 1366, height: 900 }],
    ['phone', { width: 390, height: 844, isMobile: true, hasTouch: true }],
  ])(
    'lists every operation of /openapi.json at %s width, under its own policy, refused nothing',
    async (_, viewport) => {
      const problems: PageProblem[] = [];
      const { page, res } = await open(viewport, problems);
      expect(res?.status()).toBe(200);
      expect(res?.headers()['content-security-policy']).toBe(
        referenceContentSecurityPolicy({ connect: [new URL(local.stack.s3Endpoint).origin] }),
      );
      const wanted = summaries();
      expect(wanted.length).toBeGreaterThan(10);
      // The viewer writes each operation's summary (its sidebar and its sections) once it has the document.
      await page.waitForFunction(
        (texts: string[]) => texts.every((t) => document.body.textContent?.includes(t)),
        { timeout: 30_000 },
        wanted.map((t) => t.slice(0, 40)),
      );
      // Styled by its own stylesheets (a refused <style> would leave the browser's serif default).
      expect(await page.evaluate(() => document.styleSheets.length)).toBeGreaterThan(0);
      expect(problems).toEqual([]);
      mkdirSync(SHOTS, { recursive: true });
      await page.screenshot({ path: join(SHOTS, `reference-${_}.png`) as `${string}.png` });
      await page.close();
    },
  );

  it('is linked from every page of the dashboard, beside the OpenAPI document', async () => {
    const page = await browser.newPage();
    await page.goto(local.stack.dashboardUrl, { waitUntil: 'networkidle0' });
    await page.waitForFunction(() =>
      [...document.querySelectorAll('button')].some((b) => b.textContent?.trim() === 'Sign in'),
    );
    await page.$$eval('button', (bs) =>
      (bs.find((b) => b.textContent?.trim() === 'Sign in') as HTMLElement).click(),
    );
    await page.waitForSelector('#email');
    await page.type('#email', 'reference@example.com');
    await Promise.all([
      page.waitForNavigation({ waitUntil: 'networkidle0' }),
      page.click('button[type=submit]'),
    ]);
    await page.waitForSelector('footer a[href="reference.html"]');
    const links = await page.$$eval('footer a', (as) => as.map((a) => (a as HTMLAnchorElement).href));
    expect(links).toEqual([
      new URL('reference.html', local.stack.dashboardUrl).href,
      new URL('/openapi.json', local.stack.baseUrl).href,
    ]);
    await page.close();
  });
});
