/**
 * `e_invoice` over HTTP against the real local stack: an invoice given as JSON or as CII XML is
 * validated (the profile's official XSD and schematron) before the render is accepted; a valid one
 * is embedded as factur-x.xml in a PDF/A-3b, read back with real readers (pdfdetach, pdfinfo -meta,
 * pdffonts, qpdf); an invalid one answers 422 INVALID_E_INVOICE naming the rule, with nothing
 * charged. The embedded XML is the one built from the invoice, byte for byte; the validator run in
 * a test's own process, as a cross-check, is in the heavy tier (contract/e-invoice.saxon and
 * e-invoice-extended: SaxonJS and a schematron take seconds to load). On batches: each item's
 * invoice validated at acceptance (one failing refuses the batch, naming the item), each PDF an
 * e-invoice (pdfdetach).
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCii } from '../../functions/core/e-invoice/build.js';
import { INVALID_INVOICES, invoiceWith, validInvoice } from '../fixtures/e-invoice.js';
import { waitForBatch, waitForJob } from '../helpers/async-jobs.js';
import { type ApiResponse, useLocalStack } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';
import {
  pdfdetachList,
  pdfdetachSave,
  pdffonts,
  pdfinfoMeta,
  qpdfCheck,
  qpdfDict,
  qpdfJson,
} from '../helpers/pdf-readers.js';
import { newAccount, type TestAccount } from '../helpers/template-fixtures.js';

const local = useLocalStack();

let account: TestAccount;
beforeAll(async () => {
  account = await newAccount(local, 'einv');
});

const render = (body: Record<string, unknown>) =>
  local.api('/v1/pdf', { method: 'POST', token: account.session, body });

const download = async (res: ApiResponse): Promise<Uint8Array> => {
  expect(res.status, res.text).toBe(201);
  return new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer());
};

const HTML =
  '<h1>Invoice {{ number }}</h1><p>Pens, paper: 113.50 EUR + VAT</p><a href="https://example.com">terms</a>';

/** The associated files (/AF) of the document catalog, as qpdf reads them. */
const associatedFiles = async (pdf: Uint8Array) => {
  const json = await qpdfJson(pdf);
  const catalog = qpdfDict(json, json.trailer['/Root']);
  return ((catalog['/AF'] as string[] | undefined) ?? []).map((ref) => qpdfDict(json, ref));
};

describe('e_invoice from an invoice document', () => {
  let res: ApiResponse;
  let pdf: Uint8Array;
  beforeAll(async () => {
    res = await render({
      html: HTML,
      variables: { number: 'INV-2026-0042' },
      e_invoice: { standard: 'factur-x', profile: 'en16931', invoice: validInvoice() },
    });
    pdf = await download(res);
  });

  it('records the e-invoice on the job: standard, profile, valid, the rules checked', async () => {
    expect(res.json.e_invoice).toEqual({
      standard: 'factur-x',
      profile: 'en16931',
      valid: true,
      rules_checked: expect.any(Number),
    });
    expect(res.json.e_invoice.rules_checked).toBeGreaterThan(400);
    const again = await local.api(`/v1/pdf/${res.json.id}`, { token: account.session });
    expect(again.json.e_invoice).toEqual(res.json.e_invoice);
  });

  it('embeds factur-x.xml, an associated file with AFRelationship Alternative, that passes the XSD and schematron', async () => {
    expect(await pdfdetachList(pdf)).toEqual(['factur-x.xml']);
    const xml = await pdfdetachSave(pdf, 1);
    expect(xml).toContain('<ram:ID>INV-2026-0042</ram:ID>');
    expect(xml).toContain('<ram:GrandTotalAmount>136.20</ram:GrandTotalAmount>');
    // The XML the stack validated (rules_checked above), byte for byte; the same XML through the
    // validator in this process is the contract's case (contract/e-invoice.saxon, heavy tier).
    expect(xml).toBe(buildCii(validInvoice(), 'en16931'));
    const [file] = await associatedFiles(pdf);
    expect(file?.['/AFRelationship']).toBe('/Alternative');
    expect(file?.['/F']).toBe('u:factur-x.xml');
  });

  it('is a PDF/A-3b with the Factur-X XMP extension schema, fonts embedded, and no qpdf errors', async () => {
    const xmp = await pdfinfoMeta(pdf);
    expect(xmp).toMatch(/<pdfaid:part>3<\/pdfaid:part>/);
    expect(xmp).toMatch(/<pdfaid:conformance>B<\/pdfaid:conformance>/);
    expect(xmp).toContain(
      '<pdfaSchema:namespaceURI>urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#</pdfaSchema:namespaceURI>',
    );
    expect(xmp).toContain('<fx:DocumentFileName>factur-x.xml</fx:DocumentFileName>');
    expect(xmp).toContain('<fx:DocumentType>INVOICE</fx:DocumentType>');
    expect(xmp).toContain('<fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>');
    expect(xmp).toContain('<fx:Version>1.0</fx:Version>');
    expect((await pdffonts(pdf)).filter((f) => !f.embedded)).toEqual([]);
    const check = await qpdfCheck(pdf);
    expect(check.code, check.output).toBe(0);
    const json = await qpdfJson(pdf);
    expect(qpdfDict(json, json.trailer['/Root'])['/OutputIntents']).toHaveLength(1);
  });
});

