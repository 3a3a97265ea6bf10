/**
 * The dashboard's pages for work that finishes later, in a real browser against the local stack:
 * an async render that moves to completed on screen without a reload (polling while it is
 * unfinished, none while the tab is hidden or once nothing can change), a batch made through the
 * API whose progress and jobs (paged) the dashboard follows, and a webhook endpoint created with
 * its signing secret shown once (and never after), a test event whose delivery and attempts are
 * listed, redelivered, and the endpoint deleted. Then the new pages at phone width (no sideways
 * scrolling, every action inside the screen), an accessible name on every control, their README
 * screenshots, and no console error (a refused Content-Security-Policy included) anywhere.
 *
 * The stack's renders wait until the test lets them go (the memory renderer behind a gate), so that
 * the page is seen showing unfinished work first, whatever the machine's speed.
 */
import { execFileSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page, SerializedAXNode } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryRenderer } from '../../functions/adapters/memory/renderer.js';
import type { Renderer } from '../../functions/renderer/contract.js';
import { POLL_INTERVAL_MS } from '../../lib/dashboard/site/poll-interval.js';
import { localSubFor } from '../../lib/local/dashboard.js';
import { waitForJob } from '../helpers/async-jobs.js';
import { launchTestBrowser, type PageProblem, watchPage } from '../helpers/browser.js';
import { putAccountOnPlan, useLocalStack } from '../helpers/local-stack.js';
import { useWebhookReceiver } from '../helpers/webhook-receiver.js';

// Browser globals for the functions run in the page (see dashboard.test.ts).
// biome-ignore lint/suspicious/noExplicitAny: see above
type Dom = any;
declare const document: Dom;
declare const location: Dom;
declare const window: Dom;
declare const navigator: Dom;
declare const Event: Dom;

const ARTIFACTS = fileURLToPath(new URL('../artifacts/dashboard-async-work/', import.meta.url));
/** As dashboard.test.ts: into docs/screenshots/ only when DASHBOARD_SCREENSHOTS=docs. */
const README_SHOTS =
  process.env.DASHBOARD_SCREENSHOTS === 'docs'
    ? fileURLToPath(new URL('../../docs/screenshots/', import.meta.url))
    : join(ARTIFACTS, 'readme');
const DESKTOP = { width: 1366, height: 900 };
const PHONE = { width: 390, height: 844, isMobile: true, hasTouch: true };
const ADA = 'ada@example.com';
const BATCH_ITEMS = 25;

const memoryRenderer = createMemoryRenderer();

/** Renders wait for the gate: held, a job stays rendering until the test releases it. */
let gate: Promise<void> = Promise.resolve();
let release = () => {};
const hold = () => {
  gate = new Promise((r) => {
    release = r;
  });
};
const heldRenderer: Renderer = {
  async render(request) {
    await gate;
    return memoryRenderer.render(request);
  },
};

const env: Record<string, string> = {
  WEBHOOK_FIRST_RETRY_SECONDS: '1',
  WEBHOOK_RETRY_WINDOW_SECONDS: '3',
  WEBHOOK_TIMEOUT_MS: '1000',
};
const receiver = useWebhookReceiver(env);
const local = useLocalStack({ env, renderer: heldRenderer });

let browser: Browser;
let page: Page;
const problems: PageProblem[] = [];
/** Every GET the page made to the API, with when. */
const apiReads: { path: string; at: number }[] = [];

const session = () => local.stack.issueToken({ sub: localSubFor(ADA), email: ADA });

const waitForText = async (selector: string, text: string | RegExp, timeout = 20_000) => {
  try {
    await page.waitForFunction(
      (sel: string, source: string, flags: string) =>
        [...document.querySelectorAll(sel)].some((e) => new RegExp(source, flags).test(e.textContent ?? '')),
      { timeout },
      selector,
      typeof text === 'string' ? text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : text.source,
      typeof text === 'string' ? '' : text.flags,
    );
  } catch (e) {
    await page.screenshot({ path: join(ARTIFACTS, `failed-${Date.now()}.png`) }).catch(() => {});
    throw e;
  }
};

