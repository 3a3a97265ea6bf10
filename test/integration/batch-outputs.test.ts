/**
 * A batch's outputs over HTTP against the real local stack (its render queue's consumer, the batch
 * output queue's consumer, s3rver): `output: {merged_pdf, zip}` builds, once the batch completed,
 * one PDF of the completed items in item order and a ZIP of their PDFs named by `file_name` with a
 * manifest that lists the failed ones; GET /v1/batches/{id} carries fresh links to both, and
 * batch.completed is sent once they are ready, with them. Checked with pdfinfo, pdftotext, unzip.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../helpers/local-stack.js';
import { useLocalStack } from '../helpers/local-stack.js';
import { newAccount, type TestAccount } from '../helpers/template-fixtures.js';
import { useWebhookReceiver } from '../helpers/webhook-receiver.js';

const receiver = useWebhookReceiver({});
const local = useLocalStack({ env: receiver.env });
const dir = mkdtempSync(join(tmpdir(), 'batch-outputs-'));

let account: TestAccount;
beforeAll(async () => {
  account = await newAccount(local, 'outputs');
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls the batch until its outputs are built (or failed). */
const waitForOutputs = async (id: string, timeoutMs = 120_000): Promise<Json> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await local.api(`/v1/batches/${id}`, { token: account.session });
    expect(res.status, res.text).toBe(200);
    if (res.json.output_status === 'ready' || res.json.output_status === 'failed') return res.json;
    if (Date.now() > deadline) throw new Error(`batch ${id}'s outputs not built: ${res.text}`);
    await sleep(250);
  }
};

const download = async (url: string, name: string): Promise<string> => {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  const file = join(dir, name);
  writeFileSync(file, new Uint8Array(await res.arrayBuffer()));
  return file;
};

const text = (file: string) => execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' });
const pages = (file: string) =>
  Number(/^Pages:\s+(\d+)/m.exec(execFileSync('pdfinfo', [file], { encoding: 'utf8' }))?.[1]);

/** One page per item, its number on it; an item with `divide_by: 0` fails while templating. */
const TEMPLATE = '<h1>Invoice {{ number }}</h1><p>Share {{ 100 // divide_by }}</p>';

