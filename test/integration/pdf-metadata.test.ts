/**
 * PDF metadata over HTTP against the real local stack: the title from the document's <title> or
 * from `metadata.title`, author, subject and keywords when given, and the creation date, read back
 * from the downloaded PDF's document information with pdfjs-dist as a PDF reader shows them.
 */
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, useLocalStack } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';
import { newAccount, type TestAccount } from '../helpers/template-fixtures.js';

const local = useLocalStack();

let account: TestAccount;
beforeAll(async () => {
  account = await newAccount(local, 'meta');
});

const render = (body: Record<string, unknown>) =>
  local.api('/v1/pdf', { method: 'POST', token: account.session, body });

/** The document information dictionary of the job's PDF. */
const infoOf = async (res: ApiResponse): Promise<Record<string, unknown>> => {
  expect(res.status, res.text).toBe(201);
  const bytes = new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer());
  expect(bytes.length).toBe(res.json.file_size_bytes);
  const doc = await getDocument({ data: bytes, verbosity: 0, isEvalSupported: false }).promise;
  try {
    return (await doc.getMetadata()).info as Record<string, unknown>;
  } finally {
    await doc.destroy();
  }
};

/** `D:YYYYMMDDHHmmSS+00'00'` as a time. */
const pdfTime = (value: unknown): number => {
  const m = /^D:(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})\+00'00'$/.exec(String(value));
  if (!m) throw new Error(`not a PDF date in UTC: ${String(value)}`);
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  return Date.UTC(y as number, (mo as number) - 1, d, h, mi, s);
};

describe('PDF metadata', () => {
  it('takes the title from the document’s <title> (templated), with the creation date of the render', async () => {
    const res = await render({
      html: '<html><head><title>Invoice {{ number }}</title></head><body><p>Total: 12.00</p></body></html>',
      variables: { number: '2026-0042' },
    });
    const info = await infoOf(res);
    expect(info.Title).toBe('Invoice 2026-0042');
    expect(info.Author).toBeUndefined();
    const created = pdfTime(info.CreationDate);
    // Whole seconds, at or after the job was created, and within the render.
    expect(created).toBeGreaterThanOrEqual(Math.floor(Date.parse(res.json.created_at) / 1000) * 1000);
    expect(created).toBeLessThanOrEqual(Date.now());
  });

  it('sets title, author, subject and keywords from metadata, and the creation date', async () => {
    const before = Math.floor(Date.now() / 1000) * 1000;
    const res = await render({
      html: '<title>Ignored for the title</title><p>Report</p>',
      metadata: {
        title: 'Rapport trimestriel — Q3 2026 (draft) 📈',
        author: '  Ada Lovelace  ',
        subject: 'Sales by region',
        keywords: ['sales', 'q3 2026', 'Übersicht'],
      },
    });
    const info = await infoOf(res);
    expect(info).toMatchObject({
      Title: 'Rapport trimestriel — Q3 2026 (draft) 📈',
      Author: 'Ada Lovelace',
      Subject: 'Sales by region',
      Keywords: 'sales, q3 2026, Übersicht',
      Creator: 'Chromium',
    });
    expect(pdfTime(info.CreationDate)).toBeGreaterThanOrEqual(before);
    expect(pdfTime(info.CreationDate)).toBeLessThanOrEqual(Date.now());
    expect(info.ModDate).toBe(info.CreationDate);
    // The document itself is as printed.
    const pdf = await readPdf(new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer()));
    expect(pdf.text).toBe('Report');
    expect(res.json.page_count).toBe(1);
  });

  it('keeps the <title> when metadata gives only an author, and works with a saved template', async () => {
    const saved = await local.api('/v1/templates', {
      method: 'POST',
      token: account.session,
      body: { name: 'Titled', html: '<title>{{ t }}</title><p>x</p>' },
    });
    expect(saved.status, saved.text).toBe(201);
    const info = await infoOf(
      await render({
        template_id: saved.json.id,
        variables: { t: 'From the template' },
        metadata: { author: 'Grace' },
      }),
    );
    expect(info).toMatchObject({ Title: 'From the template', Author: 'Grace' });
  });

  it.each([
    ['not an object', { metadata: 'Report' }, 'metadata'],
    ['an unknown field', { metadata: { creator: 'me' } }, 'metadata.creator'],
    ['a blank title', { metadata: { title: '   ' } }, 'metadata.title'],
    ['an author over 1,000 characters', { metadata: { author: 'a'.repeat(1001) } }, 'metadata.author'],
    ['a control character', { metadata: { subject: 'line\nbreak' } }, 'metadata.subject'],
    ['keywords as a string', { metadata: { keywords: 'a, b' } }, 'metadata.keywords'],
    ['a blank keyword', { metadata: { keywords: ['a', ' '] } }, 'metadata.keywords.1'],
    [
      'more than 50 keywords',
      { metadata: { keywords: Array.from({ length: 51 }, (_, i) => `k${i}`) } },
      'metadata.keywords',
    ],
  ])('refuses %s: 422 INVALID_PDF_OPTIONS naming the field', async (_, fields, field) => {
    const res = await render({ html: '<p>x</p>', ...fields });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('INVALID_PDF_OPTIONS');
    expect(res.json.error.details).toEqual([expect.objectContaining({ field })]);
  });
});
