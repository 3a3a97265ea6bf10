/**
 * POST /v1/merges over HTTP against the real local stack (Chromium, s3rver, dynalite), the PDFs
 * read with poppler (pdfinfo, pdftotext) and qpdf: a merge has the sum of its parts' pages, their
 * text in order, one outline entry per part over the part's own bookmarks, and the page numbers a
 * part prints either as printed (per_part) or across the whole document (continuous, the parts
 * laid out again at their place: render parts, and job parts from the order each job kept).
 * Another account's job answers 404 and charges nothing.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, useLocalStack } from '../helpers/local-stack.js';
import { newAccount, type TestAccount } from '../helpers/template-fixtures.js';

const local = useLocalStack();
const dir = mkdtempSync(join(tmpdir(), 'merges-'));

let account: TestAccount;
let other: TestAccount;
beforeAll(async () => {
  [account, other] = await Promise.all([newAccount(local, 'merge'), newAccount(local, 'merge-other')]);
});

const PAGE_N_OF_M =
  '<div style="font-size: 10px; width: 100%; text-align: center">Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>';

/** `count` pages, each with its own line of text, and a heading on the first. */
const pagesOf = (label: string, count: number): string =>
  `<style>section + section { break-before: page; }</style><h1>${label}</h1>${Array.from(
    { length: count },
    (_, i) => `<section>${label} page ${i + 1}</section>`,
  ).join('')}`;

const render = async (body: Record<string, unknown>, token = account.session): Promise<string> => {
  const res = await local.api('/v1/pdf', { method: 'POST', token, body });
  expect(res.status, res.text).toBe(201);
  return res.json.id as string;
};

/** An async render, polled until it ended: its job id. */
const renderAsync = async (body: Record<string, unknown>): Promise<string> => {
  const res = await local.api('/v1/pdf', {
    method: 'POST',
    token: account.session,
    body: { ...body, async: true },
  });
  expect(res.status, res.text).toBe(202);
  let got = res;
  for (let i = 0; i < 120 && !['completed', 'failed'].includes(got.json.status); i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    got = await local.api(`/v1/pdf/${res.json.id}`, { token: account.session });
  }
  expect(got.json.status, got.text).toBe('completed');
  return res.json.id as string;
};

const merge = (body: Record<string, unknown>, token = account.session) =>
  local.api('/v1/merges', { method: 'POST', token, body });

let files = 0;
/** The merge's PDF, downloaded through its link, as a file for the readers. */
const download = async (res: ApiResponse): Promise<string> => {
  expect(res.status, res.text).toBe(201);
  expect(res.json).toMatchObject({ kind: 'merge', status: 'completed' });
  const bytes = new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer());
  const file = join(dir, `merge-${++files}.pdf`);
  writeFileSync(file, bytes);
  return file;
};

const pageCount = (file: string): number =>
  Number(/^Pages:\s+(\d+)/m.exec(execFileSync('pdfinfo', [file], { encoding: 'utf8' }))?.[1]);

/** Each page's text, blank lines and spacing collapsed. */
const pageTexts = (file: string): string[] => {
  const pages: string[] = [];
  for (let n = 1; n <= pageCount(file); n++) {
    const text = execFileSync('pdftotext', ['-f', String(n), '-l', String(n), file, '-'], {
      encoding: 'utf8',
    });
    pages.push(
      text
        .split('\n')
        .map((line) => line.replace(/\s+/g, ' ').trim())
        .filter(Boolean)
        .join(' | '),
    );
  }
  return pages;
};

interface Bookmark {
  readonly title: string;
  readonly page: number;
  readonly kids: Bookmark[];
}

const outlineOf = (file: string): Bookmark[] => {
  const json = JSON.parse(
    execFileSync('qpdf', ['--json', '--json-key=outlines', file], { encoding: 'utf8' }),
  );
  const walk = (items: { title: string; destpageposfrom1: number; kids: unknown[] }[]): Bookmark[] =>
    items.map((i) => ({ title: i.title, page: i.destpageposfrom1, kids: walk(i.kids as never) }));
  return walk(json.outlines);
};

