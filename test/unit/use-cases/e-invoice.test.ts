/**
 * A render with `e_invoice` (domain/renders/e-invoice.ts, at acceptance in pdf-jobs.ts and
 * async-renders.ts) as the composition root builds it, on the memory parts
 * (test/helpers/memory-services.ts) with the memory e-invoice checker (the real builder and the
 * profile's XSD, no schematron: test/contract/e-invoice.contract.ts). An invoice that is not one,
 * or XML against the XSD, is refused with 422 INVALID_E_INVOICE naming the field and the rule,
 * before anything is charged or stored; a valid one is recorded on the job. The business rules
 * and the embedded file are read over HTTP (test/integration/e-invoice.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_E_INVOICE_BATCH_ITEMS } from '../../../functions/domain/batches/batches.js';
import type { RequestedEInvoice } from '../../../functions/domain/renders/e-invoice.js';
import type { RenderCommand } from '../../../functions/domain/renders/render-command.js';
import { asyncRenders, batches, pdfJobs } from '../../../functions/services.js';
import { parseTemplateData, readTemplateDataText } from '../../../functions/templating/index.js';
import { validInvoice, validXRechnungInvoice } from '../../fixtures/e-invoice.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';
import { rejection } from '../../helpers/rejection.js';

let m: MemoryServices;
afterEach(async () => {
  await m?.close();
});

const render = (
  eInvoice: RequestedEInvoice,
  variables = '{"number": "INV-2026-0042"}',
  mode: 'sync' | 'async' = 'sync',
): RenderCommand => ({
  source: { kind: 'inline', html: '<h1>Invoice {{ number }}</h1>', headerHtml: null, footerHtml: null },
  variables: readTemplateDataText(variables),
  options: { e_invoice: eInvoice },
  idempotency: null,
  mode,
  webhookId: null,
});

/** Nothing charged, no job, nothing stored, nothing queued. */
const nothingDone = async (accountId: string) => {
  expect(await m.ledger(accountId)).toMatchObject({
    open: 0,
    completed: 0,
    failed: 0,
    rendersUsed: 0,
    inFlight: 0,
  });
  expect(m.storage.keys()).toEqual([]);
  expect(m.renderQueue.messages()).toEqual([]);
  expect(m.renderOrders.size()).toBe(0);
};

describe('a render with e_invoice', () => {
  it('records the checked e-invoice on the job it renders', async () => {
    m = memoryServices();
    const ada = caller();
    const { job } = await m.services
      .get(pdfJobs)
      .create(ada, render({ standard: 'factur-x', profile: 'en16931', invoice: validInvoice() }));
    expect(job.job.status).toBe('completed');
    expect((await m.jobs.get(ada.accountId, job.job.id))?.e_invoice).toEqual({
      standard: 'factur-x',
      profile: 'en16931',
      valid: true,
      // The memory checker runs the XSD, not the schematron's rules.
      rules_checked: 0,
    });
  });

  it('records an XRechnung (xrechnung-cii) on the job as its standard', async () => {
    m = memoryServices();
    const ada = caller();
    const { job } = await m.services
      .get(pdfJobs)
      .create(
        ada,
        render({ standard: 'xrechnung-cii', profile: 'en16931', invoice: validXRechnungInvoice() }),
      );
    expect(job.job.status).toBe('completed');
    expect((await m.jobs.get(ada.accountId, job.job.id))?.e_invoice).toEqual({
      standard: 'xrechnung-cii',
      profile: 'en16931',
      valid: true,
      rules_checked: 0,
    });
  });

  it('refuses an invoice document that is not one, naming its field, with nothing charged', async () => {
    m = memoryServices();
    const ada = caller();
    const e = await rejection(
      m.services
        .get(pdfJobs)
        .create(
          ada,
          render({ standard: 'factur-x', profile: 'en16931', invoice: { ...validInvoice(), lines: 'pens' } }),
        ),
    );
    expect(e.code).toBe('INVALID_E_INVOICE');
    expect(e.details?.[0]?.field).toBe('e_invoice.invoice.lines');
    expect(e.jobId).toBeUndefined();
    await nothingDone(ada.accountId);
  });

  it('refuses XML against the profile’s XSD, naming e_invoice.xml, the rule and the line, before an async render is accepted', async () => {
    m = memoryServices();
    const ada = caller();
    const xml = createXml().replace('<ram:TypeCode>380</ram:TypeCode>', '<ram:KindCode>380</ram:KindCode>');
    const e = await rejection(
      m.services
        .get(asyncRenders)
        .create(ada, render({ standard: 'zugferd', profile: 'en16931', xml }, undefined, 'async')),
    );
    expect(e.code).toBe('INVALID_E_INVOICE');
    expect(e.message).toMatch(/^The e-invoice breaks 1 rule of zugferd en16931: XSD$/);
    expect(e.details?.[0]).toMatchObject({
      field: 'e_invoice.xml',
      rule: 'XSD',
      location: expect.stringMatching(/^line \d+$/),
    });
    await nothingDone(ada.accountId);
  });

  it('reads the invoice from the variables when told to, naming `variables` when they are not one', async () => {
    m = memoryServices();
    const ada = caller();
    const fromVariables = { standard: 'factur-x', profile: 'minimum', invoice_from_variables: true } as const;
    const ok = await m.services
      .get(pdfJobs)
      .create(ada, render(fromVariables, JSON.stringify(validInvoice())));
    expect(ok.job.job.status).toBe('completed');
    const e = await rejection(m.services.get(pdfJobs).create(ada, render(fromVariables, '{"number": 7}')));
    expect(e.code).toBe('INVALID_E_INVOICE');
    expect(e.details?.[0]?.field).toMatch(/^variables\./);
    expect(await m.ledger(ada.accountId)).toMatchObject({ completed: 1, failed: 0, rendersUsed: 1 });
  });
});

