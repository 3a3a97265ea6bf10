/**
 * The dashboard end to end, in a real browser (the project's Chromium) against the local stack:
 * sign-in through the local stand-in for Cognito (authorization code with PKCE), an API key made,
 * copied, used from here and revoked, a template written in the editor with its PDF previewed
 * (the bytes the page downloaded are read back), saved, broken (the error at its line), versioned,
 * made public and rendered by another account, jobs, usage, the session renewed, ended by a 401 and
 * signed out. Then the same pages at phone width, one flow with the keyboard alone, an accessible
 * name on every control, and no console error, uncaught exception or failed request anywhere.
 *
 * Screenshots of each page go to test/artifacts/dashboard/ (ignored by git).
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page, SerializedAXNode } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY_VARIABLE } from '../../lib/dashboard/site/snippets.js';
import { localSubFor } from '../../lib/local/dashboard.js';
import { launchTestBrowser, type PageProblem, watchPage } from '../helpers/browser.js';
import { putAccountOnPlan, useLocalStack } from '../helpers/local-stack.js';
import { PAPER_SIZES_PT, readPdf } from '../helpers/pdf.js';
import { pdfText } from '../helpers/pdf-readers.js';
import { certificateFor } from '../helpers/signing-keys.js';

/*
 * Browser globals, for the functions this file runs in the page (page.evaluate and the like): typed
 * loosely here instead of adding the DOM library to the whole program, whose code runs in Node.
 */
// biome-ignore lint/suspicious/noExplicitAny: see above
type Dom = any;
declare const document: Dom;
declare const location: Dom;
declare const window: Dom;
declare const sessionStorage: Dom;
declare const localStorage: Dom;
declare const navigator: Dom;
declare const getComputedStyle: Dom;
declare const DataTransfer: Dom;
declare const ClipboardEvent: Dom;
type Element = Dom;
type HTMLElement = Dom;
type HTMLButtonElement = Dom;
type HTMLIFrameElement = Dom;
type HTMLInputElement = Dom;
type HTMLMeterElement = Dom;
type ShadowRoot = Dom;

const ARTIFACTS = fileURLToPath(new URL('../artifacts/dashboard/', import.meta.url));
/**
 * The README's screenshots: into test/artifacts/ on every run, into docs/screenshots/ when
 * DASHBOARD_SCREENSHOTS=docs (so that a test run leaves the committed ones alone).
 */
const README_SHOTS =
  process.env.DASHBOARD_SCREENSHOTS === 'docs'
    ? fileURLToPath(new URL('../../docs/screenshots/', import.meta.url))
    : join(ARTIFACTS, 'readme');
const DESKTOP = { width: 1366, height: 900 };
const PHONE = { width: 390, height: 844, isMobile: true, hasTouch: true };
/** Short enough that the page renews the session (a minute before expiry) while the test runs. */
const SESSION_TTL_SECONDS = 70;
const ADA = 'ada@example.com';
const BOB = 'bob@example.com';

const local = useLocalStack({ dashboardSessionTtlSeconds: SESSION_TTL_SECONDS });

let browser: Browser;
let page: Page;
let bobContext: BrowserContext;
const problems: PageProblem[] = [];
/** PDFs the pages downloaded from storage (the preview), newest last. */
const downloadedPdfs: { page: string; bytes: Buffer }[] = [];
/** Token endpoint requests (form bodies) the dashboard made. */
const tokenRequests: string[] = [];
/** Answers to POST /v1/pdf the page got: status and whether the API replayed it. */
const renders: { status: number; replayed: boolean }[] = [];
/** Answers to POST /v1/previews the page got (issue 40: the editor previews there, for free). */
const previews: { page: string; status: number }[] = [];

const shot = (p: Page, name: string) => p.screenshot({ path: join(ARTIFACTS, `${name}.png`) });

const observe = (p: Page, name: string) => {
  watchPage(p, name, problems);
  p.on('response', (r) => {
    const url = r.url();
    if (url.startsWith(local.stack.s3Endpoint) && r.request().method() === 'GET' && r.ok()) {
      r.buffer().then(
        (bytes) => downloadedPdfs.push({ page: name, bytes }),
        () => {},
      );
    }
    if (url.endsWith('/v1/pdf') && r.request().method() === 'POST') {
      renders.push({ status: r.status(), replayed: r.headers()['idempotent-replayed'] === 'true' });
    }
    if (url.endsWith('/v1/previews') && r.request().method() === 'POST') {
      previews.push({ page: name, status: r.status() });
    }
  });
  p.on('request', (r) => {
    if (r.url().endsWith('/local/oauth2/token')) tokenRequests.push(r.postData() ?? '');
  });
};

/**
 * The text of the first element `selector` finds, once there is one: parts of a page render after
 * its heading (the snippets' code loads later), which on a loaded machine is a moment later.
 */
const textOf = async (p: Page, selector: string) => {
  await p.waitForSelector(selector);
  return p.$eval(selector, (e) => e.textContent ?? '');
};

const waitForText = async (p: Page, selector: string, text: string | RegExp, timeout = 20_000) => {
  try {
    await p.waitForFunction(
      (sel: string, source: string, flags: string) =>
        [...document.querySelectorAll(sel)].some((e) => new RegExp(source, flags).test(e.textContent ?? '')),
      { timeout },
      selector,
      typeof text === 'string' ? text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : text.source,
      typeof text === 'string' ? '' : text.flags,
    );
  } catch (e) {
    // What the page showed instead, for whoever reads the failure.
    await shot(p, `failed-${selector.replace(/\W+/g, '-')}-${Date.now()}`).catch(() => {});
    throw e;
  }
};

const clickButton = async (p: Page, text: string, within = 'body') => {
  const handle = await p.waitForFunction(
    (scope: string, label: string) =>
      [...document.querySelectorAll(`${scope} button`)].find(
        (b) => (b.textContent ?? '').trim() === label && !(b as HTMLButtonElement).disabled,
      ),
    {},
    within,
    text,
  );
  await (handle as unknown as { click(): Promise<void> }).click();
};

const goTo = async (p: Page, hash: string, heading: string | RegExp) => {
  await p.evaluate((h) => {
    location.hash = h;
  }, hash);
  await waitForText(p, 'h1', heading);
};

