/**
 * Previews over HTTP against the local stack (issue 40): the real renderer prints the PREVIEW mark
 * on every page (read back with poppler), a saved template's paper applies, and a preview uses
 * none of the account's quota, rate window or Jobs; session credentials only.
 */
import { describe, expect, it } from 'vitest';
import { useLocalStack } from '../helpers/local-stack.js';
import { pdfinfo, pdfText } from '../helpers/pdf-readers.js';
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