describe('e_invoice in an async render', () => {
  it('is validated before the 202 and embedded by the worker', async () => {
    const refused = await render({
      html: HTML,
      variables: { number: 1 },
      async: true,
      e_invoice: {
        standard: 'factur-x',
        profile: 'en16931',
        invoice: invoiceWith((i) => Object.assign(i, { currency: 'EURO' })),
      },
    });
    expect(refused.status, refused.text).toBe(422);
    const res = await render({
      html: HTML,
      variables: { number: 1 },
      async: true,
      e_invoice: { standard: 'factur-x', profile: 'en16931', invoice: validInvoice() },
    });
    expect(res.status, res.text).toBe(202);
    const job = await waitForJob(local.api, account.session, res.json.id);
    expect(job).toMatchObject({ status: 'completed', e_invoice: { profile: 'en16931', valid: true } });
    const pdf = new Uint8Array(await (await fetch(job.download_url)).arrayBuffer());
    expect(await pdfdetachList(pdf)).toEqual(['factur-x.xml']);
  });
});

describe('e_invoice from XML', () => {
  it('embeds the XML given, byte for byte, once it passes (basic profile, with pdf_a "3b")', async () => {
    const xml = buildCii(validInvoice(), 'basic');
    const res = await render({
      html: HTML,
      variables: { number: 1 },
      pdf_a: '3b',
      e_invoice: { standard: 'zugferd', profile: 'basic', xml },
    });
    const pdf = await download(res);
    expect(res.json.e_invoice).toMatchObject({ standard: 'zugferd', profile: 'basic', valid: true });
    expect(await pdfdetachList(pdf)).toEqual(['factur-x.xml']);
    expect(await pdfdetachSave(pdf, 1)).toBe(xml);
    expect(await pdfinfoMeta(pdf)).toContain('<fx:ConformanceLevel>BASIC</fx:ConformanceLevel>');
  });

  it('marks a minimum profile’s XML as Data, not Alternative', async () => {
    const xml = buildCii(validInvoice(), 'minimum');
    const pdf = await download(
      await render({
        html: HTML,
        variables: { number: 1 },
        e_invoice: { standard: 'factur-x', profile: 'minimum', xml },
      }),
    );
    const [file] = await associatedFiles(pdf);
    expect(file?.['/AFRelationship']).toBe('/Data');
    expect(await pdfinfoMeta(pdf)).toContain('<fx:ConformanceLevel>MINIMUM</fx:ConformanceLevel>');
  });

  it.each([
    ['not well-formed XML', '<rsm:CrossIndustryInvoice>', 'XML'],
    ['a DOCTYPE', '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>', 'XML'],
    ['another document', '<invoice xmlns="urn:example"/>', 'XSD'],
  ])('refuses %s: 422 INVALID_E_INVOICE naming the rule', async (_, xml, rule) => {
    const res = await render({
      html: HTML,
      variables: { number: 1 },
      e_invoice: { standard: 'factur-x', profile: 'en16931', xml },
    });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('INVALID_E_INVOICE');
    expect(res.json.error.details[0]).toMatchObject({ field: 'e_invoice.xml', rule });
  });
});