/** Each page's internal links, by the destination name they go to (qpdf's object JSON). */
const internalLinks = (file: string): string[][] => {
  const json = JSON.parse(
    execFileSync('qpdf', ['--json', '--json-key=pages', '--json-key=qpdf', file], { encoding: 'utf8' }),
  );
  const objects = json.qpdf[1] as Record<string, { value: Record<string, unknown> }>;
  const objectValue = (ref: string) => objects[`obj:${ref}`]?.value ?? {};
  return (json.pages as { object: string }[]).map((page) => {
    const annots = objectValue(page.object)['/Annots'];
    const refs = Array.isArray(annots) ? (annots as string[]) : [];
    return refs.map((ref) => objectValue(ref)['/Dest']).filter((d): d is string => typeof d === 'string');
  });
};

/** Named destinations and their pages (poppler's pdfinfo -dests). */
const destinations = (file: string): Record<string, number> =>
  Object.fromEntries(
    execFileSync('pdfinfo', ['-dests', file], { encoding: 'utf8' })
      .split('\n')
      .flatMap((line) => {
        const m = /^\s*(\d+)\s.*"([^"]+)"\s*$/.exec(line);
        return m ? [[m[2] as string, Number(m[1])]] : [];
      }),
  );

const unitsUsed = async (token: string): Promise<number> => {
  const res = await local.api('/v1/usage', { token });
  expect(res.status, res.text).toBe(200);
  return res.json.renders_used as number;
};

