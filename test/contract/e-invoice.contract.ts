/**
 * The EInvoiceChecker port's contract (domain/renders/e-invoice.ts): an invoice document built
 * into CII XML that the checker finds valid for its profile; a document that is not one refused
 * at build with 422 INVALID_E_INVOICE naming the field; XML with a DOCTYPE, not well-formed, or
 * against the profile's XSD refused naming where. The same cases for the memory checker
 * (functions/adapters/memory/e-invoice.ts: build and form only) and the real one
 * (functions/core/e-invoice/check.ts, the XSD then the schematron); the business rules'
 * cases for the real one alone (`businessRules`).
 */
import { describe, expect, it } from 'vitest';
import { XRECHNUNG_GUIDELINE } from '../../functions/core/e-invoice/build.js';
import { ServiceError } from '../../functions/domain/common/errors.js';
import type { EInvoiceChecker } from '../../functions/domain/renders/e-invoice.js';
import { INVALID_INVOICES, invoiceWith, validInvoice, validXRechnungInvoice } from '../fixtures/e-invoice.js';

export interface EInvoiceCheckerBackend {
  readonly name: string;
  readonly checker: EInvoiceChecker;
  /** It runs the schematron's business rules (the real checker). */
  readonly businessRules: boolean;
}

export const eInvoiceCheckerContract = (backend: EInvoiceCheckerBackend): void => {
  const { checker } = backend;
  describe(`EInvoiceChecker (${backend.name})`, () => {
    it.each(['en16931', 'minimum'] as const)(
      'builds a valid invoice into XML it finds valid (%s)',
      async (profile) => {
        const xml = checker.build(validInvoice(), profile, 'e_invoice.invoice');
        expect(xml).toContain('<rsm:CrossIndustryInvoice');
        expect(xml).toContain('INV-2026-0042');
        const checked = await checker.check(xml, profile);
        expect(checked).toMatchObject({ valid: true });
        if (backend.businessRules) expect(checked.rulesChecked).toBeGreaterThan(100);
      },
    );

    it('builds an XRechnung (xrechnung-cii) with its guideline, process and seller contact, and finds it valid', async () => {
      const xml = checker.build(validXRechnungInvoice(), 'en16931', 'e_invoice.invoice', 'xrechnung-cii');
      expect(xml).toContain(`<ram:ID>${XRECHNUNG_GUIDELINE}</ram:ID>`);
      expect(xml).toContain('<ram:BuyerReference>991-01234-44</ram:BuyerReference>');
      expect(xml).toMatch(/<ram:DefinedTradeContact>\s*<ram:PersonName>Ada Lovelace<\/ram:PersonName>/);
      const checked = await checker.check(xml, 'en16931', 'xrechnung-cii');
      expect(checked).toMatchObject({ valid: true });
      if (backend.businessRules) {
        const en16931 = await checker.check(
          checker.build(validInvoice(), 'en16931', 'e_invoice.invoice'),
          'en16931',
        );
        expect(checked.rulesChecked).toBeGreaterThan(en16931.rulesChecked);
      }
    });

    it('refuses to build what is not an invoice document, naming the field under where it was given', () => {
      let thrown: unknown;
      try {
        checker.build({ ...validInvoice(), lines: 'two pens' }, 'en16931', 'items[3].variables');
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(ServiceError);
      expect(thrown).toMatchObject({ code: 'INVALID_E_INVOICE' });
      expect((thrown as ServiceError).details?.[0]?.field).toBe('items[3].variables.lines');
    });

    it('refuses XML that declares a DOCTYPE, without reading it', async () => {
      const xml = checker
        .build(validInvoice(), 'en16931', 'e_invoice.invoice')
        .replace(
          '<rsm:CrossIndustryInvoice',
          '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><rsm:CrossIndustryInvoice',
        );
      const checked = await checker.check(xml, 'en16931');
      expect(checked).toMatchObject({ valid: false, failures: [{ rule: 'XML' }] });
      expect(JSON.stringify(checked)).not.toContain('root:');
    });

    it('refuses XML that is not well-formed, naming the line', async () => {
      const xml = `${checker.build(validInvoice(), 'en16931', 'e_invoice.invoice')}\n<unclosed>`;
      const checked = await checker.check(xml, 'en16931');
      expect(checked.valid).toBe(false);
      expect(checked.valid === false && checked.failures[0]).toMatchObject({
        rule: 'XML',
        location: expect.stringMatching(/^line \d+$/),
      });
    });

    it('refuses XML against the profile’s XSD, naming the element and the line', async () => {
      const xml = checker
        .build(validInvoice(), 'en16931', 'e_invoice.invoice')
        .replace('<ram:TypeCode>380</ram:TypeCode>', '<ram:KindCode>380</ram:KindCode>');
      expect(xml).toContain('KindCode');
      const checked = await checker.check(xml, 'en16931');
      expect(checked.valid).toBe(false);
      expect(checked.valid === false && checked.failures[0]).toMatchObject({
        rule: 'XSD',
        message: expect.stringContaining('KindCode'),
        location: expect.stringMatching(/^line \d+$/),
      });
    });

    if (backend.businessRules) {
      it.each(INVALID_INVOICES.slice(0, 3))('refuses %s, naming the rule', async (_what, change, rule) => {
        const checked = await checker.check(
          checker.build(invoiceWith(change), 'en16931', 'e_invoice.invoice'),
          'en16931',
        );
        expect(checked.valid).toBe(false);
        expect(checked.valid === false && checked.failures.map((f) => f.rule)).toContain(rule);
      });
    }
  });
};