describe('invalid invoices', () => {
  it.each(INVALID_INVOICES)(
    'refuses %s: 422 INVALID_E_INVOICE naming its rule, nothing charged',
    async (_, change, rule) => {
      const usage = async () => (await local.api('/v1/usage', { token: account.session })).json.renders_used;
      const before = await usage();
      const res = await render({
        html: HTML,
        variables: { number: 1 },
        e_invoice: { standard: 'factur-x', profile: 'en16931', invoice: invoiceWith(change) },
      });
      expect(res.status, res.text).toBe(422);
      expect(res.json.error.code).toBe('INVALID_E_INVOICE');
      const failed = res.json.error.details as {
        field: string;
        rule: string;
        issue: string;
        location: string;
      }[];
      expect(
        failed.map((f) => f.rule),
        `expected ${rule}`,
      ).toContain(rule);
      for (const f of failed) {
        expect(f.field).toBe('e_invoice.invoice');
        expect(f.issue.length).toBeGreaterThan(0);
        expect(f.location).toMatch(/^\/\*:CrossIndustryInvoice/);
      }
      expect(res.json.error.job_id).toBeUndefined();
      expect(await usage()).toBe(before);
    },
  );
});

describe('e_invoice options', () => {
  it('refuses pdf_a "2b" with an e-invoice: 422 INVALID_PDF_OPTIONS naming both', async () => {
    const res = await render({
      html: HTML,
      variables: { number: 1 },
      pdf_a: '2b',
      e_invoice: { standard: 'factur-x', profile: 'en16931', invoice: validInvoice() },
    });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('INVALID_PDF_OPTIONS');
    expect(res.json.error.details.map((d: { field: string }) => d.field)).toEqual(['pdf_a', 'e_invoice']);
  });

  it.each([
    ['an unknown standard', { standard: 'ubl', profile: 'en16931', xml: '<x/>' }, 'e_invoice.standard'],
    ['an unknown profile', { standard: 'factur-x', profile: 'comfort', xml: '<x/>' }, 'e_invoice.profile'],
    [
      'xrechnung-cii with a profile other than en16931',
      { standard: 'xrechnung-cii', profile: 'basic', xml: '<x/>' },
      'e_invoice.profile',
    ],
    ['neither xml nor invoice', { standard: 'factur-x', profile: 'en16931' }, 'e_invoice'],
    [
      'an invoice of the wrong shape',
      { standard: 'factur-x', profile: 'en16931', invoice: { lines: 'pens' } },
      'e_invoice.invoice.lines',
    ],
  ])('refuses %s: 422 INVALID_E_INVOICE naming the field', async (_, eInvoice, field) => {
    const res = await render({ html: HTML, variables: { number: 1 }, e_invoice: eInvoice });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('INVALID_E_INVOICE');
    expect(res.json.error.details).toEqual([expect.objectContaining({ field })]);
  });
});

