/**
 * `protection` (issue 34) over HTTP against the real local stack, read back with real readers:
 * qpdf reports AES-256 revision 6 and the permissions asked; pdftotext opens a user-password PDF
 * with the password and not without it; a PDF without a user password opens as it is. Bad
 * passwords answer 422 naming the field, with no job created; a saved template refuses it; an
 * async render (whose stored order holds the passwords sealed) opens with the same password.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { waitForBatch, waitForJob } from '../helpers/async-jobs.js';
import { type ApiResponse, useLocalStack } from '../helpers/local-stack.js';
import { pdfText, qpdfEncryption } from '../helpers/pdf-readers.js';
import { newAccount, type TestAccount } from '../helpers/template-fixtures.js';

const local = useLocalStack();

let account: TestAccount;
beforeAll(async () => {
  account = await newAccount(local, 'protect');
});

const OWNER = 'Correct-Horse-Battery-9';
const USER = 'öffne mich';
const html = '<h1>Invoice {{ number }}</h1><p>Total: 12.00</p>';

const render = (body: Record<string, unknown>, token = account.session) =>
  local.api('/v1/pdf', { method: 'POST', token, body });

const pdfOf = async (res: ApiResponse): Promise<Uint8Array> => {
  expect(res.status, res.text).toBe(201);
  return new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer());
};

/** qpdf's lines `name: allowed|not allowed` as a record. */
const permissionsOf = (report: string): Record<string, string> =>
  Object.fromEntries(
    [...report.matchAll(/^([a-z ]+): (allowed|not allowed)$/gm)].map(([, k, v]) => [
      k as string,
      v as string,
    ]),
  );

