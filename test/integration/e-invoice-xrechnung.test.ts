/**
 * `e_invoice.standard: "xrechnung-cii"` (heavy tier: KoSIT's XRechnung schematron is loaded into
 * SaxonJS in this process and in the stack's, seconds on 2 busy cores). Through the validator in
 * this process: a valid XRechnung invoice passes the EN 16931 XSD and schematron and XRechnung's
 * CIUS rules, and each invalid variant fails the BR-DE (or merged Peppol) rule expected. Over HTTP
 * against the shared stack: the valid one is embedded as xrechnung.xml in a PDF/A-3b whose XMP
 * says XRECHNUNG (pdfdetach, pdfinfo -meta, qpdf), and invalid ones answer 422 INVALID_E_INVOICE
 * naming the rule, nothing charged.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCii, XRECHNUNG_GUIDELINE } from '../../functions/core/e-invoice/build.js';
import { checkCii } from '../../functions/core/e-invoice/check.js';
import {
  INVALID_XRECHNUNG_INVOICES,
  validInvoice,
  validXRechnungInvoice,
  xRechnungInvoiceWith,
} from '../fixtures/e-invoice.js';
import { useLocalStack } from '../helpers/local-stack.js';
import { pdfdetachList, pdfdetachSave, pdfinfoMeta, qpdfCheck } from '../helpers/pdf-readers.js';
import { newAccount, type TestAccount } from '../helpers/template-fixtures.js';

const local = useLocalStack();
let account: TestAccount;
beforeAll(async () => {
  account = await newAccount(local, 'xrechnung');
});

const xrechnungXml = (invoice: Record<string, unknown>): string =>
  buildCii(invoice, 'en16931', 'e_invoice.invoice', 'xrechnung-cii');

describe('XRechnung through the checker (cross-check)', () => {
  it('finds the XRechnung invoice valid against the XSD, EN 16931 and XRechnung’s rules', async () => {
    const en16931 = await checkCii(buildCii(validInvoice(), 'en16931'), 'en16931');
    const checked = await checkCii(xrechnungXml(validXRechnungInvoice()), 'en16931', 'xrechnung-cii');
    expect(checked).toEqual({ valid: true, rulesChecked: expect.any(Number) });
    // XRechnung's assertions (BR-DE-*, the Peppol rules it merges) on top of EN 16931's.
    expect(checked.rulesChecked).toBeGreaterThan(en16931.rulesChecked + 40);
  });

  it('fails an EN 16931 invoice that is valid Factur-X but no XRechnung (no Leitweg-ID, no contact)', async () => {
    const xml = buildCii(validInvoice(), 'en16931', 'e_invoice.invoice', 'xrechnung-cii');
    const checked = await checkCii(xml, 'en16931', 'xrechnung-cii');
    expect(checked.valid === false && checked.failures.map((f) => f.rule)).toEqual(
      expect.arrayContaining(['BR-DE-15', 'BR-DE-2']),
    );
  });

  it('fails Factur-X’s guideline identifier under XRechnung: BR-DE-21', async () => {
    const xml = xrechnungXml(validXRechnungInvoice()).replace(XRECHNUNG_GUIDELINE, 'urn:cen.eu:en16931:2017');
    expect(xml).not.toContain(XRECHNUNG_GUIDELINE);
    const checked = await checkCii(xml, 'en16931', 'xrechnung-cii');
    expect(checked.valid === false && checked.failures.map((f) => f.rule)).toContain('BR-DE-21');
  });

  it.each(INVALID_XRECHNUNG_INVOICES)('fails %s, naming the rule', async (_, change, rule) => {
    const checked = await checkCii(xrechnungXml(xRechnungInvoiceWith(change)), 'en16931', 'xrechnung-cii');
    expect(checked.valid).toBe(false);
    expect(checked.valid === false && checked.failures).toContainEqual({
      rule,
      message: expect.any(String),
      location: expect.stringMatching(/^\/\*:CrossIndustryInvoice\[1\]/),
    });
  });
});

describe('e_invoice xrechnung-cii over HTTP', () => {
  const render = (eInvoice: Record<string, unknown>) =>
    local.api('/v1/pdf', {
      method: 'POST',
      token: account.session,
      body: { html: '<h1>Rechnung</h1><p>Stifte, Papier</p>', e_invoice: eInvoice },
    });
  const usage = async () => (await local.api('/v1/usage', { token: account.session })).json.renders_used;

  it('embeds a valid XRechnung as xrechnung.xml in a PDF/A-3b whose XMP says XRECHNUNG', async () => {
    const res = await render({
      standard: 'xrechnung-cii',
      profile: 'en16931',
      invoice: validXRechnungInvoice(),
    });
    expect(res.status, res.text).toBe(201);
    expect(res.json.e_invoice).toEqual({
      standard: 'xrechnung-cii',
      profile: 'en16931',
      valid: true,
      rules_checked: expect.any(Number),
    });
    const pdf = new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer());
    expect(await pdfdetachList(pdf)).toEqual(['xrechnung.xml']);
    expect(await pdfdetachSave(pdf, 1)).toBe(xrechnungXml(validXRechnungInvoice()));
    const xmp = await pdfinfoMeta(pdf);
    expect(xmp).toContain('<fx:ConformanceLevel>XRECHNUNG</fx:ConformanceLevel>');
    expect(xmp).toContain('<fx:DocumentFileName>xrechnung.xml</fx:DocumentFileName>');
    expect(xmp).toMatch(/<pdfaid:part>3<\/pdfaid:part>/);
    const check = await qpdfCheck(pdf);
    expect(check.code, check.output).toBe(0);
  });

  it('takes a caller’s XRechnung XML and embeds it byte for byte', async () => {
    const xml = xrechnungXml({ ...validXRechnungInvoice(), number: 'RE-2026-0816' });
    const res = await render({ standard: 'xrechnung-cii', profile: 'en16931', xml });
    expect(res.status, res.text).toBe(201);
    const pdf = new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer());
    expect(await pdfdetachSave(pdf, 1)).toBe(xml);
  });

  it('refuses an invoice without a buyer reference: 422 INVALID_E_INVOICE naming BR-DE-15, nothing charged', async () => {
    const before = await usage();
    const [, change] = INVALID_XRECHNUNG_INVOICES[0] ?? [];
    if (!change) throw new Error('no fixture');
    const res = await render({
      standard: 'xrechnung-cii',
      profile: 'en16931',
      invoice: xRechnungInvoiceWith(change),
    });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('INVALID_E_INVOICE');
    expect(res.json.error.message).toContain('xrechnung-cii en16931');
    expect(res.json.error.details).toContainEqual(
      expect.objectContaining({ field: 'e_invoice.invoice', rule: 'BR-DE-15' }),
    );
    expect(await usage()).toBe(before);
  });
});
