/**
 * Previews over HTTP against the local stack (issue 40): the real renderer prints the PREVIEW mark
 * on every page (read back with poppler), over the caller's own stamp and watermark, which it
 * draws as a render would (issue 34), a saved template's paper applies, and a preview uses
 * none of the account's quota, rate window or Jobs; session credentials only.
 */
import { describe, expect, it } from 'vitest';
import { useLocalStack } from '../helpers/local-stack.js';
import { pageImage, pdfinfo, pdfText } from '../helpers/pdf-readers.js';
import { pngDataUri, solidPng } from '../helpers/png.js';
import { inOneRateWindow } from '../helpers/rate-window.js';

const local = useLocalStack();

const preview = (token: string, body: unknown) => local.api('/v1/previews', { method: 'POST', token, body });
const download = async (url: string) => new Uint8Array(await (await fetch(url)).arrayBuffer());

describe.concurrent('a preview', () => {
  it('prints PREVIEW on every page, and leaves quota, rate window and Jobs as they were', () =>
    // The rate window is read before and after: both in one minute (test/helpers/rate-window.ts).
    inOneRateWindow(async () => {
      const token = await local.sessionToken();
      const before = (await local.api('/v1/usage', { token })).json;
      const res = await preview(token, {
        html: '{% for i in range(3) %}<h1 style="break-after: page">Part {{ i + 1 }} of {{ title }}</h1>{% endfor %}',
        variables: { title: 'the plan' },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.json).toMatchObject({ page_count: 3, previews_remaining: { minute: 29, day: 599 } });
      expect(res.headers.get('ratelimit-remaining')).toBeNull();
      const pdf = await download(res.json.download_url);
      for (const page of [1, 2, 3]) {
        const { stdout } = await pdfText(pdf, { first: page, last: page });
        expect(stdout).toContain(`Part ${page} of the plan`);
        // Real text, read along its 45° slant in pieces ("PR", "EV", "IE", "W").
        expect(stdout.replace(/\s+/g, '')).toContain('PREVIEW');
      }
      const after = (await local.api('/v1/usage', { token })).json;
      expect(after.renders_used).toBe(before.renders_used);
      expect(after.rate_limit.remaining).toBe(before.rate_limit.remaining);
      expect((await local.api('/v1/pdf', { token })).json).toEqual([]);
    }));

  it("draws the caller's watermark and stamp, and the PREVIEW mark over the stamp (issue 34)", async () => {
    const token = await local.sessionToken();
    const res = await preview(token, {
      html: '{% for i in range(2) %}<h1 style="break-after: page">Page {{ i + 1 }}</h1>{% endfor %}',
      variables: { paid_on: '2026-11-29' },
      // Level and low, clear of the PREVIEW mark's slant (pdftotext would read the two interleaved).
      watermark: { text: 'CONFIDENTIAL', pages: '2', rotation_deg: 0, position: 'bottom' },
      stamp: { text: 'PAID {{ paid_on }}', position: 'top-right' },
      // Not drawn on a preview: it would not open in the browser's viewer.
      protection: { owner_password: 'k7#Tq9!vLm2$Xe' },
    });
    expect(res.status, res.text).toBe(200);
    const pdf = await download(res.json.download_url);
    for (const page of [1, 2]) {
      const { stdout } = await pdfText(pdf, { first: page, last: page });
      expect(stdout).toContain('PAID 2026-11-29');
      expect(stdout.replace(/\s+/g, '')).toContain('PREVIEW');
      expect(stdout.includes('CONFIDENTIAL')).toBe(page === 2);
    }
    // No password: poppler reads it without one (above), and it is not encrypted.
    expect((await pdfinfo(pdf)).Encrypted).toMatch(/^no/);

    // An opaque blue square stamped at the centre: the PREVIEW mark (red, a quarter opaque,
    // across the centre) tints some of it, so it lies over the stamp; the rest stays blue.
    const square = await preview(token, {
      html: '<p>x</p>',
      stamp: { image: pngDataUri(solidPng(144, 144, [0, 0, 255])), opacity: 1 },
    });
    expect(square.status, square.text).toBe(200);
    const image = await pageImage(await download(square.json.download_url), 1, 36);
    const cx = image.width / 2;
    const cy = image.height / 2;
    let blue = 0;
    let tinted = 0;
    // The square is 2 in (72 px at 36 dpi): its middle 60 px each way.
    for (let dx = -30; dx <= 30; dx += 2)
      for (let dy = -30; dy <= 30; dy += 2) {
        const [r, g, b] = image.at(cx + dx, cy + dy);
        if (r === 0 && g === 0 && b === 255) blue++;
        else if (r > 0 && b > 100) tinted++;
      }
    expect(blue).toBeGreaterThan(50);
    expect(tinted).toBeGreaterThan(20);
  });

  it("prints a saved template's paper, the request's own over it", async () => {
    const token = await local.sessionToken();
    const saved = await local.api('/v1/templates', {
      method: 'POST',
      token,
      body: { name: 'A5', html: '<p>{{ n }}</p>', pdf_options: { format: 'A5' } },
    });
    expect(saved.status, saved.text).toBe(201);
    const sizeOf = async (body: unknown) => {
      const res = await preview(token, body);
      expect(res.status, res.text).toBe(200);
      return (await pdfinfo(await download(res.json.download_url)))['Page size'];
    };
    expect(await sizeOf({ template_id: saved.json.id, variables: { n: 1 } })).toMatch(/\(A5\)$/);
    expect(await sizeOf({ template_id: saved.json.id, variables: { n: 1 }, format: 'A4' })).toMatch(
      /\(A4\)$/,
    );
  });

  it('answers a missing variable as a render does, and an API key 403', async () => {
    const token = await local.sessionToken();
    const missing = await preview(token, { html: '<p>{{ who.name }}</p>' });
    expect(missing.status).toBe(422);
    expect(missing.json.error).toMatchObject({ code: 'INVALID_HTML_TEMPLATE' });
    expect(missing.json.error.job_id).toBeUndefined();
    const made = await local.api('/v1/api-keys', { method: 'POST', token, body: { name: 'preview' } });
    const byKey = await preview(made.json.key, { html: '<p>x</p>' });
    expect(byKey.status).toBe(403);
    expect(byKey.json.error.code).toBe('SESSION_REQUIRED');
  });

  it("checks a text's variables: the README invoice's keyword argument is not one", async () => {
    const token = await local.sessionToken();
    const res = await local.api('/v1/previews/variables', {
      method: 'POST',
      token,
      body: {
        html: "<h1>Invoice {{ number }}</h1>{% for l in lines %}<p>{{ l.item }}</p>{% endfor %}{{ lines|sum(attribute='price') }}",
        footer_html: '{% if note is defined %}{{ note }}{% endif %}',
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ variables: ['lines', 'note', 'number'], required: ['lines', 'number'] });
  });
});