/** Waits for a PDF downloaded by `pageName` whose text has every string of `texts`. */
const waitForPdf = async (pageName: string, texts: readonly string[], timeoutMs = 30_000, from = 0) => {
  const deadline = Date.now() + timeoutMs;
  const checked = new Set<Buffer>();
  while (Date.now() < deadline) {
    for (const d of downloadedPdfs.slice(from)) {
      if (d.page !== pageName || checked.has(d.bytes)) continue;
      checked.add(d.bytes);
      const pdf = await readPdf(d.bytes);
      if (texts.every((t) => pdf.text.includes(t))) return pdf;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const seen = await Promise.all(
    downloadedPdfs
      .slice(from)
      .filter((d) => d.page === pageName)
      .map(async (d) => (await readPdf(d.bytes)).text),
  );
  throw new Error(
    `no PDF with ${JSON.stringify(texts)} was downloaded by the ${pageName} page (it downloaded ${JSON.stringify(seen)})`,
  );
};

/** Replaces the editor's text as a paste does (typing would meet auto-closed tags and brackets). */
/** The editor is in a shadow root (lib/dashboard/site/editor.ts): `>>>` reaches into it. */
const EDITOR = '>>> .cm-content';

/**
 * Waits for `selector` inside the editor's shadow root (by polling: waitForSelector watches the
 * document's mutations, not the shadow root's).
 */
const waitInEditor = (p: Page, selector: string) =>
  p.waitForFunction(
    (sel: string) =>
      document.querySelector('.code-editor > div')?.shadowRoot?.querySelector(sel) ?? undefined,
    { polling: 100 },
    selector,
  );

const setEditorText = async (p: Page, text: string) => {
  await waitInEditor(p, '.cm-content');
  await p.click(EDITOR);
  await p.keyboard.down('Control');
  await p.keyboard.press('KeyA');
  await p.keyboard.up('Control');
  await p.$eval(
    EDITOR,
    (el, t) => {
      const data = new DataTransfer();
      data.setData('text/plain', t);
      el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    },
    text,
  );
};

const replaceField = async (p: Page, selector: string, text: string) => {
  await p.click(selector);
  await p.keyboard.down('Control');
  await p.keyboard.press('KeyA');
  await p.keyboard.up('Control');
  await p.keyboard.press('Backspace');
  await p.type(selector, text);
};

/**
 * Changes the viewport. A change into or out of mobile emulation reloads the page, and the app
 * starts after the load event: a page address changed before it has started is put back by the
 * sign-in's restore, so this waits for the app.
 */
const setViewport = async (viewport: Parameters<Page['setViewport']>[0]) => {
  await page.setViewport(viewport);
  await page.waitForSelector('nav[aria-label="Dashboard"]');
  await page.waitForNetworkIdle({ idleTime: 300 });
};

const signIn = async (p: Page, email: string) => {
  await p.goto(local.stack.dashboardUrl, { waitUntil: 'networkidle0' });
  await clickButton(p, 'Sign in');
  await p.waitForSelector('#email');
  await p.type('#email', email);
  await Promise.all([p.waitForNavigation({ waitUntil: 'networkidle0' }), p.click('button[type=submit]')]);
  await p.waitForSelector('nav[aria-label="Dashboard"]');
};

/** A PDF's text without the PREVIEW mark a preview carries, its spaces made one. */
const withoutMark = (text: string) => text.replaceAll('PREVIEW', '').replace(/\s+/g, ' ').trim();

/** What an account's renders have left behind: its units used and its jobs. */
const ledger = async (token: string) => ({
  rendersUsed: (await local.api('/v1/usage', { token })).json.renders_used as number,
  jobs: ((await local.api('/v1/pdf?limit=100', { token })).json as { id: string }[]).map((j) => j.id),
});

const storedUser = (p: Page) =>
  p.evaluate(() => {
    const key = Object.keys(sessionStorage).find((k) => k.startsWith('oidc.user:'));
    return key
      ? (JSON.parse(sessionStorage.getItem(key) ?? '{}') as { id_token: string; refresh_token: string })
      : undefined;
  });

const sessionFor = (email: string) => local.stack.issueToken({ sub: localSubFor(email), email });

/** Form controls and other widgets without an accessible name, from the page's accessibility tree. */
const unnamedControls = async (p: Page): Promise<string[]> => {
  const roles = new Set([
    'button',
    'checkbox',
    'combobox',
    'link',
    'listbox',
    'meter',
    'radio',
    'searchbox',
    'slider',
    'spinbutton',
    'switch',
    'textbox',
    'Iframe',
  ]);
  const found: string[] = [];
  const visit = (node: SerializedAXNode | null | undefined) => {
    if (!node) return;
    if (roles.has(node.role) && !(node.name ?? '').trim()) found.push(`${node.role} ${JSON.stringify(node)}`);
    for (const child of node.children ?? []) visit(child);
  };
  visit(await p.accessibility.snapshot({ interestingOnly: false }));
  // Every native control is in the tree above; this catches any the tree would hide.
  const elements = await p.$$eval(
    'input:not([type=hidden]), select, textarea, button',
    (els) => els.filter((e) => !(e as HTMLElement).closest('[hidden], [aria-hidden="true"]')).length,
  );
  expect(elements).toBeGreaterThan(0);
  return found;
};

let key = '';
let templateId = '';
let firstIdToken = '';

beforeAll(async () => {
  await rm(ARTIFACTS, { recursive: true, force: true });
  await mkdir(ARTIFACTS, { recursive: true });
  await mkdir(README_SHOTS, { recursive: true });
  // Ada renders a lot in a minute (every preview is a render): a plan with room for it.
  await putAccountOnPlan(local.stack, localSubFor(ADA), 'pro');
  browser = await launchTestBrowser();
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 860 });
  observe(page, 'ada');
  await browser
    .defaultBrowserContext()
    .overridePermissions(new URL(local.stack.dashboardUrl).origin, [
      'clipboard-read',
      'clipboard-sanitized-write',
    ]);
});

afterAll(async () => {
  await browser?.close();
});