/** As dashboard.test.ts's: the text of the first element `selector` finds, once there is one. */
const textOf = async (selector: string) => {
  await page.waitForSelector(selector);
  return page.$eval(selector, (e) => e.textContent ?? '');
};

const clickButton = async (text: string, within = 'body') => {
  const handle = await page.waitForFunction(
    (scope: string, label: string) =>
      [...document.querySelectorAll(`${scope} button`)].find(
        (b) => (b.textContent ?? '').trim() === label && !b.disabled,
      ),
    {},
    within,
    text,
  );
  await (handle as unknown as { click(): Promise<void> }).click();
};

const goTo = async (hash: string, heading: string | RegExp) => {
  await page.evaluate((h) => {
    location.hash = h;
  }, hash);
  await waitForText('h1', heading);
};

const setViewport = async (viewport: Parameters<Page['setViewport']>[0]) => {
  await page.setViewport(viewport);
  await page.waitForSelector('nav[aria-label="Dashboard"]');
  await page.waitForNetworkIdle({ idleTime: 300 });
};

/** Reads of `pathPrefix` the page makes during `ms`. */
const readsDuring = async (pathPrefix: string, ms: number): Promise<number> => {
  const from = Date.now();
  await new Promise((r) => setTimeout(r, ms));
  return apiReads.filter((r) => r.at >= from && r.path.startsWith(pathPrefix)).length;
};

/**
 * Whether the page reads `pathPrefix` within `ms`: true at its first read, without waiting out the
 * rest of the window.
 */
const readsWithin = async (pathPrefix: string, ms: number): Promise<boolean> => {
  const from = Date.now();
  const read = () => apiReads.some((r) => r.at >= from && r.path.startsWith(pathPrefix));
  while (!read() && Date.now() - from < ms) await new Promise((r) => setTimeout(r, 50));
  return read();
};

/**
 * Headless Chromium's pages are never hidden: the page is told it is, as a browser tells a
 * background tab (document.visibilityState and the visibilitychange event).
 */
const setHidden = (hidden: boolean) =>
  page.evaluate((h: boolean) => {
    Object.defineProperty(document, 'visibilityState', {
      configurable: true,
      get: () => (h ? 'hidden' : 'visible'),
    });
    document.dispatchEvent(new Event('visibilitychange'));
  }, hidden);

/** A marker a reload would lose: the page it is on was never reloaded while it stays. */
const markPage = () =>
  page.evaluate(() => {
    window.__notReloaded = true;
  });
const stillSamePage = () => page.evaluate(() => window.__notReloaded === true);

const unnamedControls = async (): Promise<string[]> => {
  const roles = new Set(['button', 'checkbox', 'link', 'progressbar', 'textbox', 'combobox']);
  const found: string[] = [];
  const visit = (node: SerializedAXNode | null | undefined) => {
    if (!node) return;
    if (roles.has(node.role) && !(node.name ?? '').trim()) found.push(`${node.role} ${JSON.stringify(node)}`);
    for (const child of node.children ?? []) visit(child);
  };
  visit(await page.accessibility.snapshot({ interestingOnly: false }));
  return found;
};

beforeAll(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  await mkdir(README_SHOTS, { recursive: true });
  await putAccountOnPlan(local.stack, localSubFor(ADA), 'pro');
  browser = await launchTestBrowser();
  page = await browser.newPage();
  await page.setViewport(DESKTOP);
  watchPage(page, 'ada', problems);
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (r.method() === 'GET' && url.pathname.startsWith('/v1/'))
      apiReads.push({ path: `${url.pathname}${url.search}`, at: Date.now() });
  });
  await browser
    .defaultBrowserContext()
    .overridePermissions(new URL(local.stack.dashboardUrl).origin, [
      'clipboard-read',
      'clipboard-sanitized-write',
    ]);
  await page.goto(local.stack.dashboardUrl, { waitUntil: 'networkidle0' });
  await clickButton('Sign in');
  await page.waitForSelector('#email');
  await page.type('#email', ADA);
  await Promise.all([
    page.waitForNavigation({ waitUntil: 'networkidle0' }),
    page.click('button[type=submit]'),
  ]);
  await page.waitForSelector('nav[aria-label="Dashboard"]');
});

