import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { removeUnsafeLinks, uriScheme } from '../../functions/renderer/pdf-links.js';
import { readPdf } from '../helpers/pdf.js';
import { readLinks } from '../helpers/pdf-links.js';

// Printed by this project's Chromium from links.html beside it: hrefs of every scheme the
// allow-list refuses (with entity, tab, case and control-character spellings), SVG's <a>, and
// allowed links on two pages.
const fixture = () => new Uint8Array(readFileSync(new URL('../fixtures/pdf/links.pdf', import.meta.url)));

describe('removeUnsafeLinks', () => {
  it('leaves only http, https, mailto and in-document links in the PDF, on every page', async () => {
    const before = await readLinks(fixture());
    // The fixture really holds the dangerous links: the test would pass vacuously otherwise.
    expect(before.map((l) => l.url && uriScheme(l.url))).toEqual(
      expect.arrayContaining([
        'javascript',
        'vbscript',
        'file',
        'smb',
        'data',
        'ms-msdt',
        'chrome',
        'ftp',
        'tel',
      ]),
    );

    const pdf = fixture();
    const removed = removeUnsafeLinks(pdf);
    const after = await readLinks(pdf);

    expect(after.map((l) => [l.page, l.url ?? 'dest'])).toEqual([
      [1, 'https://example.com/a_(b)'],
      [1, 'http://example.com/UP'],
      [1, 'mailto:someone@example.com'],
      [1, 'dest'],
      [2, 'https://example.org/'],
      [2, 'dest'],
    ]);
    expect(after.every((l) => l.action === undefined)).toBe(true);
    expect(removed?.map((r) => `${r.page} ${uriScheme(r.target)}`)).toEqual([
      '1 javascript',
      '1 javascript',
      '1 javascript',
      '1 javascript',
      '1 javascript',
      '1 vbscript',
      '1 file',
      '1 smb',
      '1 data',
      '1 ms-msdt',
      '1 chrome',
      '1 ftp',
      '1 tel',
      '1 javascript',
      '2 file',
    ]);
  });

  it('keeps the file the same size and readable, with its text', async () => {
    const original = fixture();
    const pdf = fixture();
    removeUnsafeLinks(pdf);
    expect(pdf.length).toBe(original.length);
    const text = (await readPdf(pdf)).text;
    expect(text).toContain('js entity');
    expect(text).toContain('file on page 2');
  });

  it('leaves no refused target anywhere in the bytes', () => {
    const pdf = fixture();
    removeUnsafeLinks(pdf);
    const bytes = Buffer.from(pdf).toString('latin1');
    for (const target of ['javascript:', 'vbscript:', 'file:', 'smb:', 'ms-msdt:', 'chrome:', 'data:text']) {
      expect(bytes).not.toContain(target);
    }
  });

  it('is idempotent: a second pass finds nothing more', () => {
    const pdf = fixture();
    removeUnsafeLinks(pdf);
    expect(removeUnsafeLinks(pdf)).toEqual([]);
  });

  it('refuses a file it cannot walk instead of passing it on', () => {
    expect(removeUnsafeLinks(new TextEncoder().encode('%PDF-1.4\nnot really\n%%EOF\n'))).toBeUndefined();
    const appended = new Uint8Array([
      ...fixture(),
      ...new TextEncoder().encode('\ntrailer\n<</Prev 1>>\nstartxref\n1\n%%EOF\n'),
    ]);
    expect(removeUnsafeLinks(appended)).toBeUndefined();
  });
});

describe('uriScheme', () => {
  it.each([
    ['https://x', 'https'],
    ['MAILTO:a@b', 'mailto'],
    [' \u0001javascript:x', 'javascript'],
    ['java\tscript:x', 'javascript'],
    ['//host/share', undefined],
    ['relative/path', undefined],
  ])('%j → %s', (uri, scheme) => {
    expect(uriScheme(uri)).toBe(scheme);
  });
});