describe('POST /v1/merges', () => {
  it('merges three jobs: the sum of their pages, their text in order, one outline entry per part', async () => {
    const ids = [
      await render({ html: pagesOf('Cover', 1), footer_html: PAGE_N_OF_M }),
      await render({ html: pagesOf('Invoice', 2), footer_html: PAGE_N_OF_M, outline: true }),
      await render({ html: pagesOf('Terms', 3), footer_html: PAGE_N_OF_M }),
    ];
    const before = await unitsUsed(account.session);
    const res = await merge({
      parts: [{ job_id: ids[0], title: 'Cover' }, { job_id: ids[1], title: 'Invoice' }, { job_id: ids[2] }],
      metadata: { title: 'Statement' },
    });
    const file = await download(res);
    expect(res.json.page_count).toBe(6);
    expect(pageCount(file)).toBe(6);
    // per_part (the default): each part's own numbers, as it was printed.
    expect(pageTexts(file)).toEqual([
      'Cover | Cover page 1 | Page 1 of 1',
      'Invoice | Invoice page 1 | Page 1 of 2',
      'Invoice page 2 | Page 2 of 2',
      'Terms | Terms page 1 | Page 1 of 3',
      'Terms page 2 | Page 2 of 3',
      'Terms page 3 | Page 3 of 3',
    ]);
    // One top entry per part (a part without a title: "Part N"), its own bookmarks beneath.
    expect(outlineOf(file)).toEqual([
      { title: 'Cover', page: 1, kids: [] },
      { title: 'Invoice', page: 2, kids: [{ title: 'Invoice', page: 2, kids: [] }] },
      { title: 'Part 3', page: 4, kids: [] },
    ]);
    expect(execFileSync('pdfinfo', [file], { encoding: 'utf8' })).toMatch(/^Title:\s+Statement$/m);
    // One render unit for the merge.
    expect(await unitsUsed(account.session)).toBe(before + 1);
    // It is a job like any other.
    const got = await local.api(`/v1/pdf/${res.json.id}`, { token: account.key });
    expect(got.json).toMatchObject({ id: res.json.id, kind: 'merge', page_count: 6 });
  });

  it('continuous over three jobs: each laid out again from its kept order, "Page N of M" right across the whole; one unit', async () => {
    // A sync render, an async one (the render queue's consumer) and another sync one, each with its own footer.
    const ids = [
      await render({ html: pagesOf('Cover', 1), footer_html: PAGE_N_OF_M }),
      await renderAsync({ html: pagesOf('Invoice', 2), footer_html: PAGE_N_OF_M, outline: true }),
      await render({ html: pagesOf('Terms', 3), footer_html: PAGE_N_OF_M }),
    ];
    const before = await unitsUsed(account.session);
    const res = await merge({
      page_numbers: 'continuous',
      parts: [{ job_id: ids[0], title: 'Cover' }, { job_id: ids[1], title: 'Invoice' }, { job_id: ids[2] }],
    });
    const file = await download(res);
    expect(pageCount(file)).toBe(6);
    expect(pageTexts(file)).toEqual([
      'Cover | Cover page 1 | Page 1 of 6',
      'Invoice | Invoice page 1 | Page 2 of 6',
      'Invoice page 2 | Page 3 of 6',
      'Terms | Terms page 1 | Page 4 of 6',
      'Terms page 2 | Page 5 of 6',
      'Terms page 3 | Page 6 of 6',
    ]);
    expect(outlineOf(file)).toEqual([
      { title: 'Cover', page: 1, kids: [] },
      { title: 'Invoice', page: 2, kids: [{ title: 'Invoice', page: 2, kids: [] }] },
      { title: 'Part 3', page: 4, kids: [] },
    ]);
    // The merge's one unit: laying the job parts out again is not charged.
    expect(await unitsUsed(account.session)).toBe(before + 1);
    // Each job's own PDF is as it was printed.
    const own = await local.api(`/v1/pdf/${ids[1]}`, { token: account.session });
    const ownFile = join(dir, 'own-invoice.pdf');
    writeFileSync(ownFile, new Uint8Array(await (await fetch(own.json.download_url)).arrayBuffer()));
    expect(pageTexts(ownFile)).toEqual([
      'Invoice | Invoice page 1 | Page 1 of 2',
      'Invoice page 2 | Page 2 of 2',
    ]);

    // Another account naming these jobs: 404 naming the first, nothing charged.
    const theirsBefore = await unitsUsed(other.session);
    const refused = await merge(
      { page_numbers: 'continuous', parts: ids.map((job_id) => ({ job_id })) },
      other.session,
    );
    expect(refused.status, refused.text).toBe(404);
    expect(refused.json.error).toMatchObject({
      code: 'PDF_JOB_NOT_FOUND',
      details: [{ field: 'parts[0].job_id', issue: expect.any(String) }],
    });
    expect(await unitsUsed(other.session)).toBe(theirsBefore);
  });

  it('continuous refuses a protected job that prints page numbers (its passwords are never kept), naming it; nothing charged', async () => {
    const plain = await render({ html: pagesOf('Plain', 1) });
    const locked = await render({
      html: pagesOf('Locked', 1),
      footer_html: PAGE_N_OF_M,
      protection: { owner_password: 'Correct-Horse-Battery-9' },
    });
    const before = await unitsUsed(account.session);
    const res = await merge({ page_numbers: 'continuous', parts: [{ job_id: plain }, { job_id: locked }] });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ field: 'parts[1].job_id', issue: expect.stringContaining('protected') }],
    });
    expect(res.text).not.toContain('Correct-Horse');
    expect(await unitsUsed(account.session)).toBe(before);
  });

  it('async: 202 with the pending merge and its Location; the render queue merges it, page numbers across the whole', async () => {
    const job = await render({ html: pagesOf('Cover', 1) });
    const before = await unitsUsed(account.session);
    const res = await merge({
      async: true,
      page_numbers: 'continuous',
      parts: [
        { job_id: job },
        { html: pagesOf('Invoice', 2), footer_html: PAGE_N_OF_M },
        { html: pagesOf('Terms', 1), footer_html: PAGE_N_OF_M },
      ],
    });
    expect(res.status, res.text).toBe(202);
    expect(res.json).toMatchObject({ kind: 'merge', mode: 'async', status: 'pending', download_url: null });
    expect(res.headers.get('location')).toBe(`/v1/pdf/${res.json.id}`);
    let got = res;
    for (let i = 0; i < 120 && !['completed', 'failed'].includes(got.json.status); i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      got = await local.api(`/v1/pdf/${res.json.id}`, { token: account.session });
    }
    const file = await download({ ...got, status: 201 });
    expect(pageTexts(file)).toEqual([
      'Cover | Cover page 1',
      'Invoice | Invoice page 1 | Page 2 of 4',
      'Invoice page 2 | Page 3 of 4',
      'Terms | Terms page 1 | Page 4 of 4',
    ]);
    // The merge's unit and one per part rendered for it.
    expect(await unitsUsed(account.session)).toBe(before + 3);
  });

  it('continuous: every page prints its number in the whole document, and the whole count', async () => {
    const job = await render({ html: pagesOf('Cover', 1) });
    const before = await unitsUsed(account.session);
    const res = await merge({
      page_numbers: 'continuous',
      parts: [
        { job_id: job },
        { html: pagesOf('Invoice', 2), footer_html: PAGE_N_OF_M },
        { html: pagesOf('Terms', 3), footer_html: PAGE_N_OF_M, title: 'Terms' },
      ],
    });
    const file = await download(res);
    expect(pageTexts(file)).toEqual([
      'Cover | Cover page 1',
      'Invoice | Invoice page 1 | Page 2 of 6',
      'Invoice page 2 | Page 3 of 6',
      'Terms | Terms page 1 | Page 4 of 6',
      'Terms page 2 | Page 5 of 6',
      'Terms page 3 | Page 6 of 6',
    ]);
    // The merge's unit and one per part rendered for it (laying a part out again is not charged).
    expect(await unitsUsed(account.session)).toBe(before + 3);
    // The parts rendered for it are jobs of their own, printed with their own numbers.
    const list = await local.api('/v1/pdf?limit=3', { token: account.session });
    // (The merge's job is made before its parts: newest first, it comes after them.)
    expect(list.json.map((j: { kind: string; page_count: number }) => [j.kind, j.page_count])).toEqual([
      ['render', 3],
      ['render', 2],
      ['merge', 6],
    ]);
  });

  it('continuous: counter(page) and counter(pages) in a paged_media body count across the whole', async () => {
    const parts = [
      { html: pagesOf('A', 2) },
      {
        html: '<style>.n::after { content: counter(page) "/" counter(pages); }</style><p>B <span class="n"></span></p>',
        paged_media: true,
      },
    ];
    // pdftotext spaces generated text as it likes: compared without spaces.
    const texts = async (page_numbers: string) =>
      pageTexts(await download(await merge({ page_numbers, parts }))).map((t) => t.replace(/\s/g, ''));
    expect(await texts('continuous')).toEqual(['A|Apage1', 'Apage2', 'B3/3']);
    expect(await texts('per_part')).toEqual(['A|Apage1', 'Apage2', 'B1/1']);
  });

  it('keeps each part’s internal links going to its own pages, though the parts share anchor names', async () => {
    const linked = (label: string) =>
      `<p><a href="#total">to the total</a></p><h2 id="total" style="break-before: page">${label} total</h2>`;
    const file = await download(
      await merge({ parts: [{ html: linked('First') }, { html: linked('Second') }], outline: false }),
    );
    expect(pageTexts(file)).toEqual(['to the total', 'First total', 'to the total', 'Second total']);
    const links = internalLinks(file);
    const dests = destinations(file);
    // Each part's link names its own renamed destination, which is on that part's second page.
    expect(links.map((names) => names.map((name) => dests[name.replace(/^\//, '')]))).toEqual([
      [2],
      [],
      [4],
      [],
    ]);
  });

  it("another account's job answers 404 PDF_JOB_NOT_FOUND naming the part, and charges nothing", async () => {
    const mine = await render({ html: pagesOf('Mine', 1) });
    const theirs = await render({ html: pagesOf('Theirs', 1) }, other.session);
    const before = await unitsUsed(account.session);
    const res = await merge({ parts: [{ job_id: mine }, { job_id: theirs }] });
    expect(res.status, res.text).toBe(404);
    expect(res.json.error).toMatchObject({
      code: 'PDF_JOB_NOT_FOUND',
      details: [{ field: 'parts[1].job_id', issue: expect.any(String) }],
    });
    expect(await unitsUsed(account.session)).toBe(before);
    // Nothing was made either.
    const list = await local.api('/v1/pdf?limit=1', { token: account.session });
    expect(list.json[0].id).toBe(mine);
  });

  it('refuses a bad body with 422 naming the field, before anything is held', async () => {
    const job = await render({ html: pagesOf('One', 1) });
    const cases: [Record<string, unknown>, string, string][] = [
      [{ parts: [{ job_id: job }] }, 'VALIDATION_ERROR', 'parts'],
      [
        { parts: [{ job_id: job }, { job_id: job }], page_numbers: 'roman' },
        'VALIDATION_ERROR',
        'page_numbers',
      ],
      [{ parts: [{ job_id: job }, { html: '' }] }, 'INVALID_HTML_CONTENT', 'parts[1].html'],
      [
        { parts: [{ job_id: job }, { html: '<p>x</p>', format: 'A9' }] },
        'INVALID_PDF_OPTIONS',
        'parts[1].format',
      ],
      [{ parts: [{ job_id: job }, { html: '<p>x</p>', async: true }] }, 'VALIDATION_ERROR', 'parts[1].async'],
    ];
    const before = await unitsUsed(account.session);
    for (const [body, code, field] of cases) {
      const res = await merge(body);
      expect(res.status, res.text).toBe(422);
      expect(res.json.error.code, res.text).toBe(code);
      expect(res.json.error.details[0].field, res.text).toBe(field);
    }
    expect(await unitsUsed(account.session)).toBe(before);
  });
});
