/**
 * Account assets (issue 40) over HTTP against the local stack: an image and a font uploaded with
 * PUT /v1/assets/{name} print in a render through {{ asset('<name>') }} (the logo seen in a page
 * image drawn by pdftoppm, the font named by pdffonts), served by the renderer from storage;
 * another account's asset is 404 by name, and by URL its render's page finds nothing (404, in the
 * job's diagnostics), also through the owner's public template; an SVG with a script or a link
 * to another file is refused, as are a file whose bytes are not its Content-Type, a file over the
 * per-file limit (413 naming it; a 20 MB image included) and an API key writing.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_ASSET_BYTES } from '../../functions/domain/assets/assets.js';
import { errorSchema } from '../../functions/openapi.js';
import { ASSET_ORIGIN } from '../../functions/templating/assets.js';
import type { ApiResponse } from '../helpers/local-stack.js';
import { useLocalStack } from '../helpers/local-stack.js';
import { pageImage, pdffonts } from '../helpers/pdf-readers.js';
import { solidPng } from '../helpers/png.js';
import { newAccount, saveTemplate, type TestAccount } from '../helpers/template-fixtures.js';

const local = useLocalStack();
const require = createRequire(import.meta.url);
/** A font the page would not use unless its @font-face loads: Cousine, under a brand's name. */
const fontFile = require.resolve('@expo-google-fonts/cousine/400Regular/Cousine_400Regular.ttf');

let owner: TestAccount;
let stranger: TestAccount;
let font: Buffer;
const RED: [number, number, number] = [220, 20, 20];
const logo = solidPng(60, 60, RED);

const put = (name: string, body: Uint8Array | string, type: string, token = owner.session) =>
  local.api(`/v1/assets/${encodeURIComponent(name)}`, {
    method: 'PUT',
    token,
    body,
    headers: { 'content-type': type },
  });

const expectError = (res: ApiResponse, status: number, code: string, field?: string) => {
  expect(res.status, res.text).toBe(status);
  expect(res.json.error.code).toBe(code);
  expect(() => errorSchema.parse(res.json)).not.toThrow();
  if (field) expect(res.json.error.details.map((d: { field: string }) => d.field)).toContain(field);
};

const render = async (token: string, body: Record<string, unknown>) => {
  const res = await local.api('/v1/pdf', { method: 'POST', token, body });
  expect(res.status, res.text).toBe(201);
  const pdf = new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer());
  return { job: res.json, pdf };
};

/** A page whose top-left is the logo (60 px at 96 dpi: 45 pt) and whose text is in the brand font. */
const BRANDED = `<!doctype html><html><head><style>
  @page { size: A6; margin: 0 }
  @font-face { font-family: Brand; src: url("{{ asset('brand.ttf') }}"); }
  body { margin: 0; font-family: Brand, serif; }
  img { display: block; width: 60px; height: 60px }
</style></head><body><img src="{{ asset('logo.png') }}"><p>Invoice {{ number }}</p></body></html>`;

/** Whether the PDF's first page has the logo's red in its top-left corner. */
const hasLogo = async (pdf: Uint8Array): Promise<boolean> => {
  const image = await pageImage(pdf, 1, 72);
  const [r, g, b] = image.at(20, 20);
  return r > 180 && g < 80 && b < 80;
};

beforeAll(async () => {
  [owner, stranger] = await Promise.all([newAccount(local, 'assets-a'), newAccount(local, 'assets-b')]);
  font = await readFile(fontFile);
  expect((await put('logo.png', logo, 'image/png')).status).toBe(200);
  expect((await put('brand.ttf', font, 'font/ttf')).status).toBe(200);
});