describe('POST /v1/batches with output', () => {
  it('builds the merged PDF and the ZIP once the batch completed, the failed item in the manifest', async () => {
    const items = [
      { variables: { number: 'A-1', divide_by: 1 }, file_name: 'invoice-A-1.pdf' },
      { variables: { number: 'A-2', divide_by: 0 }, file_name: 'invoice-A-2.pdf' },
      { variables: { number: 'A-3', divide_by: 2 }, file_name: 'invoice-A-1.pdf' },
      { variables: { number: 'A-4', divide_by: 4 } },
    ];
    const res = await local.api('/v1/batches', {
      method: 'POST',
      token: account.session,
      body: { html: TEMPLATE, items, output: { merged_pdf: true, zip: true } },
    });
    expect(res.status, res.text).toBe(202);
    expect(res.json).toMatchObject({
      output: { merged_pdf: true, zip: true },
      output_status: 'pending',
      merged_pdf_url: null,
      zip_url: null,
    });

    const done = await waitForOutputs(res.json.id);
    expect(done).toMatchObject({ status: 'completed', output_status: 'ready', output_error: null });
    expect(done.counts).toMatchObject({ completed: 3, failed: 1 });

    // The merged PDF: the three completed items' pages, in item order.
    const merged = await download(done.merged_pdf_url, 'merged.pdf');
    expect(pages(merged)).toBe(3);
    const words = text(merged);
    expect(words.indexOf('Invoice A-1')).toBeLessThan(words.indexOf('Invoice A-3'));
    expect(words.indexOf('Invoice A-3')).toBeLessThan(words.indexOf('Invoice A-4'));
    expect(words).not.toContain('Invoice A-2');

    // The ZIP: the completed items' PDFs by file_name (a name used twice made unique), a manifest.
    const zip = await download(done.zip_url, 'batch.zip');
    execFileSync('unzip', ['-tq', zip]);
    const names = execFileSync('zipinfo', ['-1', zip], { encoding: 'utf8' }).trim().split('\n');
    const jobs = (await local.api(`/v1/batches/${res.json.id}/jobs`, { token: account.session })).json;
    expect(names).toEqual([
      'invoice-A-1.pdf',
      'invoice-A-1 (2).pdf',
      `0004-${jobs[3].id}.pdf`,
      'manifest.json',
    ]);
    const third = join(dir, 'third.pdf');
    writeFileSync(third, execFileSync('unzip', ['-p', zip, 'invoice-A-1 (2).pdf']));
    expect(text(third)).toContain('Invoice A-3');
    const manifest = JSON.parse(execFileSync('unzip', ['-p', zip, 'manifest.json'], { encoding: 'utf8' }));
    expect(manifest).toMatchObject({ batch_id: res.json.id, total: 4, completed: 3, failed: 1 });
    expect(manifest.items[1]).toMatchObject({
      item: 1,
      job_id: jobs[1].id,
      status: 'failed',
      file_name: null,
      error: { code: 'INVALID_HTML_TEMPLATE' },
    });

    // The links are signed afresh on every read.
    await sleep(1100);
    const again = (await local.api(`/v1/batches/${res.json.id}`, { token: account.key })).json;
    expect(again.zip_url).not.toBe(done.zip_url);
    expect((await fetch(again.zip_url)).status).toBe(200);
  });

  it('sends batch.completed once, when the outputs are ready, with their links', async () => {
    const path = '/ok/batch-outputs';
    const endpoint = await local.api('/v1/webhooks', {
      method: 'POST',
      token: account.session,
      body: { url: receiver.url(path), events: ['batch.completed'] },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const res = await local.api('/v1/batches', {
      method: 'POST',
      token: account.session,
      body: {
        html: TEMPLATE,
        items: [
          { variables: { number: 'W-1', divide_by: 1 } },
          { variables: { number: 'W-2', divide_by: 1 } },
        ],
        output: { zip: true },
        webhook_id: endpoint.json.id,
      },
    });
    expect(res.status, res.text).toBe(202);
    const [request] = await receiver.waitFor(path, 1, 60_000);
    const payload = JSON.parse(request?.body ?? '{}');
    expect(payload).toMatchObject({
      type: 'batch.completed',
      data: { id: res.json.id, status: 'completed', output_status: 'ready', merged_pdf_url: null },
    });
    const zip = await download(payload.data.zip_url, 'webhook.zip');
    expect(execFileSync('zipinfo', ['-1', zip], { encoding: 'utf8' }).trim().split('\n')).toHaveLength(3);
    await sleep(1500);
    expect(receiver.received.filter((r) => r.path === path)).toHaveLength(1);
  });

  it('a batch without output has no outputs, as before', async () => {
    const res = await local.api('/v1/batches', {
      method: 'POST',
      token: account.session,
      body: { html: TEMPLATE, items: [{ variables: { number: 'B-1', divide_by: 1 } }] },
    });
    expect(res.status, res.text).toBe(202);
    expect(res.json).toMatchObject({
      output: null,
      output_status: null,
      merged_pdf_url: null,
      zip_url: null,
    });
  });

  it('refuses a bad output or file_name with 422 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ output: { merged_pdf: 'yes' } }, 'output.merged_pdf'],
      [{ output: { tar: true } }, 'output.tar'],
      [
        { items: [{ variables: { number: 1, divide_by: 1 }, file_name: '../etc/passwd.pdf' }] },
        'items[0].file_name',
      ],
      [
        { items: [{ variables: { number: 1, divide_by: 1 }, file_name: 'invoice.exe' }] },
        'items[0].file_name',
      ],
      [
        { items: [{ variables: { number: 1, divide_by: 1 }, file_name: 'a\u0007b.pdf' }] },
        'items[0].file_name',
      ],
    ];
    for (const [body, field] of cases) {
      const res = await local.api('/v1/batches', {
        method: 'POST',
        token: account.session,
        body: { html: TEMPLATE, items: [{ variables: { number: 1, divide_by: 1 } }], ...body },
      });
      expect(res.status, res.text).toBe(422);
      expect(res.json.error.code, res.text).toBe('VALIDATION_ERROR');
      expect(res.json.error.details[0].field, res.text).toBe(field);
    }
  });
});
