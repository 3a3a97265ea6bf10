/**
 * Links in the PDFs the API makes are safe by allow-list (issue 21): whatever the HTML said, and
 * whatever the page added while it printed, the stored PDF holds only http:, https:, mailto: and
 * in-document links, read back as a viewer reads them (pdf.js); each removed link is reported in
 * the job's diagnostics. The document's metadata (an incremental update) still applies.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { jobSchema } from '../../functions/pdf/schemas.js';
import { useLocalStack } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';
import { readLinks } from '../helpers/pdf-links.js';
import { newAccount, type TestAccount } from '../helpers/template-fixtures.js';

const local = useLocalStack();

let account: TestAccount;
beforeAll(async () => {
  account = await newAccount(local, 'links');
});

/** Every scheme the issue lists, with entity, tab, case and control-character spellings, and SVG's <a>. */
const LINKS_HTML = readFileSync(new URL('../fixtures/pdf/links.html', import.meta.url), 'utf8');

/** Links only a script makes: one added by a beforeprint handler, one in a shadow root, xlink:href. */
const SCRIPTED = `
  <p id="late">late link</p>
  <div id="host"></div>
  <svg width="120" height="30" xmlns:xlink="http://www.w3.org/1999/xlink">
    <a xlink:href="vbscript:msgbox(8)"><text x="0" y="20">xlink</text></a>
  </svg>
  <script>
    addEventListener('beforeprint', () => {
      const a = document.createElement('a');
      a.href = 'smb://attacker.example/beforeprint';
      a.textContent = 'added before print';
      document.getElementById('late').append(a);
    });
    document.getElementById('host').attachShadow({ mode: 'open' }).innerHTML =
      '<a href="javascript:alert(9)">shadow link</a>';
  </script>`;

const ALLOWED = /^(https?:|mailto:)/i;

describe('links in a PDF', () => {
  it('hold only http, https, mailto and in-document targets; the rest are removed and reported', async () => {
    const html = LINKS_HTML.replace('</body>', `${SCRIPTED}</body>`);
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      token: account.session,
      body: { html, metadata: { title: 'Links' } },
    });
    expect(res.status, res.text).toBe(201);
    expect(() => jobSchema.strict().parse(res.json)).not.toThrow();
    const bytes = new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer());

    const links = await readLinks(bytes);
    // The allowed links are all still there…
    expect(links.filter((l) => l.url !== undefined).map((l) => l.url)).toEqual([
      'https://example.com/a_(b)',
      'http://example.com/UP',
      'mailto:someone@example.com',
      'https://example.org/',
    ]);
    expect(links.filter((l) => l.dest !== undefined && l.dest !== null)).toHaveLength(2);
    // …and nothing else: no other URL, no action of any kind.
    for (const link of links) {
      if (link.url !== undefined) expect(link.url).toMatch(ALLOWED);
      expect(link.action).toBeUndefined();
    }
    const raw = Buffer.from(bytes).toString('latin1');
    for (const target of ['javascript:', 'vbscript:', 'file:', 'smb:', 'ms-msdt:', 'chrome:', 'data:text']) {
      expect(raw, target).not.toContain(target);
    }

    // The text stays, and the metadata written after the links were removed is there.
    const pdf = await readPdf(bytes);
    expect(pdf.text).toContain('js entity');
    expect(pdf.text).toContain('added before print');
    expect(pdf.text).toContain('shadow link');

    const removed = res.json.diagnostics.entries.filter((e: { type: string }) => e.type === 'unsafe_link');
    const targets = removed.map((e: { url: string }) => e.url.replace(/:.*/s, '').toLowerCase());
    expect(targets).toEqual(
      expect.arrayContaining(['javascript', 'vbscript', 'file', 'smb', 'data', 'ms-msdt', 'chrome']),
    );
    expect(removed.map((e: { url: string }) => e.url)).toEqual(
      expect.arrayContaining([
        'smb://attacker.example/beforeprint',
        'javascript:alert(9)',
        'vbscript:msgbox(8)',
      ]),
    );
    expect(removed[0].message).toMatch(/^removed from page 1: only http:, https:, mailto: and in-document/);
  });

  it('leaves a PDF without unsafe links as it was, with no unsafe_link entry', async () => {
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      token: account.session,
      body: { html: '<a href="https://example.com/">ok</a> <a href="#x">here</a><p id="x">x</p>' },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.json.diagnostics.entries).toEqual([]);
    const links = await readLinks(new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer()));
    expect(links.map((l) => l.url ?? 'dest')).toEqual(['https://example.com/', 'dest']);
  });
});