describe('uploads', () => {
  it('keeps an image and a font, listed by name with their type read from the bytes', async () => {
    const list = await local.api('/v1/assets', { token: owner.session });
    expect(list.status).toBe(200);
    expect(list.json.map((a: { name: string }) => a.name)).toEqual(['brand.ttf', 'logo.png']);
    expect(list.json[0]).toMatchObject({ kind: 'font', content_type: 'font/ttf', size_bytes: font.length });
    const one = await local.api('/v1/assets/logo.png', { token: owner.key });
    expect(one.status, one.text).toBe(200);
    expect(one.json).toMatchObject({ name: 'logo.png', kind: 'image', content_type: 'image/png' });
    // Its link serves exactly the bytes uploaded.
    const bytes = Buffer.from(await (await fetch(one.json.download_url)).arrayBuffer());
    expect(bytes.equals(logo)).toBe(true);
  });

  it('refuses an API key writing (session only), and a bad name', async () => {
    expectError(await put('other.png', logo, 'image/png', owner.key), 403, 'SESSION_REQUIRED');
    expectError(await put('../x.png', logo, 'image/png'), 422, 'INVALID_ASSET', 'name');
  });

  it('refuses bytes that are not their Content-Type, and types that are not assets', async () => {
    expectError(await put('fake.png', font, 'image/png'), 422, 'INVALID_ASSET', 'body');
    expectError(await put('page.html', '<p>hi</p>', 'text/html'), 422, 'INVALID_ASSET', 'Content-Type');
    expectError(await put('empty.png', new Uint8Array(), 'image/png'), 422, 'INVALID_ASSET', 'body');
  });

  it('refuses an SVG with a script, an event attribute or a link to another file, and keeps a plain one', async () => {
    const svg = (inner: string, attrs = '') =>
      `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10"${attrs}>${inner}</svg>`;
    const script = await put('s.svg', svg('<script>alert(1)</script>'), 'image/svg+xml');
    expectError(script, 422, 'INVALID_ASSET', 'body');
    expect(script.json.error.message).toContain('<script>');
    expectError(await put('s.svg', svg('', ' onload="alert(1)"'), 'image/svg+xml'), 422, 'INVALID_ASSET');
    const external = await put(
      's.svg',
      svg('<image xlink:href="https://example.com/x.png"/>'),
      'image/svg+xml',
    );
    expectError(external, 422, 'INVALID_ASSET', 'body');
    expect(external.json.error.message).toContain('refers to another file');
    expectError(
      await put(
        's.svg',
        svg('<foreignObject><p xmlns="http://www.w3.org/1999/xhtml">x</p></foreignObject>'),
        'image/svg+xml',
      ),
      422,
      'INVALID_ASSET',
    );
    // Nothing refused was kept.
    expect((await local.api('/v1/assets/s.svg', { token: owner.session })).status).toBe(404);
    const plain = await put('mark.svg', svg('<rect width="10" height="10" fill="#c00"/>'), 'image/svg+xml');
    expect(plain.status, plain.text).toBe(200);
    expect(plain.json.content_type).toBe('image/svg+xml');
  });

  it('answers 413 naming the limit for a file over it: just over, and a 20 MB image', async () => {
    const over = Buffer.concat([logo, Buffer.alloc(MAX_ASSET_BYTES + 1 - logo.length)]);
    const justOver = await put('big.png', over, 'image/png');
    expectError(justOver, 413, 'ASSET_TOO_LARGE', 'body');
    expect(justOver.json.error.message).toContain('4 MiB (4,194,304 bytes)');
    const huge = Buffer.concat([logo, Buffer.alloc(20 * 1024 * 1024 - logo.length)]);
    const twenty = await put('huge.png', huge, 'image/png');
    expectError(twenty, 413, 'ASSET_TOO_LARGE');
    expect(twenty.json.error.message).toContain('4 MiB (4,194,304 bytes)');
  });
});

describe('renders', () => {
  it("prints the account's logo and font in its render, served from storage", async () => {
    const { job, pdf } = await render(owner.key, { html: BRANDED, variables: { number: 'A-1' } });
    expect(await hasLogo(pdf)).toBe(true);
    const fonts = await pdffonts(pdf);
    expect(fonts.map((f) => f.name).join(' ')).toMatch(/Cousine/);
    expect(job.diagnostics?.entries ?? []).toEqual([]);
  });

  it("another account's asset is 404 by name, and its render's page finds nothing by URL", async () => {
    for (const method of ['GET', 'DELETE']) {
      expectError(
        await local.api('/v1/assets/logo.png', { method, token: stranger.session }),
        404,
        'ASSET_NOT_FOUND',
      );
    }
    expect((await local.api('/v1/assets', { token: stranger.key })).json).toEqual([]);
    // The stranger's page asks for the very URL the owner's asset() gives.
    const { job, pdf } = await render(stranger.key, {
      html: `<style>@page { margin: 0 } body { margin: 0 }</style><img src="${ASSET_ORIGIN}/logo.png" style="width:60px;height:60px;display:block"><p style="font-family: Brand">x</p>`,
    });
    expect(await hasLogo(pdf)).toBe(false);
    expect(JSON.stringify(job.diagnostics)).toContain('asset not found: logo.png');
    // The owner's asset is still there.
    expect((await local.api('/v1/assets/logo.png', { token: owner.session })).status).toBe(200);
  });

  it("a stranger's render of the owner's public template sees the stranger's assets, never the owner's", async () => {
    const template = await saveTemplate(local, owner.session, { html: BRANDED, is_public: true });
    const ownRender = await render(owner.key, { template_id: template.id, variables: { number: '1' } });
    expect(await hasLogo(ownRender.pdf)).toBe(true);
    const foreign = await render(stranger.key, {
      template_id: template.id,
      template_version: template.version,
      variables: { number: '2' },
    });
    expect(await hasLogo(foreign.pdf)).toBe(false);
    expect((await pdffonts(foreign.pdf)).map((f) => f.name).join(' ')).not.toMatch(/Cousine/);
    // With a logo of its own under that name, the stranger's render prints the stranger's.
    const blue = solidPng(60, 60, [20, 20, 220]);
    expect((await put('logo.png', blue, 'image/png', stranger.session)).status).toBe(200);
    const withOwn = await render(stranger.key, {
      template_id: template.id,
      template_version: template.version,
      variables: { number: '3' },
    });
    const [r, , b] = (await pageImage(withOwn.pdf, 1, 72)).at(20, 20);
    expect(b).toBeGreaterThan(180);
    expect(r).toBeLessThan(80);
  });

  it('a deleted asset is gone from the next render', async () => {
    expect((await put('temp.png', logo, 'image/png')).status).toBe(200);
    const html = `<style>@page { margin: 0 } body { margin: 0 }</style><img src="{{ asset('temp.png') }}" style="width:60px;height:60px;display:block">`;
    expect(await hasLogo((await render(owner.key, { html })).pdf)).toBe(true);
    const deleted = await local.api('/v1/assets/temp.png', { method: 'DELETE', token: owner.session });
    expect(deleted.status).toBe(200);
    expect(await hasLogo((await render(owner.key, { html })).pdf)).toBe(false);
  });
});
