/**
 * The invoice document `e_invoice.invoice` takes (and a template's variables are, with
 * `invoice_from_variables`), named after EN 16931's business terms (BT-n in each description).
 * The schema checks types only: what EN 16931 requires (a seller's VAT identifier, totals that add
 * up, codes from its lists) is left to the official schematron, so that a broken invoice is
 * answered with the rule it breaks (422 INVALID_E_INVOICE), as a broken XML is.
 */
import { z } from 'zod';

const text = (describe: string) => z.string({ error: 'must be a string' }).max(1000).describe(describe);
const amount = (describe: string) =>
  z.number({ error: 'must be a number' }).finite({ error: 'must be a finite number' }).describe(describe);
const date = (describe: string) =>
  z
    .string({ error: 'must be a date YYYY-MM-DD' })
    .regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'must be a date YYYY-MM-DD' })
    .describe(describe);

const address = z
  .strictObject(
    {
      line1: text('BT-35 / BT-50: address line 1').optional(),
      line2: text('BT-36 / BT-51: address line 2').optional(),
      city: text('BT-37 / BT-52: city').optional(),
      postcode: text('BT-38 / BT-53: post code').optional(),
      country: text('BT-40 / BT-55: country, ISO 3166-1 alpha-2 (FR, DE)').optional(),
    },
    { error: 'must be an object {line1?, line2?, city?, postcode?, country?}' },
  )
  .describe('BG-5 / BG-8: postal address');

const contact = (who: 'seller' | 'buyer') =>
  z
    .strictObject(
      {
        name: text(
          who === 'seller' ? 'BT-41: seller contact point' : 'BT-56: buyer contact point',
        ).optional(),
        phone: text(
          who === 'seller'
            ? 'BT-42: seller contact telephone number'
            : 'BT-57: buyer contact telephone number',
        ).optional(),
        email: text(
          who === 'seller' ? 'BT-43: seller contact email address' : 'BT-58: buyer contact email address',
        ).optional(),
      },
      { error: 'must be an object {name?, phone?, email?}' },
    )
    .describe(
      who === 'seller'
        ? 'BG-6: seller contact (XRechnung requires it, with name, telephone and email: BR-DE-2, -5, -6, -7)'
        : 'BG-9: buyer contact',
    );

const party = (who: 'seller' | 'buyer') =>
  z
    .strictObject(
      {
        name: text(who === 'seller' ? 'BT-27: seller name' : 'BT-44: buyer name').optional(),
        vat_id: text(
          who === 'seller' ? 'BT-31: seller VAT identifier (FR32123456789)' : 'BT-48: buyer VAT identifier',
        ).optional(),
        legal_id: text(
          who === 'seller'
            ? 'BT-30: seller legal registration identifier'
            : 'BT-47: buyer legal registration',
        ).optional(),
        address: address.optional(),
        contact: contact(who).optional(),
        email: text(
          who === 'seller' ? 'BT-34: seller electronic address' : 'BT-49: buyer electronic address',
        ).optional(),
      },
      { error: 'must be an object {name?, vat_id?, legal_id?, address?, contact?, email?}' },
    )
    .describe(who === 'seller' ? 'BG-4: the seller' : 'BG-7: the buyer');

export const invoiceLineSchema = z.strictObject(
  {
    id: text('BT-126: line identifier; default: its position, from 1').optional(),
    name: text('BT-153: item name').optional(),
    description: text('BT-154: item description').optional(),
    quantity: amount('BT-129: invoiced quantity'),
    unit: text(
      'BT-130: unit of measure, UN/ECE Recommendation 20 (C62 one, HUR hour, KGM kilogram)',
    ).optional(),
    net_price: amount('BT-146: item net price, in the invoice currency'),
    vat_category: text(
      'BT-151: VAT category (S standard, Z zero, E exempt, AE reverse charge, K, G, O, L, M)',
    ),
    vat_rate: amount('BT-152: VAT rate, percent').optional(),
    line_total: amount('BT-131: line net amount; default: quantity x net price, rounded to cents').optional(),
  },
  { error: 'must be an object {name, quantity, unit, net_price, vat_category, vat_rate, ...}' },
);

const vatBreakdown = z.strictObject(
  {
    category: text('BT-118: VAT category'),
    rate: amount('BT-119: VAT rate, percent').optional(),
    taxable_amount: amount('BT-116: taxable amount'),
    tax_amount: amount('BT-117: VAT amount'),
    exemption_reason: text('BT-120: VAT exemption reason text').optional(),
  },
  { error: 'must be an object {category, rate?, taxable_amount, tax_amount, exemption_reason?}' },
);

export const invoiceSchema = z
  .strictObject(
    {
      number: text('BT-1: invoice number').optional(),
      type_code: text(
        'BT-3: invoice type code, UNTDID 1001 (380 invoice, 381 credit note); default 380',
      ).optional(),
      issue_date: date('BT-2: issue date').optional(),
      due_date: date('BT-9: payment due date').optional(),
      currency: text('BT-5: invoice currency, ISO 4217 (EUR)').optional(),
      buyer_reference: text(
        'BT-10: buyer reference (the Leitweg-ID for XRechnung, which requires it: BR-DE-15)',
      ).optional(),
      business_process: text(
        'BT-23: business process type; default for xrechnung-cii urn:fdc:peppol.eu:2017:poacc:billing:01:1.0, none otherwise',
      ).optional(),
      order_reference: text('BT-13: purchase order reference').optional(),
      notes: z
        .array(text('BT-22: invoice note'), { error: 'must be an array of strings' })
        .max(20)
        .optional(),
      seller: party('seller').optional(),
      buyer: party('buyer').optional(),
      lines: z
        .array(invoiceLineSchema, { error: 'must be an array of invoice lines' })
        .max(1000)
        .optional()
        .describe('BG-25: invoice lines (not in the minimum and basic-wl profiles)'),
      vat_breakdown: z
        .array(vatBreakdown, { error: 'must be an array' })
        .max(50)
        .optional()
        .describe('BG-23: VAT breakdown; default: from the lines, one per category and rate'),
      totals: z
        .strictObject(
          {
            line_total: amount('BT-106: sum of line net amounts').optional(),
            tax_basis_total: amount('BT-109: total without VAT').optional(),
            tax_total: amount('BT-110: total VAT').optional(),
            grand_total: amount('BT-112: total with VAT').optional(),
            prepaid: amount('BT-113: paid amount').optional(),
            due_payable: amount('BT-115: amount due for payment').optional(),
          },
          { error: 'must be an object of amounts' },
        )
        .optional()
        .describe('BG-22: document totals; each absent one is computed from the lines and the VAT breakdown'),
      payment: z
        .strictObject(
          {
            means_code: text(
              'BT-81: payment means, UNTDID 4461 (58 SEPA transfer, 30 credit transfer)',
            ).optional(),
            iban: text('BT-84: payment account identifier (IBAN)').optional(),
            terms: text('BT-20: payment terms').optional(),
          },
          { error: 'must be an object {means_code?, iban?, terms?}' },
        )
        .optional(),
    },
    { error: 'must be an invoice object (e_invoice.invoice in the OpenAPI document)' },
  )
  .describe('An invoice, by EN 16931 business terms; built into UN/CEFACT CII XML for the profile');

export type InvoiceDocument = z.output<typeof invoiceSchema>;
export type InvoiceLine = z.output<typeof invoiceLineSchema>;