describe('e_invoice on batches', () => {
  const batch = (body: Record<string, unknown>) =>
    local.api('/v1/batches', { method: 'POST', token: account.session, body });
  const usage = async () => (await local.api('/v1/usage', { token: account.session })).json.renders_used;
  const second = () => ({ ...validInvoice(), number: 'INV-2026-0043' });

  it('embeds each item’s invoice, built from its variables (the batch’s invoice_from_variables)', async () => {
    const res = await batch({
      html: HTML,
      items: [{ variables: validInvoice() }, { variables: second() }],
      e_invoice: { standard: 'factur-x', profile: 'en16931', invoice_from_variables: true },
    });
    expect(res.status, res.text).toBe(202);
    await waitForBatch(local.api, account.session, res.json.id);
    const jobs = await local.api(`/v1/batches/${res.json.id}/jobs`, { token: account.session });
    expect(jobs.json.map((j: { status: string }) => j.status)).toEqual(['completed', 'completed']);
    const numbers: string[] = [];
    for (const job of jobs.json) {
      expect(job.e_invoice).toMatchObject({ standard: 'factur-x', profile: 'en16931', valid: true });
      const pdf = new Uint8Array(await (await fetch(job.download_url)).arrayBuffer());
      expect(await pdfdetachList(pdf)).toEqual(['factur-x.xml']);
      expect(await pdfinfoMeta(pdf)).toContain('<pdfaid:part>3</pdfaid:part>');
      const xml = await pdfdetachSave(pdf, 1);
      numbers.push(/<rsm:ExchangedDocument>\s*<ram:ID>([^<]+)</.exec(xml)?.[1] ?? '');
    }
    expect(numbers).toEqual(['INV-2026-0042', 'INV-2026-0043']);
  });

  it('takes an item’s own e_invoice (an invoice document), and items without one stay plain PDFs', async () => {
    const res = await batch({
      html: HTML,
      items: [
        { variables: { number: 1 } },
        {
          variables: { number: 2 },
          e_invoice: { standard: 'zugferd', profile: 'basic', invoice: second() },
        },
      ],
    });
    expect(res.status, res.text).toBe(202);
    await waitForBatch(local.api, account.session, res.json.id);
    const jobs = (await local.api(`/v1/batches/${res.json.id}/jobs`, { token: account.session })).json;
    expect(jobs[0].e_invoice).toBeUndefined();
    expect(jobs[1].e_invoice).toMatchObject({ standard: 'zugferd', profile: 'basic', valid: true });
    const plain = new Uint8Array(await (await fetch(jobs[0].download_url)).arrayBuffer());
    expect(await pdfdetachList(plain)).toEqual([]);
    const invoice = new Uint8Array(await (await fetch(jobs[1].download_url)).arrayBuffer());
    expect(await pdfdetachList(invoice)).toEqual(['factur-x.xml']);
    expect(await pdfdetachSave(invoice, 1)).toContain('<ram:ID>INV-2026-0043</ram:ID>');
  });

  it('refuses the whole batch when one item’s invoice breaks a rule: 422 naming the item and the rule, nothing charged', async () => {
    const before = await usage();
    const res = await batch({
      html: HTML,
      items: [
        { variables: validInvoice() },
        { variables: validInvoice() },
        { variables: invoiceWith((i) => Object.assign(i, { totals: { grand_total: 130 } })) },
      ],
      e_invoice: { standard: 'factur-x', profile: 'en16931', invoice_from_variables: true },
    });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('INVALID_E_INVOICE');
    expect(res.json.error.message).toMatch(/^items\[2\]: /);
    expect(res.json.error.details).toContainEqual(
      expect.objectContaining({ field: 'items[2].variables', rule: 'BR-CO-15' }),
    );
    expect(await usage()).toBe(before);
    const listed = await local.api('/v1/batches', { token: account.session });
    expect(listed.json.map((b: { total: number }) => b.total)).not.toContain(3);
  });

  it('names the item’s own e_invoice field when its XML fails', async () => {
    const res = await batch({
      html: HTML,
      items: [
        { variables: { number: 1 } },
        { variables: { number: 2 }, e_invoice: { standard: 'factur-x', profile: 'en16931', xml: '<x/>' } },
      ],
    });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.details).toEqual([
      expect.objectContaining({ field: 'items[1].e_invoice.xml', rule: 'XSD' }),
    ]);
  });

  it('refuses a batch-wide xml or invoice (one invoice for every item): 422 naming e_invoice', async () => {
    const res = await batch({
      html: HTML,
      items: [{ variables: { number: 1 } }],
      e_invoice: { standard: 'factur-x', profile: 'en16931', invoice: validInvoice() },
    });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('INVALID_E_INVOICE');
    expect(res.json.error.details).toEqual([
      expect.objectContaining({
        field: 'e_invoice',
        issue: expect.stringContaining('invoice_from_variables'),
      }),
    ]);
  });
});

