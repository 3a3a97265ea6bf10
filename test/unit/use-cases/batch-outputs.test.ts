/**
 * A completed batch's outputs (domain/batches/batch-outputs.ts) as the composition root builds
 * their builder (functions/services.ts, batchOutputBuilder), on the memory parts
 * (test/helpers/memory-services.ts): the memory bucket with its assembler and archiver (the S3
 * adapters' work, held to the same contracts in test/contract), the batch output queue in memory,
 * the render queue's consumer rendering the batch's jobs. The merged PDF and the ZIP are read with
 * poppler, unzip and zipinfo, through the links the batch.completed webhook carries.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { BatchCommand, BatchItem } from '../../../functions/domain/batches/batches.js';
import { newWebhookId } from '../../../functions/domain/common/ids.js';
import type { Principal } from '../../../functions/domain/common/principal.js';
import { batches, batchOutputBuilder, renderWorker } from '../../../functions/services.js';
import { parseTemplateData } from '../../../functions/templating/index.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';
import { pdfinfo, pdfText } from '../../helpers/pdf-readers.js';
import { zipEntries, zipEntry } from '../../helpers/zip-readers.js';

let m: MemoryServices;
afterEach(async () => {
  await m?.close();
});

const item = (variables: string, fileName?: string): BatchItem => ({
  variables: parseTemplateData(variables),
  ...(fileName !== undefined ? { fileName } : {}),
});

const batchOf = (
  items: readonly BatchItem[],
  webhookId: string,
  /** null: none asked for. */
  output: BatchCommand['output'] | null = { merged_pdf: true, zip: true },
): BatchCommand => ({
  source: {
    kind: 'inline',
    html: '<p>Invoice {{ n }}: {{ 100 / d }}</p>',
    headerHtml: null,
    footerHtml: null,
  },
  options: {},
  items,
  webhookId,
  ...(output ? { output } : {}),
});

/** Two invoices that render (both named invoice.pdf) and one that fails (a division by zero). */
const items = () => [
  item('{"n": 1, "d": 1}', 'invoice.pdf'),
  item('{"n": 2, "d": 0}', 'broken.pdf'),
  item('{"n": 3, "d": 4}', 'invoice.pdf'),
];

const endpoint = async (principal: Principal): Promise<string> => {
  const id = newWebhookId();
  await m.endpoints.create(
    {
      id,
      account_id: principal.accountId,
      url: 'https://example.com/hook',
      description: null,
      events: ['batch.completed'],
      created_at: '2026-11-28T10:00:00.000Z',
      sealed_secret: 'sealed',
    },
    10,
  );
  return id;
};

/** Plays the render queue's consumer until its queue is empty. */
const renderAll = async () => {
  const worker = m.services.get(renderWorker);
  for (let messages = m.renderQueue.drain(); messages.length > 0; messages = m.renderQueue.drain()) {
    for (const message of messages) await worker.handle(message);
  }
};

/** Plays the batch output queue's consumer: each message's outcome. */
const buildAll = async () => {
  const builder = m.services.get(batchOutputBuilder);
  const outcomes: string[] = [];
  for (const message of m.batchOutputQueue.drain()) outcomes.push(await builder.handle(message));
  return outcomes;
};

const download = async (url: unknown): Promise<Uint8Array> => {
  const response = await fetch(url as string);
  expect(response.status).toBe(200);
  return new Uint8Array(await response.arrayBuffer());
};

