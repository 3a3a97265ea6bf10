/**
 * The EXTENDED profile and the real checker's business rules (heavy tier: EXTENDED's schematron
 * is the largest, its first check some 10 s of SaxonJS and its artefacts on 2 busy cores, each
 * further one 1-2 s). Against the shared stack over HTTP: a valid EXTENDED invoice is embedded
 * as factur-x.xml (pdfdetach, pdfinfo -meta), invalid ones answer 422 naming the rule with
 * nothing charged; and, through the same validator in this process, as a cross-check, the valid
 * one passes and each invalid variant fails the rule expected.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCii } from '../../functions/core/e-invoice/build.js';
import { checkCii } from '../../functions/core/e-invoice/check.js';
import { invoiceWith, validInvoice } from '../fixtures/e-invoice.js';
import { useLocalStack } from '../helpers/local-stack.js';
import { pdfdetachList, pdfdetachSave, pdfinfoMeta, qpdfCheck } from '../helpers/pdf-readers.js';
import { newAccount, type TestAccount } from '../helpers/template-fixtures.js';

const local = useLocalStack();
let account: TestAccount;
beforeAll(async () => {
  account = await newAccount(local, 'einvext');
});

type Change = Parameters<typeof invoiceWith>[0];

/** [what is wrong, the rule EXTENDED's schematron names, how]. */
const INVALID_EXTENDED: readonly (readonly [string, string, Change])[] = [
  ['totals that do not add up', 'BR-FXEXT-CO-15', (i) => Object.assign(i, { totals: { grand_total: 130 } })],
  [
    'line totals that do not add up',
    'BR-FXEXT-CO-10',
    (i) => Object.assign(i, { totals: { line_total: 90 } }),
  ],
  [
    'a missing seller VAT identifier',
    'BR-S-02',
    (i) => {
      delete (i.seller as { vat_id?: string }).vat_id;
    },
  ],
  [
    'a missing invoice number',
    'BR-02',
    (i) => {
      delete (i as { number?: string }).number;
    },
  ],
  // EXTENDED's code-list assertions name no rule: SCHEMATRON, with the element in the message.
  ['a wrong currency code', 'SCHEMATRON', (i) => Object.assign(i, { currency: 'EURO' })],
];

describe('the EXTENDED profile through the checker (cross-check)', () => {
  it('finds the invoice built for EXTENDED valid against its XSD and every assertion', async () => {
    const checked = await checkCii(buildCii(validInvoice(), 'extended'), 'extended');
    expect(checked).toEqual({ valid: true, rulesChecked: expect.any(Number) });
    expect(checked.rulesChecked).toBeGreaterThan(900);
  });

  it.each(INVALID_EXTENDED)('fails %s, naming %s', async (_, rule, change) => {
    const checked = await checkCii(buildCii(invoiceWith(change), 'extended'), 'extended');
    expect(checked.valid).toBe(false);
    expect(checked.valid === false && checked.failures.map((f) => f.rule)).toContain(rule);
  });

  it('names the element of an unnamed code-list assertion in its message', async () => {
    const checked = await checkCii(
      buildCii(
        invoiceWith((i) => Object.assign(i, { currency: 'EURO' })),
        'extended',
      ),
      'extended',
    );
    expect(checked.valid === false && checked.failures).toContainEqual({
      rule: 'SCHEMATRON',
      message: "Value of 'ram:InvoiceCurrencyCode' is not allowed.",
      location: expect.stringContaining('InvoiceCurrencyCode'),
    });
  });
});

describe('e_invoice with the EXTENDED profile over HTTP', () => {
  const render = (invoice: Record<string, unknown>) =>
    local.api('/v1/pdf', {
      method: 'POST',
      token: account.session,
      body: {
        html: '<h1>Invoice</h1><p>Pens, paper</p>',
        e_invoice: { standard: 'factur-x', profile: 'extended', invoice },
      },
    });

  it('embeds a valid EXTENDED invoice as factur-x.xml in a PDF/A-3b whose XMP says EXTENDED', async () => {
    const res = await render(validInvoice());
    expect(res.status, res.text).toBe(201);
    expect(res.json.e_invoice).toEqual({
      standard: 'factur-x',
      profile: 'extended',
      valid: true,
      rules_checked: expect.any(Number),
    });
    const pdf = new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer());
    expect(await pdfdetachList(pdf)).toEqual(['factur-x.xml']);
    const xml = await pdfdetachSave(pdf, 1);
    expect(xml).toContain('urn:cen.eu:en16931:2017#conformant#urn:factur-x.eu:1p0:extended');
    expect(xml).toBe(buildCii(validInvoice(), 'extended'));
    const xmp = await pdfinfoMeta(pdf);
    expect(xmp).toContain('<fx:ConformanceLevel>EXTENDED</fx:ConformanceLevel>');
    expect(xmp).toMatch(/<pdfaid:part>3<\/pdfaid:part>/);
    const check = await qpdfCheck(pdf);
    expect(check.code, check.output).toBe(0);
  });

  it.each(INVALID_EXTENDED)(
    'refuses %s: 422 INVALID_E_INVOICE naming %s, nothing charged',
    async (_, rule, change) => {
      const usage = async () => (await local.api('/v1/usage', { token: account.session })).json.renders_used;
      const before = await usage();
      const res = await render(invoiceWith(change));
      expect(res.status, res.text).toBe(422);
      expect(res.json.error.code).toBe('INVALID_E_INVOICE');
      expect(res.json.error.details.map((d: { rule: string }) => d.rule)).toContain(rule);
      expect(await usage()).toBe(before);
    },
  );
});