describe('a batch with e-invoices', () => {
  const batch = (
    items: { variables: string; eInvoice?: RequestedEInvoice }[],
    eInvoice?: RequestedEInvoice,
  ) => ({
    source: {
      kind: 'inline' as const,
      html: '<h1>Invoice {{ number }}</h1>',
      headerHtml: null,
      footerHtml: null,
    },
    options: eInvoice ? { e_invoice: eInvoice } : {},
    items: items.map((i) => ({
      variables: parseTemplateData(i.variables),
      ...(i.eInvoice ? { eInvoice: i.eInvoice } : {}),
    })),
    webhookId: null,
  });
  const fromVariables = { standard: 'factur-x', profile: 'en16931', invoice_from_variables: true } as const;

  it('records each item’s checked e-invoice on its job and puts its XML in the item’s order', async () => {
    m = memoryServices();
    const ada = caller();
    const view = await m.services
      .get(batches)
      .create(
        ada,
        batch(
          [
            { variables: JSON.stringify(validInvoice()) },
            { variables: JSON.stringify({ ...validInvoice(), number: 'INV-2026-0043' }) },
          ],
          fromVariables,
        ),
      );
    const jobs = await m.services.get(batches).listJobs(ada, view.batch.id, { offset: 0, limit: 10 });
    expect(jobs.map((j) => j.job.e_invoice)).toEqual([
      { standard: 'factur-x', profile: 'en16931', valid: true, rules_checked: 0 },
      { standard: 'factur-x', profile: 'en16931', valid: true, rules_checked: 0 },
    ]);
  });

  it('refuses the whole batch when one item’s XML fails, naming the item, with nothing charged', async () => {
    m = memoryServices();
    const ada = caller();
    const xml = createXml().replace('<ram:TypeCode>380</ram:TypeCode>', '<ram:KindCode>380</ram:KindCode>');
    const e = await rejection(
      m.services
        .get(batches)
        .create(
          ada,
          batch([
            { variables: '{"number": 1}' },
            { variables: '{"number": 2}', eInvoice: { standard: 'factur-x', profile: 'en16931', xml } },
          ]),
        ),
    );
    expect(e.code).toBe('INVALID_E_INVOICE');
    expect(e.message).toMatch(/^items\[1\]: The e-invoice breaks 1 rule/);
    expect(e.details?.[0]).toMatchObject({ field: 'items[1].e_invoice.xml', rule: 'XSD' });
    await nothingDone(ada.accountId);
  });

  it(`refuses more than ${MAX_E_INVOICE_BATCH_ITEMS} items with an e-invoice, naming items`, async () => {
    m = memoryServices();
    const ada = caller();
    const items = Array.from({ length: MAX_E_INVOICE_BATCH_ITEMS + 1 }, () => ({
      variables: JSON.stringify(validInvoice()),
    }));
    const e = await rejection(m.services.get(batches).create(ada, batch(items, fromVariables)));
    expect(e.code).toBe('VALIDATION_ERROR');
    expect(e.details?.[0]?.field).toBe('items');
    await nothingDone(ada.accountId);
  });
});

/** A valid invoice's XML, as the real builder writes it. */
const createXml = (): string => {
  const checker = m.services.parts.eInvoices;
  if (!checker) throw new Error('memoryServices hands in no e-invoice checker');
  return checker.build(validInvoice(), 'en16931', 'e_invoice.invoice');
};