describe('the dashboard', () => {
  it('signs in through the local sign-in page with an authorization code and PKCE', async () => {
    await page.goto(local.stack.dashboardUrl, { waitUntil: 'networkidle0' });
    expect(await textOf(page, 'h1')).toBe('PDF service dashboard');
    await shot(page, '01-sign-in');
    await clickButton(page, 'Sign in');
    await page.waitForSelector('#email');
    const authorize = new URL(page.url());
    expect(authorize.pathname).toBe('/local/oauth2/authorize');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    await shot(page, '02-local-sign-in');
    await page.type('#email', ADA);
    await Promise.all([
      page.waitForNavigation({ waitUntil: 'networkidle0' }),
      page.click('button[type=submit]'),
    ]);
    await waitForText(page, 'h1', 'API keys');

    expect(tokenRequests[0]).toMatch(/grant_type=authorization_code/);
    expect(tokenRequests[0]).toMatch(/code_verifier=[\w-]{43,}/);
    // The code is gone from the address bar; tokens are in sessionStorage only.
    expect(page.url()).toBe(local.stack.dashboardUrl);
    const user = await storedUser(page);
    expect(user?.id_token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    firstIdToken = user?.id_token ?? '';
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await textOf(page, '.email')).toBe(ADA);
    await shot(page, '03-keys');
  });

  it('creates an API key, shows it once with a copy button, and the key works with the API', async () => {
    await page.type('#key-name', 'e2e-key');
    await clickButton(page, 'Create key');
    await page.waitForSelector('#new-key-value');
    key = await page.$eval('#new-key-value', (e) => (e as HTMLInputElement).value);
    expect(key).toMatch(/^pdf_live_[A-Za-z0-9]{40}$/);
    expect(await textOf(page, '.new-key .warning')).toContain('you will not see it again');
    await clickButton(page, 'Copy');
    await waitForText(page, '.new-key [role=status]', 'Copied to the clipboard.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    // Code for a first render comes with it, the key already set.
    const firstRender = await textOf(page, '[data-snippets="first-render"] code');
    expect(firstRender).toContain(`export ${API_KEY_VARIABLE}='${key}'`);
    expect(firstRender).toContain(`${new URL('v1/pdf', local.stack.dashboardUrl).origin}/v1/pdf`);
    const { stdout } = await promisify(execFile)('bash', ['-c', firstRender]);
    expect(JSON.parse(stdout)).toMatchObject({ status: 'completed', page_count: 1 });
    await shot(page, '04-key-created');

    const usage = await local.api('/v1/usage', { token: key });
    expect(usage.status).toBe(200);

    await clickButton(page, 'I have copied the key');
    await waitForText(page, 'tbody th', 'e2e-key');
    expect(await page.content()).not.toContain(key);
    expect(await textOf(page, 'tbody tr')).toContain(key.slice(0, 16));
    // Used once: the list says when.
    await goTo(page, '#/usage', 'Usage');
    await goTo(page, '#/keys', 'API keys');
    await page.waitForSelector('tbody tr');
    expect(await page.$eval('tbody tr td:nth-of-type(3)', (e) => e.textContent)).not.toBe('Never');
  });

  it('creates a template in the editor and previews its PDF with the variables beside it', async () => {
    const ada = await sessionFor(ADA);
    const before = await ledger(ada);
    await goTo(page, '#/templates', 'Templates');
    await page.click('a[href="#/templates/new"]');
    await waitForText(page, 'h1', 'New template');
    await waitInEditor(page, '.cm-content');
    // The editor highlights HTML and Jinja: in the starter text, tag names and Jinja's delimiters
    // have colours of their own.
    const colours = await page.waitForFunction(() => {
      const root = document.querySelector('.code-editor > div')?.shadowRoot;
      const spans = [...(root?.querySelectorAll('.cm-content span') ?? [])];
      const colour = (text: string) => {
        const span = spans.find((s) => s.textContent === text);
        return span && getComputedStyle(span).color;
      };
      const line = root?.querySelector('.cm-line');
      const found = { text: line && getComputedStyle(line).color, tag: colour('h1'), jinja: colour('{{') };
      return found.tag && found.jinja ? found : undefined;
    });
    const { text, tag, jinja } = (await colours.jsonValue()) as Record<string, string>;
    expect(new Set([text, tag, jinja]).size).toBe(3);
    await page.type('#tpl-name', 'Welcome letter');
    await setEditorText(page, '<h1>Hello {{ customer }}</h1>\n<p>Order {{ order }}</p>\n');
    // What the text reads and the sample lacks shows as it is typed, before any render answers.
    await waitForText(page, '[data-field=missing-variables]', /lacks: order\./);
    await replaceField(page, '#tpl-variables', '{"customer": "Grace Hopper", "order": "A-42"}');
    await page.waitForFunction(() => !document.querySelector('[data-field=missing-variables]'));
    const pdf = await waitForPdf('ada', ['Hello Grace Hopper', 'Order A-42']);
    expect(pdf.pageCount).toBe(1);
    // A preview says so on its page.
    expect(pdf.text).toContain('PREVIEW');
    await waitForText(page, '.preview-status', /^Showing the editor’s text: 1 page/);
    expect(await page.$eval('iframe.pdf-frame', (e) => (e as HTMLIFrameElement).src)).toMatch(/^blob:/);
    await shot(page, '05-template-new');

    await clickButton(page, 'Create template');
    await page.waitForFunction(() => /^#\/templates\/tpl_/.test(location.hash));
    templateId = decodeURIComponent((await page.evaluate(() => location.hash)).split('/')[2] ?? '');
    await waitForText(page, 'h1', 'Edit “Welcome letter”');
    const saved = await local.api(`/v1/templates/${templateId}`, { token: key });
    expect(saved.json).toMatchObject({
      name: 'Welcome letter',
      version: 1,
      variables: ['customer', 'order'],
      sample_variables: { customer: 'Grace Hopper', order: 'A-42' },
    });
    await page.waitForFunction(() =>
      document.querySelector('.preview-status')?.textContent?.startsWith('Showing'),
    );

    // A reload forgets everything the page held: the sample comes back from the API, and renders.
    const downloaded = downloadedPdfs.length;
    await page.reload({ waitUntil: 'networkidle0' });
    await waitForText(page, 'h1', 'Edit “Welcome letter”');
    expect(JSON.parse(await page.$eval('#tpl-variables', (e) => (e as HTMLInputElement).value))).toEqual({
      customer: 'Grace Hopper',
      order: 'A-42',
    });
    const preview = await waitForPdf('ada', ['Hello Grace Hopper', 'Order A-42'], 30_000, downloaded);
    expect(await page.$('[data-field=missing-variables]')).toBeNull();
    // Issue 40: all those previews cost nothing: no render from the page, no unit used, no job.
    expect(previews.filter((r) => r.page === 'ada' && r.status === 200).length).toBeGreaterThanOrEqual(2);
    expect(renders).toEqual([]);
    expect(await ledger(ada)).toEqual(before);

    // The page shows the id, and code that renders the template with its sample: the curl snippet,
    // copied and run with the key, gives the preview's text.
    expect(await textOf(page, '[data-field=template-id]')).toBe(templateId);
    await clickButton(page, 'Copy curl snippet');
    const curl = (await page.evaluate(() => navigator.clipboard.readText())) as string;
    expect(curl).toContain(templateId);
    const { stdout } = await promisify(execFile)('bash', ['-c', curl], {
      env: { ...process.env, [API_KEY_VARIABLE]: key },
    });
    const job = JSON.parse(stdout);
    expect(job).toMatchObject({ status: 'completed', template_id: templateId, template_version: 1 });
    const fromCode = await readPdf(new Uint8Array(await (await fetch(job.download_url)).arrayBuffer()));
    expect(fromCode.text).not.toContain('PREVIEW');
    expect(withoutMark(fromCode.text)).toBe(withoutMark(preview.text));
    for (const language of ['JavaScript', 'Python']) {
      await page.$$eval(
        '[data-snippets=template] label',
        (labels, l) => (labels.find((e) => e.textContent?.trim() === l) as HTMLElement | undefined)?.click(),
        language,
      );
      await waitForText(page, '[data-snippets=template] code', templateId);
    }
    expect(await textOf(page, '[data-snippets=template] code')).toContain('requests.post(');
  });

  it("shows no missing-variable warning for the README's invoice, and only a name a render needs (issue 40)", async () => {
    const invoice =
      '<h1>Invoice {{ number }}</h1>{% for l in lines %}<p>{{ l.item }}: {{ "%.2f"|format(l.price) }}</p>{% endfor %}\n' +
      "<p>Total {{ lines|sum(attribute='price') }}</p>\n" +
      '{% macro row(label, value) %}<p>{{ label }}: {{ value }}</p>{% endmacro %}{% set paid = true %}' +
      '{% for k in lines %}{{ loop.index }}{% endfor %}{{ row("Paid", paid) }}\n';
    await setEditorText(page, invoice);
    await replaceField(page, '#tpl-variables', '{"lines": [{"item": "Pens", "price": 3.5}]}');
    // The one name a render needs and the sample lacks: not `attribute`, `l`, `k`, `label` or `paid`.
    await waitForText(page, '[data-field=missing-variables]', /lacks: number\./);
    await replaceField(
      page,
      '#tpl-variables',
      '{"number": "2026-0042", "lines": [{"item": "Pens", "price": 3.5}]}',
    );
    await waitForPdf('ada', ['Invoice 2026-0042', 'Total 3.5', 'Paid: True']);
    expect(await page.$('[data-field=missing-variables]')).toBeNull();
    // Put back for the tests after this one.
    await setEditorText(page, '<h1>Hello {{ customer }}</h1>\n<p>Order {{ order }}</p>\n');
    await replaceField(page, '#tpl-variables', '{"customer": "Grace Hopper", "order": "A-42"}');
    await waitForPdf('ada', ['Hello Grace Hopper', 'Order A-42']);
  });

  it("keeps a sample's key order and numbers as sent: in the editor, its preview and a saved edit (issue 22)", async () => {
    const session = (await storedUser(page))?.id_token ?? '';
    const html = '<p>{% for y, t in totals.items() %}[{{ y }}:{{ t }}]{% endfor %} {{ n }} {{ id }}</p>';
    const created = await local.api('/v1/templates', {
      method: 'POST',
      token: session,
      headers: { 'content-type': 'application/json' },
      // As text: a JavaScript object could not hold this sample.
      body: `{"name": "By year", "html": ${JSON.stringify(html)}, "sample_variables": {"totals": {"2024": 5, "2023": 4, "2019": 1}, "n": 10.0, "id": 123456789012345678}}`,
    });
    expect(created.status, created.text).toBe(201);
    const id = created.json.id as string;
    const from = downloadedPdfs.length;
    await goTo(page, `#/templates/${id}`, 'Edit “By year”');
    const shown = await page.$eval('#tpl-variables', (e) => (e as HTMLInputElement).value);
    expect(shown.replace(/\s/g, '')).toBe(
      '{"totals":{"2024":5,"2023":4,"2019":1},"n":10.0,"id":123456789012345678}',
    );
    await waitForPdf('ada', ['[2024:5][2023:4][2019:1] 10.0 123456789012345678'], 30_000, from);
    await replaceField(
      page,
      '#tpl-variables',
      '{"totals": {"10": 1, "9": 2}, "n": 1e3, "id": 123456789012345678}',
    );
    await waitForPdf('ada', ['[10:1][9:2] 1000.0 123456789012345678'], 30_000, from);
    await clickButton(page, 'Save');
    await waitForText(page, '.actions [role=status]', 'Saved: version 2.');
    expect((await local.api(`/v1/templates/${id}`, { token: key })).text).toContain(
      '"sample_variables":{"totals":{"10":1,"9":2},"n":1e3,"id":123456789012345678}',
    );
    // The code shown renders that sample as written, too.
    expect(await textOf(page, '[data-snippets=template] code')).toContain(
      '"variables": {"totals":{"10":1,"9":2},"n":1e3,"id":123456789012345678}',
    );
    // Later steps expect the first template to be the account's newest.
    expect((await local.api(`/v1/templates/${id}`, { method: 'DELETE', token: session })).status).toBe(204);
  });

  it('closes no tag twice: typing <p>, then its text and </p>, gives one </p>', async () => {
    await goTo(page, '#/templates/new', 'New template');
    await waitInEditor(page, '.cm-content');
    await page.click(EDITOR);
    await page.keyboard.down('Control');
    await page.keyboard.press('KeyA');
    await page.keyboard.up('Control');
    await page.keyboard.press('Backspace');
    await page.keyboard.type('<p>');
    await page.keyboard.type('Hi</p>');
    expect(await page.$eval(EDITOR, (e) => e.textContent)).toBe('<p>Hi</p>');
    await goTo(page, `#/templates/${templateId}`, 'Edit “Welcome letter”');
  });

  it('shows a template error at its line, then saves a new version', async () => {
    await setEditorText(page, '<h1>Hello {{ customer }}</h1>\n<p>{% if %}</p>\n');
    await waitForText(page, '.preview-pane .error', /Preview failed: .*line 2/i);
    // The editor marks that line.
    await waitInEditor(page, '.cm-lintRange-error');
    const markedLine = await page.$eval('>>> .cm-lintRange-error', (e) => {
      const line = e.closest('.cm-line');
      const root = e.getRootNode() as ShadowRoot;
      return [...root.querySelectorAll('.cm-content .cm-line')].indexOf(line as Element) + 1;
    });
    expect(markedLine).toBe(2);
    await shot(page, '06-template-error');
    // Saved broken: the API's message and code, once (issue 40: not "Not saved: Not saved: …").
    await clickButton(page, 'Save');
    await waitForText(page, '[data-field=save-error]', /INVALID_HTML_TEMPLATE/);
    const saveError = await textOf(page, '[data-field=save-error]');
    expect(saveError.match(/Not saved/g)).toHaveLength(1);
    expect(saveError).toMatch(/^Not saved: .*line 2.*INVALID_HTML_TEMPLATE$/i);
    expect(saveError).not.toContain('{');

    await setEditorText(page, '<h1>Dear {{ customer }}</h1>\n<p>Order {{ order }} is on its way.</p>\n');
    await waitForPdf('ada', ['Dear Grace Hopper', 'Order A-42 is on its way.']);
    expect(await page.$('>>> .cm-lintRange-error')).toBeNull();
    await clickButton(page, 'Save');
    await waitForText(page, '.actions [role=status]', 'Saved: version 2.');
    expect((await local.api(`/v1/templates/${templateId}`, { token: key })).json.version).toBe(2);
    await shot(page, '07-template-saved');
  });

  it('previews an earlier version, makes the template public, and another account renders it', async () => {
    await page.select('#tpl-version', '1');
    await clickButton(page, 'Preview this version');
    await waitForPdf('ada', ['Hello Grace Hopper', 'Order A-42']);
    await waitForText(page, '.preview-status', /^Showing saved version 1/);

    await page.click('.panel input[type=checkbox]');
    await expect
      .poll(async () => (await local.api(`/v1/templates/${templateId}`, { token: key })).json.is_public, {
        timeout: 10_000,
      })
      .toBe(true);

    bobContext = await browser.createBrowserContext();
    const bob = await bobContext.newPage();
    await bob.setViewport({ width: 1280, height: 860 });
    observe(bob, 'bob');
    await signIn(bob, BOB);
    await goTo(bob, '#/templates', 'Templates');
    await bob.click('input[name="template-list"]:not(:checked)');
    await waitForText(bob, 'tbody th a', 'Welcome letter');
    await bob.click(`a[href="#/templates/${templateId}"]`);
    await waitForText(bob, '.badge', 'read-only');
    expect(await bob.$('#tpl-name')).toBeNull();
    const { version } = (await local.api(`/v1/templates/${templateId}`, { token: key })).json;
    await waitForText(
      bob,
      '[data-field=offline-note]',
      new RegExp(`renders offline .* pinned to version ${version};`),
    );
    // Opening a stranger's template runs nothing: no render until Bob asks for one.
    await new Promise((r) => setTimeout(r, 2_000));
    const bobSession = await sessionFor(BOB);
    const before = await local.api('/v1/pdf', { token: bobSession });
    expect(before.json.some((j: { template_id: string | null }) => j.template_id === templateId)).toBe(false);
    // The template's own sample data renders its preview for another account too.
    await clickButton(bob, 'Render preview');
    await waitForPdf('bob', ['Dear Grace Hopper', 'Order A-42 is on its way.']);
    expect(await textOf(bob, '[data-field=template-id]')).toBe(templateId);
    // Its code pins the version, as the API requires for another account's template.
    expect(await textOf(bob, '.snippets pre')).toMatch(new RegExp(`"template_version":\\s*${version}\\b`));
    await replaceField(bob, '#tpl-variables', '{"customer": "Bob", "order": "B-7"}');
    await clickButton(bob, 'Render preview');
    await waitForPdf('bob', ['Dear Bob', 'Order B-7 is on its way.']);
    await shot(bob, '08-public-template-other-account');

    // Bob's previews of it are not jobs of his, nor renders of his month (issue 40).
    const bobJobs = await local.api('/v1/pdf', { token: await sessionFor(BOB) });
    expect(bobJobs.json.some((j: { template_id: string | null }) => j.template_id === templateId)).toBe(
      false,
    );
    expect((await local.api('/v1/usage', { token: await sessionFor(BOB) })).json.renders_used).toBe(0);
    await bobContext.close();
  });

  it('edits the footer and the page options, previews them, and saves the footer with the template', async () => {
    await page.click('.header-footer summary');
    const footerEditor = '>>> .cm-content';
    // The footer is the third editor (html, header, footer).
    await page.waitForFunction(() => document.querySelectorAll('.code-editor > div').length === 3);
    // A header's and a footer's editor are as tall as their lines: no blank block under them (issue 40).
    // Both loaded (their "Loading the editor…" gone).
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('.code-editor.compact > div')].filter((e) =>
          e.shadowRoot?.querySelector('.cm-editor'),
        ).length === 2,
    );
    const heights = await page.$$eval('.code-editor.compact', (els) =>
      els.map((e) => Math.round((e as HTMLElement).getBoundingClientRect().height)),
    );
    expect(heights).toHaveLength(2);
    for (const h of heights) expect(h).toBeLessThan(110);
    const footer = (await page.$$('.code-editor > div'))[2];
    const content = await footer?.$(footerEditor);
    await content?.click();
    await page.keyboard.type('Page <span class="pageNumber"></span> of {{ customer }}');
    await page.select('#tpl-format', 'A5');
    await page.$$eval('.page-options label.check', (labels) =>
      (labels.find((e) => e.textContent?.includes('Landscape')) as HTMLElement | undefined)?.click(),
    );
    const before = downloadedPdfs.length;
    const pdf = await waitForPdf('ada', ['Dear Grace Hopper', 'of Grace Hopper'], 30_000, before);
    // The page number is filled in (the text layer runs "Page", the number and "of" together).
    expect(pdf.text).toMatch(/Page\s*1\s*of Grace Hopper/);
    const [first] = pdf.pages;
    // A5 landscape (within the point Chromium rounds by).
    expect(Math.abs((first?.widthPt ?? 0) - PAPER_SIZES_PT.A5.heightPt)).toBeLessThanOrEqual(1);
    expect(Math.abs((first?.heightPt ?? 0) - PAPER_SIZES_PT.A5.widthPt)).toBeLessThanOrEqual(1);
    // The snippet sends no page options: the template's saved ones apply (issue 40).
    expect(await textOf(page, '[data-snippets=template] code')).not.toMatch(/"format"|"landscape"/);
    await clickButton(page, 'Save');
    await waitForText(page, '.actions [role=status]', 'Saved: version 3.');
    // The snippet copied now renders the template's current paper: A5 landscape, no longer Letter.
    await clickButton(page, 'Copy curl snippet');
    const curl = (await page.evaluate(() => navigator.clipboard.readText())) as string;
    const { stdout } = await promisify(execFile)('bash', ['-c', curl], {
      env: { ...process.env, [API_KEY_VARIABLE]: key },
    });
    const job = JSON.parse(stdout);
    expect(job).toMatchObject({ status: 'completed', template_version: 3 });
    const copied = await readPdf(new Uint8Array(await (await fetch(job.download_url)).arrayBuffer()));
    expect(Math.abs((copied.pages[0]?.widthPt ?? 0) - PAPER_SIZES_PT.A5.heightPt)).toBeLessThanOrEqual(1);
    expect(Math.abs((copied.pages[0]?.heightPt ?? 0) - PAPER_SIZES_PT.A5.widthPt)).toBeLessThanOrEqual(1);
    const saved = await local.api(`/v1/templates/${templateId}`, { token: key });
    expect(saved.json.footer_html).toBe('Page <span class="pageNumber"></span> of {{ customer }}');
    // The page options are saved with it, as the render's defaults.
    expect(saved.json.pdf_options).toEqual({ format: 'A5', landscape: true });
    await shot(page, '08b-template-footer-options');
  });

  it('sets a watermark and a stamp, previews both, and saves them with a signing key from the list (issue 34)', async () => {
    // A signing key of Ada's (the editor lists the account's keys when it opens).
    const ada = await sessionFor(ADA);
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const registered = await local.api('/v1/signing-keys', {
      method: 'POST',
      token: ada,
      body: {
        name: 'Ada signs',
        certificate_pem: await certificateFor(privateKey, '/CN=Ada Lovelace'),
        private_key_pem: privateKey.export({ type: 'pkcs8', format: 'pem' }),
      },
    });
    expect(registered.status, registered.text).toBe(201);
    await goTo(page, '#/templates', 'Templates');
    await goTo(page, `#/templates/${templateId}`, 'Edit “Welcome letter”');
    // Protection is not offered: a template cannot keep it; the page says where it goes.
    await waitForText(page, '[data-field=protection-note]', /with each render/);
    await page.click('#tpl-watermark-on');
    await page.type('#tpl-watermark-text', 'DRAFT COPY');
    // Level and low, clear of the PREVIEW mark's slant, so that the text layer reads it in one piece.
    await page.type('#tpl-watermark-rotation_deg', '0');
    await page.select('#tpl-watermark-position', 'bottom');
    await page.click('#tpl-stamp-on');
    await page.type('#tpl-stamp-text', 'PAID {{ customer }}');
    await page.select('#tpl-stamp-position', 'top-right');
    // A bad value: the API's own message, beside the field it names.
    await page.type('#tpl-stamp-pages', '0');
    await waitForText(page, '[data-error-for="stamp.pages"]', /\S/);
    expect(await page.$eval('#tpl-stamp-pages', (e) => e.getAttribute('aria-invalid'))).toBe('true');
    await replaceField(page, '#tpl-stamp-pages', '1');
    await page.waitForFunction(() => !document.querySelector('[data-error-for="stamp.pages"]'));
    // The preview draws both, under and over the content, and its PREVIEW mark over them (poppler reads it).
    const before = downloadedPdfs.length;
    await waitForPdf('ada', ['DRAFT COPY', 'PAID Grace Hopper'], 30_000, before);
    const read = await Promise.all(
      downloadedPdfs
        .slice(before)
        .filter((d) => d.page === 'ada')
        .map(async (d) => (await pdfText(new Uint8Array(d.bytes))).stdout),
    );
    const both = read.find((text) => text.includes('DRAFT COPY') && text.includes('PAID Grace Hopper'));
    expect(both, JSON.stringify(read)).toBeDefined();
    expect(both?.replace(/\s+/g, '')).toContain('PREVIEW');
    // The key from the list, a reason and a visible box.
    await page.waitForSelector(`#tpl-signature-key option[value="${registered.json.id}"]`);
    await page.select('#tpl-signature-key', registered.json.id);
    await page.type('#tpl-signature-reason', 'Approved');
    await page.click('#tpl-signature-visible');
    await shot(page, '08c-template-finishing');
    await clickButton(page, 'Save');
    await waitForText(page, '.actions [role=status]', 'Saved: version 4.');
    const saved = await local.api(`/v1/templates/${templateId}`, { token: key });
    expect(saved.json.pdf_options).toEqual({
      format: 'A5',
      landscape: true,
      watermark: { text: 'DRAFT COPY', rotation_deg: 0, position: 'bottom' },
      stamp: { text: 'PAID {{ customer }}', position: 'top-right', pages: '1' },
      signature: {
        key_id: registered.json.id,
        reason: 'Approved',
        appearance: { page: 1, x: 36, y: 36, width: 200, height: 60 },
      },
    });
    // Reopened, the fields show what was saved, and nothing is unsaved.
    await goTo(page, '#/templates', 'Templates');
    await goTo(page, `#/templates/${templateId}`, 'Edit “Welcome letter”');
    await page.waitForSelector('#tpl-stamp-text');
    expect(await page.$eval('#tpl-stamp-text', (e) => (e as HTMLInputElement).value)).toBe(
      'PAID {{ customer }}',
    );
    expect(await page.$eval('#tpl-signature-key', (e) => (e as HTMLInputElement).value)).toBe(
      registered.json.id,
    );
    expect(await textOf(page, '.actions [role=status]')).not.toContain('Unsaved');
  });

  it('keeps the saved options it does not show (pdf_a, e_invoice) when a save changes the watermark', async () => {
    const ada = await sessionFor(ADA);
    const hidden = {
      pdf_a: '3b',
      e_invoice: { standard: 'factur-x', profile: 'en16931', invoice_from_variables: true },
    };
    // Set through the API: options the editor has no fields for.
    const created = await local.api('/v1/templates', {
      method: 'POST',
      token: ada,
      body: {
        name: 'Archived invoice',
        html: '<h1>Invoice {{ number }}</h1>',
        sample_variables: { number: 'F-1' },
        pdf_options: { ...hidden, format: 'A5', watermark: { text: 'OLD COPY' } },
        is_public: false,
      },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.json.id as string;
    try {
      await goTo(page, '#/templates', 'Templates');
      await goTo(page, `#/templates/${id}`, 'Edit “Archived invoice”');
      await page.waitForSelector('#tpl-watermark-text');
      expect(await page.$eval('#tpl-watermark-text', (e) => (e as HTMLInputElement).value)).toBe('OLD COPY');
      await replaceField(page, '#tpl-watermark-text', 'NEW COPY');
      await clickButton(page, 'Save');
      await waitForText(page, '.actions [role=status]', 'Saved: version 2.');
      const saved = await local.api(`/v1/templates/${id}`, { token: ada });
      expect(saved.json.pdf_options).toEqual({ ...hidden, format: 'A5', watermark: { text: 'NEW COPY' } });
    } finally {
      await local.api(`/v1/templates/${id}`, { method: 'DELETE', token: ada });
    }
  });

  it('lists jobs with status, size, pages, duration, errors and a download', async () => {
    // A render through the key that fails while the template runs: its job lists the error.
    const failed = await local.api('/v1/pdf', {
      method: 'POST',
      token: key,
      body: { html: '<p>{{ 1 / 0 }}</p>' },
    });
    expect(failed.status).toBe(422);
    const failedJobId = failed.json.error.job_id as string;
    // One whose page logs an error: its diagnostics show.
    const noisy = await local.api('/v1/pdf', {
      method: 'POST',
      token: key,
      body: { html: "<p>Noisy</p><script>console.error('tax rate missing')</script>" },
    });
    expect(noisy.status).toBe(201);

    await goTo(page, '#/jobs', 'Jobs');
    await page.waitForSelector(`tr[data-job-id="${failedJobId}"]`);
    const failedRow = await textOf(page, `tr[data-job-id="${failedJobId}"]`);
    expect(failedRow).toContain('Failed');
    expect(failedRow).toContain('ZeroDivisionError');
    // Each job shows its id, with a copy button.
    expect(await textOf(page, `tr[data-job-id="${failedJobId}"] .job-id code`)).toBe(failedJobId);
    await clickButton(page, `Copy job id ${failedJobId}`);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(failedJobId);
    const noisyRow = `tr[data-job-id="${noisy.json.id}"]`;
    await page.click(`${noisyRow} .diagnostics summary`);
    await waitForText(page, `${noisyRow} .diagnostics li`, /Console error.*tax rate missing/);
    // A template's job links it, with the version rendered.
    expect(await page.$$eval('table.jobs tbody a', (as) => as.map((a) => a.textContent))).toContain(
      'Template v1',
    );
    const completed = await page.$$eval('table.jobs tbody tr', (rows) =>
      rows
        .filter((r) => r.textContent?.includes('Completed'))
        .map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent ?? '')),
    );
    expect(completed.length).toBeGreaterThanOrEqual(3);
    const [, source, pages, size, duration] = completed[0] ?? [];
    expect(source).toMatch(/Inline HTML|Template/);
    expect(pages).toBe('1');
    expect(size).toMatch(/\d( B| KB)$/);
    expect(duration).toMatch(/\d (ms|s)$/);
    await shot(page, '09-jobs');

    const downloads = await mkdtemp(join(tmpdir(), 'dashboard-downloads-'));
    try {
      const cdp = await browser.target().createCDPSession();
      await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads });
      await page.click(`table.jobs tbody tr:not([data-job-id="${failedJobId}"]) .row-actions button`);
      await expect
        .poll(async () => (await readdir(downloads)).filter((f) => f.endsWith('.pdf')).length, {
          timeout: 15_000,
        })
        .toBe(1);
      const [file] = (await readdir(downloads)).filter((f) => f.endsWith('.pdf'));
      const bytes = await readFile(join(downloads, file as string));
      expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    } finally {
      await rm(downloads, { recursive: true, force: true });
    }
  });

  it('revokes the key after a confirmation, and the API refuses it', async () => {
    await goTo(page, '#/keys', 'API keys');
    await clickButton(page, 'Revoke key e2e-key');
    await page.waitForSelector('dialog[open]');
    expect(await textOf(page, 'dialog[open] h2')).toBe('Revoke key “e2e-key”?');
    await shot(page, '10-revoke-dialog');
    await clickButton(page, 'Revoke key', 'dialog[open]');
    await page.waitForFunction(() => !document.querySelector('dialog[open]'));
    await waitForText(page, 'tbody tr', /e2e-key.*Revoked/);
    const refused = await local.api('/v1/usage', { token: key });
    expect(refused.status).toBe(401);
    expect(refused.json.error.code).toBe('INVALID_API_KEY');
  });

  it('shows the plan, the quota used and left, the rate limit, PDF bytes and render time', async () => {
    await goTo(page, '#/usage', 'Usage');
    await page.waitForSelector('[data-field=plan]');
    const usage = (await local.api('/v1/usage', { token: await sessionFor(ADA) })).json;
    expect(usage.renders_used).toBeGreaterThanOrEqual(3);
    expect(usage.pdf_bytes).toBeGreaterThan(0);
    expect(await textOf(page, '[data-field=plan]')).toBe('pro');
    expect(await textOf(page, 'label[for=quota-meter]')).toBe(
      `${usage.renders_used} of 25,000 renders used, ${(25_000 - usage.renders_used).toLocaleString('en-US')} left`,
    );
    expect(await page.$eval('#quota-meter', (e) => (e as HTMLMeterElement).value)).toBe(usage.renders_used);
    expect(await textOf(page, '[data-field=rate-limit]')).toMatch(/^300 renders per 60 s, \d+ left/);
    expect(await textOf(page, '[data-field=pdf-bytes]')).toMatch(/KB$/);
    expect(await textOf(page, '[data-field=render-time]')).toMatch(/\d (ms|s)$/);
    // Pay per use (issue 39): pro has no overage and no price, so every unit is included, no charge shown.
    expect(await textOf(page, '[data-field=units]')).toBe(
      `${usage.renders_used.toLocaleString('en-US')} included, 0 overage`,
    );
    expect(await page.$('[data-field=estimated-charge]')).toBeNull();
    // The plan's limits, and what to do for more.
    expect(await textOf(page, '[data-field=plan-name]')).toBe('pro');
    expect(await textOf(page, '[data-field=plan-limits]')).toMatch(
      /25,000 renders a month.*300 renders per 60 s/,
    );
    expect(await textOf(page, '[data-field=plan-contact]')).toContain('npm run --silent admin -- set-plan');
    expect(await textOf(page, '[data-field=account-id]')).toBe(localSubFor(ADA));
    await shot(page, '11-usage');
  });

  it('renews the session with the refresh token before it expires', async () => {
    await expect
      .poll(() => tokenRequests.some((r) => r.includes('grant_type=refresh_token')), { timeout: 30_000 })
      .toBe(true);
    await expect
      .poll(async () => (await storedUser(page))?.id_token, { timeout: 10_000 })
      .not.toBe(firstIdToken);
    // The renewed token works.
    await goTo(page, '#/keys', 'API keys');
    await waitForText(page, 'tbody th', 'e2e-key');
  });

  it('fits a phone screen on every page, every action inside the viewport', async () => {
    // A key that can be revoked, so that the keys page has its action to check.
    const ada = await sessionFor(ADA);
    expect(
      (await local.api('/v1/api-keys', { method: 'POST', token: ada, body: { name: 'phone' } })).status,
    ).toBe(201);
    await setViewport(PHONE);
    for (const [hash, heading, name] of [
      ['#/keys', 'API keys', 'keys'],
      ['#/templates', 'Templates', 'templates'],
      [`#/templates/${templateId}`, 'Edit “Welcome letter”', 'template'],
      ['#/jobs', 'Jobs', 'jobs'],
      ['#/usage', 'Usage', 'usage'],
    ] as const) {
      await goTo(page, hash, heading);
      await page.waitForNetworkIdle({ idleTime: 300 });
      const { scrollWidth, innerWidth } = await page.evaluate(() => ({
        scrollWidth: document.documentElement.scrollWidth,
        innerWidth: window.innerWidth,
      }));
      expect(scrollWidth, name).toBeLessThanOrEqual(innerWidth);
      // Each action, scrolled to as a finger would (up and down only), lies wholly inside the screen.
      const actions = await page.$$eval('header button, main button, main a.button', (els) =>
        els
          .filter((e) => (e as HTMLElement).getClientRects().length > 0)
          .map((e) => {
            (e as HTMLElement).scrollIntoView({ block: 'center', inline: 'nearest' });
            const r = (e as HTMLElement).getBoundingClientRect();
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
      if (name === 'keys') expect(actions.map((a) => a.label)).toContain('Revoke key phone');
      if (name === 'jobs')
        expect(actions.map((a) => a.label)).toEqual(
          expect.arrayContaining([expect.stringMatching(/^Download/)]),
        );
      expect(actions.length, name).toBeGreaterThan(0);
      expect(
        actions.filter((a) => !a.inside),
        name,
      ).toEqual([]);
      await page.evaluate(() => window.scrollTo(0, 0));
      await shot(page, `12-phone-${name}`);
      // The README's phone screenshot of the page, while the phone width is on (switching to it
      // reloads the page).
      if (name === 'template') await waitForText(page, '.preview-status', /^Showing/);
      await page.screenshot({ path: join(README_SHOTS, `${name}-phone.png`) });
    }
    // Leaving mobile emulation reloads the page: wait for the app to be back.
    await setViewport({ width: 1280, height: 860 });
    await waitForText(page, 'h1', 'Usage');
  });

  it('takes the README’s screenshots of each page at desktop width (the phone ones above)', async () => {
    const pages = [
      ['#/keys', 'API keys', 'keys'],
      ['#/templates', 'Templates', 'templates'],
      [`#/templates/${templateId}`, 'Edit “Welcome letter”', 'template'],
      ['#/jobs', 'Jobs', 'jobs'],
      ['#/usage', 'Usage', 'usage'],
    ] as const;
    await setViewport(DESKTOP);
    for (const [hash, heading, name] of pages) {
      await goTo(page, hash, heading);
      await page.waitForNetworkIdle({ idleTime: 300 });
      if (name === 'template') {
        await waitForText(page, '.preview-status', /^Showing/);
        // The preview stays beside the code as the page scrolls (issue 40).
        // Down the form, as far as the editor's layout still fills the screen below the preview.
        await page.evaluate(() => {
          const layout = document.querySelector('.editor-layout') as HTMLElement;
          const bottom = layout.getBoundingClientRect().bottom + window.scrollY;
          window.scrollTo(0, bottom - window.innerHeight - 20);
        });
        const pane = await page.$eval('.preview-pane', (e) => {
          const r = (e as HTMLElement).getBoundingClientRect();
          return { top: r.top, bottom: r.bottom, scrolled: window.scrollY };
        });
        expect(pane.scrolled).toBeGreaterThan(100);
        expect(pane.top).toBeGreaterThanOrEqual(0);
        expect(pane.top).toBeLessThan(40);
        expect(pane.bottom).toBeLessThanOrEqual(DESKTOP.height);
      }
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: join(README_SHOTS, `${name}-desktop.png`) });
    }
    await setViewport({ width: 1280, height: 860 });
    await waitForText(page, 'h1', 'Usage');
  });

  it('works with the keyboard alone: navigate, create a key, revoke it through the dialog', async () => {
    // A fresh load, as someone arriving at the page would.
    await goTo(page, '#/templates', 'Templates');
    await page.reload({ waitUntil: 'networkidle0' });
    await waitForText(page, 'h1', 'Templates');
    const focused = () =>
      page.evaluate(() => {
        const e = document.activeElement as HTMLElement | null;
        return `${e?.tagName.toLowerCase()}#${e?.id ?? ''}|${(e?.textContent ?? '').trim()}`;
      });
    const tabTo = async (matches: (f: string) => boolean, shift = false) => {
      for (let i = 0; i < 40; i++) {
        if (shift) await page.keyboard.down('Shift');
        await page.keyboard.press('Tab');
        if (shift) await page.keyboard.up('Shift');
        if (matches(await focused())) return;
      }
      throw new Error(`Tab never reached the control (last: ${await focused()})`);
    };
    // The page's heading has focus when a page opens; back up to the navigation.
    expect(await focused()).toMatch(/^h1#\|Templates$/);
    await tabTo((f) => f === 'a#|API keys', true);
    await page.keyboard.press('Enter');
    await waitForText(page, 'h1', 'API keys');
    // The new page's heading takes focus as it appears, so Tab continues from the top of the page.
    expect(await focused()).toBe('h1#|API keys');
    await tabTo((f) => f.startsWith('input#key-name'));
    await page.keyboard.type('keyboard-key');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#new-key-value');
    // With a template in the account, the first render's code renders the newest one, with its sample.
    await waitForText(page, '[data-snippets="first-render"] code', templateId);
    await tabTo((f) => f === 'button#|Copy');
    await page.keyboard.press('Enter');
    await waitForText(page, '.new-key [role=status]', 'Copied to the clipboard.');
    await tabTo((f) => f === 'button#|I have copied the key');
    await page.keyboard.press('Enter');
    await waitForText(page, 'tbody th', 'keyboard-key');
    await tabTo((f) => f === 'button#|Revoke key keyboard-key');
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog[open]');
    // The safe choice has focus; Escape cancels and gives focus back.
    expect(await focused()).toBe('button#|Cancel');
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.querySelector('dialog[open]'));
    expect(await focused()).toBe('button#|Revoke key keyboard-key');
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog[open]');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('button#|Revoke key');
    await page.keyboard.press('Enter');
    await waitForText(page, 'tbody tr', /keyboard-key.*Revoked/);
    // Focus is visible where it lands.
    await tabTo((f) => f === 'a#|Usage', true);
    const outline = await page.evaluate(
      () => getComputedStyle(document.activeElement as Element).outlineStyle,
    );
    expect(outline).not.toBe('none');
  });

  it('gives every control an accessible name, on every page and in the dialog', async () => {
    for (const [hash, heading] of [
      ['#/keys', 'API keys'],
      ['#/templates', 'Templates'],
      ['#/templates/new', 'New template'],
      [`#/templates/${templateId}`, 'Edit “Welcome letter”'],
      ['#/jobs', 'Jobs'],
      ['#/usage', 'Usage'],
    ] as const) {
      await goTo(page, hash, heading);
      await page.waitForNetworkIdle({ idleTime: 300 });
      if (hash.startsWith('#/templates/')) await waitInEditor(page, '.cm-content');
      expect(await unnamedControls(page), hash).toEqual([]);
    }
    await goTo(page, `#/templates/${templateId}`, 'Edit “Welcome letter”');
    await clickButton(page, 'Delete template');
    await page.waitForSelector('dialog[open]');
    expect(await unnamedControls(page), 'delete dialog').toEqual([]);
    await shot(page, '13-delete-dialog');
    await clickButton(page, 'Delete template', 'dialog[open]');
    await waitForText(page, 'h1', 'Templates');
    expect((await local.api(`/v1/templates/${templateId}`, { token: await sessionFor(ADA) })).status).toBe(
      404,
    );
  });

  it('sends the user back to sign-in when the API refuses the session (401)', async () => {
    await page.evaluate(() => {
      const k = Object.keys(sessionStorage).find((s) => s.startsWith('oidc.user:')) as string;
      const user = JSON.parse(sessionStorage.getItem(k) as string) as {
        id_token: string;
        expires_at: number;
        refresh_token?: string;
      };
      const [h, p] = user.id_token.split('.');
      user.id_token = `${h}.${p}.${'A'.repeat(342)}`;
      // Far from expiry and with nothing to renew it: the page must send this token as it is. (On a
      // busy machine the session could otherwise be near its renewal and come back valid.)
      user.expires_at = Math.floor(Date.now() / 1000) + 3600;
      delete user.refresh_token;
      sessionStorage.setItem(k, JSON.stringify(user));
    });
    await page.evaluate(() => {
      location.hash = '#/keys';
    });
    await page.reload({ waitUntil: 'networkidle0' });
    await waitForText(page, '.notice', 'Your session has ended. Sign in again.');
    expect(await textOf(page, 'h1')).toBe('PDF service dashboard');
    expect(await storedUser(page)).toBeUndefined();
    await shot(page, '14-session-ended');
  });

  it('signs out: tokens forgotten, the refresh token revoked, back at the sign-in screen', async () => {
    await signIn(page, ADA);
    const user = await storedUser(page);
    await Promise.all([page.waitForNavigation({ waitUntil: 'networkidle0' }), clickButton(page, 'Sign out')]);
    await waitForText(page, 'h1', 'PDF service dashboard');
    expect(await storedUser(page)).toBeUndefined();
    const refresh = await fetch(new URL('/local/oauth2/token', local.stack.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        client_id: 'local-dashboard',
        refresh_token: user?.refresh_token ?? '',
      }),
    });
    expect(refresh.status).toBe(400);
  });

  it('logged no console error, uncaught exception or failed request, beyond the two answers it caused', () => {
    // Chromium logs every 4xx answer to fetch: the template error (422) was asked for above three
    // times (its preview, the editor's variable check, the save), a stamp's bad pages once (its
    // preview), the refused session (401) once.
    const expected = {
      'Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)': 4,
      'Failed to load resource: the server responded with a status of 401 (Unauthorized)': 1,
    };
    const rest = problems.filter(
      (p) => !(p.page === 'ada' && p.kind === 'console' && Object.hasOwn(expected, p.text)),
    );
    expect(rest).toEqual([]);
    for (const [text, times] of Object.entries(expected))
      expect(problems.filter((p) => p.text === text)).toHaveLength(times);
  });
});