describe('protection', () => {
  it('encrypts with AES-256 R6, a user password and the permissions asked', async () => {
    const res = await render({
      html,
      variables: { number: '2026-0042' },
      protection: {
        owner_password: OWNER,
        user_password: USER,
        permissions: { printing: 'low', copying: false, annotating: true },
      },
    });
    const pdf = await pdfOf(res);
    expect(JSON.stringify(res.json)).not.toContain(OWNER);

    const report = await qpdfEncryption(pdf, USER);
    expect(report.ok, report.stderr).toBe(true);
    expect(report.stdout).toMatch(/^R = 6$/m);
    expect(report.stdout).toMatch(/^stream encryption method: AESv3$/m);
    expect(report.stdout).toMatch(/^Supplied password is user password$/m);
    expect(permissionsOf(report.stdout)).toMatchObject({
      'print low resolution': 'allowed',
      'print high resolution': 'not allowed',
      'extract for any purpose': 'not allowed',
      'modify annotations': 'allowed',
      'modify other': 'not allowed',
      'modify document assembly': 'not allowed',
      'modify forms': 'not allowed',
    });
    expect((await qpdfEncryption(pdf, OWNER)).stdout).toMatch(/^Supplied password is owner password$/m);

    const opened = await pdfText(pdf, { userPassword: USER });
    expect(opened.ok, opened.stderr).toBe(true);
    expect(opened.stdout).toContain('Invoice 2026-0042');
    const refused = await pdfText(pdf);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toMatch(/Incorrect password/);
    expect((await pdfText(pdf, { userPassword: 'not the password' })).ok).toBe(false);
  });

  it('without a user password, opens as it is and keeps its permissions (defaults: print only)', async () => {
    const pdf = await pdfOf(
      await render({ html, variables: { number: '7' }, protection: { owner_password: OWNER } }),
    );
    const report = await qpdfEncryption(pdf);
    expect(report.ok, report.stderr).toBe(true);
    expect(report.stdout).toMatch(/^R = 6$/m);
    expect(permissionsOf(report.stdout)).toMatchObject({
      'print high resolution': 'allowed',
      'extract for any purpose': 'not allowed',
      'modify other': 'not allowed',
      'modify annotations': 'not allowed',
    });
    const text = await pdfText(pdf);
    expect(text.ok, text.stderr).toBe(true);
    expect(text.stdout).toContain('Invoice 7');
  });

  it.each([
    [{ owner_password: '' }, 'protection.owner_password'],
    [{ owner_password: 'short-1' }, 'protection.owner_password'],
    [{ owner_password: 'aaaaaaaaaaaaaaaaaaaa' }, 'protection.owner_password'],
    [{ owner_password: 'x'.repeat(100) + 'é'.repeat(20) }, 'protection.owner_password'],
    [{ user_password: USER }, 'protection.owner_password'],
    [{ owner_password: OWNER, user_password: OWNER }, 'protection.user_password'],
    [{ owner_password: OWNER, user_password: 'tab\there' }, 'protection.user_password'],
    [{ owner_password: OWNER, permissions: { printing: 'yes' } }, 'protection.permissions.printing'],
    [{ owner_password: OWNER, permissions: { copying: 'true' } }, 'protection.permissions.copying'],
    [{ owner_password: OWNER, encryption: 'rc4' }, 'protection.encryption'],
  ])('refuses %j with 422 naming %s, creating no job and echoing no password', async (protection, field) => {
    const fresh = await newAccount(local, 'protect-bad');
    const res = await render({ html, variables: { number: '1' }, protection }, fresh.session);
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('INVALID_PDF_OPTIONS');
    expect(res.json.error.details.map((d: { field: string }) => d.field)).toContain(field);
    for (const secret of [OWNER, USER, 'short-1', 'aaaaaaaaaaaa']) expect(res.text).not.toContain(secret);
    expect((await local.api('/v1/pdf', { token: fresh.session })).json).toEqual([]);
  });

  it('is not kept with a saved template', async () => {
    const res = await local.api('/v1/templates', {
      method: 'POST',
      token: account.session,
      body: { name: 'protected', html, pdf_options: { protection: { owner_password: OWNER } } },
    });
    expect(res.status, res.text).toBe(422);
    expect(JSON.stringify(res.json.error.details)).toContain('pdf_options');
    expect(res.text).not.toContain(OWNER);
  });

  it('encrypts an async render with the password its sealed order carried', async () => {
    const res = await render({
      html,
      variables: { number: 'async-1' },
      async: true,
      protection: { owner_password: OWNER, user_password: USER },
    });
    expect(res.status, res.text).toBe(202);
    expect(res.text).not.toContain(OWNER);
    const job = await waitForJob(local.api, account.session, res.json.id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(JSON.stringify(job)).not.toContain(USER);
    const pdf = new Uint8Array(await (await fetch(job.download_url)).arrayBuffer());
    const opened = await pdfText(pdf, { userPassword: USER });
    expect(opened.ok, opened.stderr).toBe(true);
    expect(opened.stdout).toContain('Invoice async-1');
    expect((await pdfText(pdf)).ok).toBe(false);
  });

  it('encrypts every item of a batch with the batch’s protection', async () => {
    const res = await local.api('/v1/batches', {
      method: 'POST',
      token: account.session,
      body: {
        html,
        protection: { owner_password: OWNER, user_password: USER },
        items: [{ variables: { number: 'b-1' } }, { variables: { number: 'b-2' } }],
      },
    });
    expect(res.status, res.text).toBe(202);
    expect(res.text).not.toContain(OWNER);
    const done = await waitForBatch(local.api, account.session, res.json.id);
    expect(done.counts, JSON.stringify(done)).toMatchObject({ completed: 2, failed: 0 });
    const jobs = await local.api(`/v1/batches/${res.json.id}/jobs`, { token: account.session });
    for (const [i, job] of (jobs.json as { download_url: string }[]).entries()) {
      const pdf = new Uint8Array(await (await fetch(job.download_url)).arrayBuffer());
      expect((await pdfText(pdf)).ok).toBe(false);
      expect((await pdfText(pdf, { userPassword: USER })).stdout).toContain(`Invoice b-${i + 1}`);
    }
  });

  it('leaves no password in anything the stack wrote (table, bucket, orders)', async () => {
    const files = (await readdir(local.stack.dataDir, { recursive: true, withFileTypes: true }))
      .filter((f) => f.isFile())
      .map((f) => join(f.parentPath, f.name));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const bytes = await readFile(file).catch(() => Buffer.alloc(0));
      for (const secret of [OWNER, USER]) {
        for (const encoded of [Buffer.from(secret, 'utf8'), Buffer.from(secret, 'utf16le')])
          expect(bytes.includes(encoded), `${secret} in ${file}`).toBe(false);
      }
    }
  });
});