describe('batch outputs', () => {
  it('builds the merged PDF and the ZIP once the batch completed, then tells batch.completed with their links', async () => {
    m = memoryServices();
    const ada = caller('starter');
    const { batch } = await m.services.get(batches).create(ada, batchOf(items(), await endpoint(ada)));
    await renderAll();
    // Completed, but told only once the outputs are built.
    expect((await m.batchStore.get(ada.accountId, batch.id))?.status).toBe('completed');
    expect(await m.events()).toEqual([]);
    expect(await buildAll()).toEqual(['built']);

    const built = await m.batchStore.get(ada.accountId, batch.id);
    expect(built?.outputs).toMatchObject({
      status: 'ready',
      merged_pdf_key: `pdf/${ada.accountId}/${batch.id}.pdf`,
      zip_key: `pdf/${ada.accountId}/${batch.id}.zip`,
      error: null,
    });
    // The order (the items' file names) is gone once built.
    expect(m.batchOrders.size()).toBe(0);

    const events = await m.events();
    expect(events.map((e) => e.type)).toEqual(['batch.completed']);
    const told = events[0]?.data as Record<string, unknown>;
    expect(told).toMatchObject({
      id: batch.id,
      status: 'completed',
      output_status: 'ready',
      output_error: null,
    });

    // The merged PDF: the two invoices that rendered, in item order.
    const merged = await download(told.merged_pdf_url);
    expect((await pdfinfo(merged)).Pages).toBe('2');
    expect((await pdfText(merged, { first: 1, last: 1 })).stdout).toContain('Invoice 1: 100');
    expect((await pdfText(merged, { first: 2, last: 2 })).stdout).toContain('Invoice 3: 25');

    // The ZIP: the two PDFs under their names (the second made unique) and the manifest.
    const zip = await download(told.zip_url);
    const { tested, entries } = await zipEntries(zip);
    expect(tested).toMatch(/No errors detected/);
    expect(entries.map((e) => e.name)).toEqual(['invoice.pdf', 'invoice (2).pdf', 'manifest.json']);
    expect((await pdfText(await zipEntry(zip, 'invoice (2).pdf'))).stdout).toContain('Invoice 3: 25');
    const manifest = JSON.parse(new TextDecoder().decode(await zipEntry(zip, 'manifest.json')));
    expect(manifest).toMatchObject({ batch_id: batch.id, total: 3, completed: 2, failed: 1 });
    expect(
      manifest.items.map((i: { status: string; file_name: string | null }) => [i.status, i.file_name]),
    ).toEqual([
      ['completed', 'invoice.pdf'],
      ['failed', null],
      ['completed', 'invoice (2).pdf'],
    ]);
    expect(manifest.items[1].error.code).toBe('INVALID_HTML_TEMPLATE');
  });

  it('builds once when its message comes twice: one build, one batch.completed', async () => {
    m = memoryServices();
    const ada = caller('starter');
    const { batch } = await m.services
      .get(batches)
      .create(ada, batchOf(items(), await endpoint(ada), { merged_pdf: false, zip: true }));
    await renderAll();
    const [message] = m.batchOutputQueue.messages();
    await m.batchOutputQueue.send(message?.body as never);
    expect(await buildAll()).toEqual(['built', 'skipped']);
    expect((await m.events()).map((e) => e.type)).toEqual(['batch.completed']);
    // Only the ZIP was asked for.
    expect(m.storage.keys().filter((k) => k.startsWith(`pdf/${ada.accountId}/${batch.id}.`))).toEqual([
      `pdf/${ada.accountId}/${batch.id}.zip`,
    ]);
  });

  it('records a merged PDF over the page limit as the outputs’ failure, stores none, and still tells batch.completed', async () => {
    m = memoryServices({ settings: { maxPdfPages: 1 } });
    const ada = caller('starter');
    const { batch } = await m.services.get(batches).create(ada, batchOf(items(), await endpoint(ada)));
    await renderAll();
    expect(await buildAll()).toEqual(['failed']);
    const built = await m.batchStore.get(ada.accountId, batch.id);
    expect(built?.outputs).toMatchObject({ status: 'failed', merged_pdf_key: null, zip_key: null });
    expect(built?.outputs?.error).toMatch(/^merged_pdf: The merged PDF has 2 pages; the limit is 1\./);
    expect(m.storage.keys().some((k) => k.startsWith(`pdf/${ada.accountId}/${batch.id}.`))).toBe(false);
    const events = await m.events();
    expect(events.map((e) => e.type)).toEqual(['batch.completed']);
    expect(events[0]?.data).toMatchObject({ output_status: 'failed', merged_pdf_url: null, zip_url: null });
  });

  it('is not built for a batch that asked for none: batch.completed is told as the last job ends', async () => {
    m = memoryServices();
    const ada = caller('starter');
    await m.services.get(batches).create(ada, batchOf(items(), await endpoint(ada), null));
    await renderAll();
    expect(m.batchOutputQueue.messages()).toEqual([]);
    const events = await m.events();
    expect(events.map((e) => e.type)).toEqual(['batch.completed']);
    expect(events[0]?.data).toMatchObject({ output: null, output_status: null, merged_pdf_url: null });
  });
});