afterAll(async () => {
  release();
  await browser?.close();
});

describe('the dashboard, for work that finishes later', () => {
  it('shows an async render move to completed without a reload, polling only while it is unfinished and shown', async () => {
    hold();
    const token = await session();
    const created = await local.api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: '<p>Later</p>', async: true },
    });
    expect(created.status, created.text).toBe(202);
    const row = `tr[data-job-id="${created.json.id}"]`;
    await goTo('#/jobs', 'Jobs');
    await page.waitForSelector(row);
    await markPage();
    expect(await textOf(`${row} td[data-label=Status]`)).toMatch(/^(Pending|Rendering) \(async\)$/);

    // The control: shown and unfinished, the page asks again every POLL_INTERVAL_MS.
    const window = POLL_INTERVAL_MS * 2.5;
    expect(await readsWithin('/v1/pdf?', window)).toBe(true);
    // That read answered, so its next one is already timed (the one hiding must outlast below).
    await page.waitForNetworkIdle({ idleTime: 300 });
    // Hidden, it asks nothing, even once the job has ended.
    await setHidden(true);
    await new Promise((r) => setTimeout(r, POLL_INTERVAL_MS));
    const whileHidden = readsDuring('/v1/pdf?', window);
    release();
    expect((await waitForJob(local.api, token, created.json.id)).status).toBe('completed');
    expect(await whileHidden).toBe(0);
    expect(await textOf(`${row} td[data-label=Status]`)).toMatch(/^(Pending|Rendering)/);

    // Shown again, it asks at once: the job is completed on screen, on the same page.
    await setHidden(false);
    await waitForText(`${row} td[data-label=Status]`, /^Completed \(async\)$/);
    expect(await stillSamePage()).toBe(true);
    expect(await page.$(`${row} .row-actions button`)).not.toBeNull();
    // Nothing on screen can change any more: no more reads.
    await page.waitForNetworkIdle({ idleTime: 300 });
    expect(await readsDuring('/v1/pdf', window)).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, 'async-job-completed.png') });
  });

  let batchId = '';

  it('follows a batch made through the API: its progress, its jobs page by page, to completion', async () => {
    hold();
    const token = await session();
    const res = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: {
        html: '<p>Item {{ n }}</p>',
        items: Array.from({ length: BATCH_ITEMS }, (_, n) => ({ variables: { n } })),
        output: { merged_pdf: true, zip: true },
      },
    });
    expect(res.status, res.text).toBe(202);
    batchId = res.json.id;

    await goTo('#/batches', 'Batches');
    const row = `tr[data-batch-id="${batchId}"]`;
    await page.waitForSelector(row);
    expect(await textOf(`${row} td[data-label=Status]`)).toBe('Processing');
    expect(await textOf(`${row} [data-field=progress]`)).toBe(`0 of ${BATCH_ITEMS} done`);
    expect(await textOf(`${row} [data-field=counts]`)).toMatch(/pending|rendering/);
    await page.screenshot({ path: join(ARTIFACTS, 'batches-processing.png') });

    await page.click(`${row} a.batch-link`);
    await waitForText('h1', `Batch ${batchId}`);
    await markPage();
    await page.waitForSelector('table.jobs tbody tr');
    // Item order, a page at a time.
    expect(await page.$$('table.jobs tbody tr')).toHaveLength(20);
    await clickButton('More jobs');
    await page.waitForFunction(
      (n: number) => document.querySelectorAll('table.jobs tbody tr').length === n,
      {},
      BATCH_ITEMS,
    );
    const listed = await page.$$eval('table.jobs tbody tr', (rows) => rows.map((r) => r.dataset.jobId));
    const jobs = (await local.api(`/v1/batches/${batchId}/jobs?limit=100`, { token })).json;
    expect(listed).toEqual(jobs.map((j: { id: string }) => j.id));

    release();
    await waitForText('[data-field=batch-status]', /^Completed/, 30_000);
    expect(await textOf('main [data-field=progress]')).toBe(`${BATCH_ITEMS} of ${BATCH_ITEMS} done`);
    expect(await textOf('main [data-field=counts]')).toBe(`${BATCH_ITEMS} completed`);
    await page.waitForFunction(
      (n: number) =>
        [...document.querySelectorAll('table.jobs tbody tr td[data-label=Status]')].filter((td) =>
          td.textContent.startsWith('Completed'),
        ).length === n,
      { timeout: 20_000 },
      BATCH_ITEMS,
    );
    expect(await stillSamePage()).toBe(true);
    // Every completed job has its download.
    expect(
      await page.$$eval('table.jobs tbody tr .row-actions button', (bs) =>
        bs.filter((b) => b.textContent.startsWith('Download')),
      ),
    ).toHaveLength(BATCH_ITEMS);
    const downloadAnswer = page.waitForResponse((r) => r.url().endsWith(`/v1/pdf/${listed[0]}`));
    await page.click(`tr[data-job-id="${listed[0]}"] .row-actions button`);
    const fresh = await (await downloadAnswer).json();
    expect(fresh.download_url).toMatch(/^http/);

    // The batch's outputs, once built: a download for the merged PDF and one for the ZIP.
    await page.waitForSelector('[data-field=merged-pdf]', { timeout: 30_000 });
    const links = await page.$$eval('[data-field=outputs] a', (as) =>
      as.map((a) => [a.textContent, (a as Dom).href]),
    );
    expect(links.map(([text]) => text)).toEqual(['Merged PDF', 'ZIP']);
    const [merged, zip] = await Promise.all(links.map(([, url]) => fetch(url as string)));
    expect(new Uint8Array(await (merged as Response).arrayBuffer()).slice(0, 5)).toEqual(
      new TextEncoder().encode('%PDF-'),
    );
    expect(new Uint8Array(await (zip as Response).arrayBuffer()).slice(0, 2)).toEqual(
      new TextEncoder().encode('PK'),
    );

    // The Jobs page links each item to its batch (the newest items come first there).
    await goTo('#/jobs', 'Jobs');
    const last = `tr[data-job-id="${listed.at(-1)}"]`;
    await page.waitForSelector(last);
    expect(await textOf(`${last} [data-field=batch]`)).toBe(`batch ${batchId}`);
    expect(await page.$eval(`${last} [data-field=batch]`, (a) => (a as Dom).hash)).toBe(
      `#/batches/${batchId}`,
    );
    await goTo('#/batches', 'Batches');
    await waitForText(`tr[data-batch-id="${batchId}"] td[data-label=Status]`, 'Completed');
  });

  let webhookId = '';

  it('merges jobs picked on the Jobs page into one PDF, in the order they were picked, and downloads it', async () => {
    const token = await session();
    // The batch's last two items: the newest jobs, on the Jobs page's first page.
    const jobs = (await local.api(`/v1/batches/${batchId}/jobs?limit=100`, { token })).json as {
      id: string;
      item_index: number;
    }[];
    const [first, second] = jobs.slice(-2).map((j) => j.id);
    await goTo('#/jobs', 'Jobs');
    await page.waitForSelector(`tr[data-job-id="${second}"] [data-field=select]`);
    await page.click(`tr[data-job-id="${second}"] [data-field=select]`);
    await page.click(`tr[data-job-id="${first}"] [data-field=select]`);
    await clickButton('Merge 2 selected');
    await waitForText('[data-field=merged]', /2 pages, completed/);
    const mergedId = await textOf('[data-field=merged] code');
    const merged = (await local.api(`/v1/pdf/${mergedId}`, { token })).json;
    expect(merged).toMatchObject({ kind: 'merge', status: 'completed', page_count: 2 });
    // Picked second first: the merge's pages follow the picking order.
    const pdf = new Uint8Array(await (await fetch(merged.download_url)).arrayBuffer());
    const text = execFileSync('pdftotext', ['-', '-'], { input: pdf, encoding: 'utf8' });
    const order = [second, first].map((id) => jobs.find((j) => j.id === id)?.item_index);
    expect(text.replace(/\s+/g, ' ').trim()).toBe(order.map((n) => `Item ${n}`).join(' '));
    const downloadAnswer = page.waitForResponse((r) => r.url().endsWith(`/v1/pdf/${mergedId}`));
    await clickButton(`Download PDF of ${mergedId}`, '[data-field=merged]');
    expect((await (await downloadAnswer).json()).download_url).toMatch(/^http/);
  });

  it('creates a webhook endpoint and shows its signing secret once, never after a reload', async () => {
    await goTo('#/webhooks', 'Webhooks');
    await page.type('#webhook-url', receiver.url('/ok/dashboard'));
    await page.type('#webhook-description', 'Order system');
    // Every event is chosen at first; batch.completed is left out.
    await page.click('input[value="batch.completed"]');
    await clickButton('Create endpoint');
    await page.waitForSelector('#new-webhook-secret');
    const secret = await page.$eval('#new-webhook-secret', (e) => (e as Dom).value as string);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{20,}$/);
    expect(await textOf('.new-webhook .warning')).toContain('you will not see it again');
    await clickButton('Copy signing secret');
    await waitForText('.new-webhook [role=status]', 'Copied.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await page.screenshot({ path: join(ARTIFACTS, 'webhook-created.png') });

    const endpoints = (await local.api('/v1/webhooks', { token: await session() })).json;
    expect(endpoints).toHaveLength(1);
    webhookId = endpoints[0].id;
    expect(endpoints[0]).toMatchObject({
      url: receiver.url('/ok/dashboard'),
      description: 'Order system',
      events: ['job.completed', 'job.failed', 'job.cancelled'],
    });

    await clickButton('I have copied the secret');
    await page.waitForSelector(`tr[data-webhook-id="${webhookId}"]`);
    expect(await page.$('#new-webhook-secret')).toBeNull();
    expect(await page.content()).not.toContain(secret);
    await page.reload({ waitUntil: 'networkidle0' });
    await waitForText('h1', 'Webhooks');
    await page.waitForSelector(`tr[data-webhook-id="${webhookId}"]`);
    expect(await textOf(`tr[data-webhook-id="${webhookId}"]`)).toContain('Order system');
    expect(await page.content()).not.toContain(secret);
    expect(await page.content()).not.toContain('whsec_');
  });

  it('sends a test event and lists its delivery with each attempt, then redelivers it', async () => {
    await markPage();
    await clickButton(`Send test event to ${receiver.url('/ok/dashboard')}`);
    await waitForText('h1', 'Webhook endpoint');
    await page.waitForSelector('tr[data-delivery-id]');
    const [received] = await receiver.waitFor('/ok/dashboard', 1);
    const deliveryId = String(received?.headers['webhook-id']);
    const row = `tr[data-delivery-id="${deliveryId}"]`;
    await page.waitForSelector(row);
    expect(await textOf(`${row} th`)).toContain('webhook.test');
    // Without a reload, the attempt's answer shows.
    await waitForText(`${row} [data-field=delivery-status]`, 'Succeeded');
    expect(await textOf(`${row} li[data-attempt="1"]`)).toMatch(/^Succeeded · HTTP 204 · \d+ ms · .+\d/);
    expect(await stillSamePage()).toBe(true);

    await clickButton(`Redeliver ${deliveryId}`);
    await receiver.waitFor('/ok/dashboard', 2);
    await page.waitForSelector(`${row} li[data-attempt="2"]`, { timeout: 15_000 });
    await waitForText(`${row} [data-field=delivery-status]`, 'Succeeded');
    expect(await textOf(`${row} li[data-attempt="2"]`)).toMatch(/^Succeeded · HTTP 204/);
    await page.screenshot({ path: join(ARTIFACTS, 'webhook-deliveries.png') });
  });

  it('fits a phone screen on the new pages, every action inside the viewport, every control named', async () => {
    const pages = [
      ['#/batches', 'Batches', 'batches'],
      [`#/batches/${batchId}`, `Batch ${batchId}`, 'batch'],
      ['#/webhooks', 'Webhooks', 'webhooks'],
      [`#/webhooks/${webhookId}`, 'Webhook endpoint', 'webhook'],
    ] as const;
    for (const [viewport, width] of [
      [DESKTOP, 'desktop'],
      [PHONE, 'phone'],
    ] as const) {
      await setViewport(viewport);
      for (const [hash, heading, name] of pages) {
        await goTo(hash, heading);
        await page.waitForNetworkIdle({ idleTime: 300 });
        const { scrollWidth, innerWidth } = await page.evaluate(() => ({
          scrollWidth: document.documentElement.scrollWidth,
          innerWidth: window.innerWidth,
        }));
        expect(scrollWidth, `${name} ${width}`).toBeLessThanOrEqual(innerWidth);
        const actions = await page.$$eval('main button, main a', (els) =>
          els
            .filter((e) => e.getClientRects().length > 0)
            .map((e) => {
              e.scrollIntoView({ block: 'center', inline: 'nearest' });
              const r = e.getBoundingClientRect();
              return {
                label: (e.textContent ?? '').trim(),
                inside:
                  r.left >= 0 &&
                  r.top >= 0 &&
                  r.right <= window.innerWidth &&
                  r.bottom <= window.innerHeight &&
                  window.scrollX === 0,
              };
            }),
        );
        expect(actions.length, name).toBeGreaterThan(0);
        expect(
          actions.filter((a) => !a.inside),
          `${name} ${width}`,
        ).toEqual([]);
        if (width === 'desktop') expect(await unnamedControls(), name).toEqual([]);
        await page.evaluate(() => window.scrollTo(0, 0));
        await page.screenshot({ path: join(README_SHOTS, `${name}-${width}.png`) });
      }
    }
    await setViewport(DESKTOP);
  });

  it('deletes the endpoint after a confirmation', async () => {
    await goTo('#/webhooks', 'Webhooks');
    await clickButton(`Delete endpoint ${receiver.url('/ok/dashboard')}`);
    await page.waitForSelector('dialog[open]');
    expect(await unnamedControls()).toEqual([]);
    await clickButton('Delete endpoint', 'dialog[open]');
    await page.waitForFunction(() => !document.querySelector('dialog[open]'));
    await waitForText('main p.muted', 'No endpoints yet.');
    expect((await local.api(`/v1/webhooks/${webhookId}`, { token: await session() })).status).toBe(404);
  });

  it("lists a failing endpoint's attempts with the receiver's status, until the retry window closes", async () => {
    const token = await session();
    const created = await local.api('/v1/webhooks', {
      method: 'POST',
      token,
      body: { url: receiver.url('/fail/dashboard') },
    });
    expect(created.status, created.text).toBe(201);
    const test = await local.api(`/v1/webhooks/${created.json.id}/test`, { method: 'POST', token });
    expect(test.status, test.text).toBe(201);
    await goTo(`#/webhooks/${created.json.id}`, 'Webhook endpoint');
    const row = `tr[data-delivery-id="${test.json.id}"]`;
    await page.waitForSelector(row);
    // Attempts at 0, 1 and 3 s (the retry schedule above), then failed: shown as they happen.
    await waitForText(`${row} [data-field=delivery-status]`, 'Failed', 30_000);
    const attempts = await page.$$eval(`${row} li[data-attempt]`, (lis) => lis.map((li) => li.textContent));
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    for (const attempt of attempts) expect(attempt).toMatch(/^Failed · HTTP 500 · \d+ ms · .+\d/);
  });

  it('logged no console error (no refused Content-Security-Policy), uncaught exception or failed request', () => {
    expect(problems).toEqual([]);
  });
});