describe('invoice_from_variables: the variables are the invoice', () => {
  const STARTER = readFileSync(new URL('../../docs/templates/e-invoice.html', import.meta.url), 'utf8');
  let templateId: string;
  beforeAll(async () => {
    const saved = await local.api('/v1/templates', {
      method: 'POST',
      token: account.session,
      body: {
        name: 'E-invoice (starter)',
        html: STARTER,
        pdf_options: {
          e_invoice: { standard: 'factur-x', profile: 'en16931', invoice_from_variables: true },
        },
      },
    });
    expect(saved.status, saved.text).toBe(201);
    templateId = saved.json.id;
  });

  it('prints the starter template and embeds the XML built from the same variables', async () => {
    const res = await render({ template_id: templateId, variables: validInvoice() });
    const pdf = await download(res);
    expect(res.json.e_invoice).toMatchObject({ standard: 'factur-x', profile: 'en16931', valid: true });
    const printed = (await readPdf(pdf)).text;
    expect(printed).toContain('Invoice INV-2026-0042');
    expect(printed).toContain('136.20 EUR');
    const xml = await pdfdetachSave(pdf, 1);
    expect(xml).toContain('<ram:GrandTotalAmount>136.20</ram:GrandTotalAmount>');
    expect(xml).toContain('<ram:Name>Büro Babbage GmbH</ram:Name>');
  });

  it('answers 422 INVALID_E_INVOICE naming the rule and `variables` when the variables break one', async () => {
    const res = await render({
      template_id: templateId,
      variables: invoiceWith((i) => Object.assign(i.lines[0] as object, { net_price: -50 })),
    });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('INVALID_E_INVOICE');
    expect(res.json.error.details).toContainEqual(
      expect.objectContaining({ field: 'variables', rule: 'BR-27' }),
    );
  });

  it('names the variable when the variables are not an invoice document', async () => {
    const res = await render({ template_id: templateId, variables: { ...validInvoice(), lines: 'pens' } });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('INVALID_E_INVOICE');
    expect(res.json.error.details).toEqual([expect.objectContaining({ field: 'variables.lines' })]);
  });

  it('works with inline html too', async () => {
    const res = await render({
      html: HTML,
      variables: validInvoice(),
      e_invoice: { standard: 'factur-x', profile: 'basic-wl', invoice_from_variables: true },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.json.e_invoice).toMatchObject({ profile: 'basic-wl', valid: true });
  });

  it('makes every item of a batch of the template an e-invoice of its own variables', async () => {
    const res = await local.api('/v1/batches', {
      method: 'POST',
      token: account.session,
      body: { template_id: templateId, items: [{ variables: validInvoice() }] },
    });
    expect(res.status, res.text).toBe(202);
    await waitForBatch(local.api, account.session, res.json.id);
    const [job] = (await local.api(`/v1/batches/${res.json.id}/jobs`, { token: account.session })).json;
    expect(job.e_invoice).toMatchObject({ profile: 'en16931', valid: true });
    const pdf = new Uint8Array(await (await fetch(job.download_url)).arrayBuffer());
    expect((await readPdf(pdf)).text).toContain('Invoice INV-2026-0042');
    expect(await pdfdetachList(pdf)).toEqual(['factur-x.xml']);
  });
});
