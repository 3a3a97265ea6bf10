/**
 * `e_invoice` on the wire (POST /v1/pdf): the standard, the profile, and exactly one of the CII
 * XML and an invoice document to build it from (functions/core/e-invoice/invoice-schema.ts).
 */
import { z } from 'zod';
import { invoiceSchema } from '../core/e-invoice/invoice-schema.js';
import {
  E_INVOICE_PROFILES,
  E_INVOICE_PROFILES_OF,
  E_INVOICE_STANDARDS,
  type EInvoiceProfile,
  type EInvoiceStandard,
} from '../domain/renders/e-invoice.js';

/** A CII invoice is small; this bounds what the validator is given. */
export const MAX_E_INVOICE_XML_BYTES = 1024 * 1024;

const standardIssue = (): string => `must be one of ${E_INVOICE_STANDARDS.join(', ')}`;

/** A profile its standard is not served with (xrechnung-cii: en16931 only) is refused, naming e_invoice.profile. */
const profileOfStandard = (
  e: { readonly standard: EInvoiceStandard; readonly profile: EInvoiceProfile },
  ctx: z.RefinementCtx,
): void => {
  const served = E_INVOICE_PROFILES_OF[e.standard];
  if (served && !served.includes(e.profile)) {
    ctx.addIssue({
      code: 'custom',
      path: ['profile'],
      message: `must be ${served.join(' or ')} with standard ${e.standard} (XRechnung 3.0 is a CIUS of EN 16931; its extension is not served)`,
    });
  }
};

export const eInvoiceSchema = z
  .strictObject(
    {
      standard: z
        .enum(E_INVOICE_STANDARDS, { error: standardIssue })
        .describe(
          "factur-x (Factur-X 1.0, France) or zugferd (ZUGFeRD 2.x, Germany): one format since ZUGFeRD 2.1, embedded as factur-x.xml; xrechnung-cii (XRechnung 3.0 in CII syntax, Germany, with profile en16931): also checked against KoSIT's XRechnung schematron (BR-DE-*), embedded as xrechnung.xml (ZUGFeRD 2.x profile XRECHNUNG)",
        ),
      profile: z
        .enum(E_INVOICE_PROFILES, { error: `must be one of ${E_INVOICE_PROFILES.join(', ')}` })
        .describe(
          'the Factur-X profile the XML conforms to, validated against its XSD and schematron (xrechnung-cii: en16931 only)',
        ),
      xml: z
        .string({ error: 'must be a string of CII XML' })
        .min(1, { error: 'must be a string of CII XML' })
        .refine((xml) => Buffer.byteLength(xml, 'utf8') <= MAX_E_INVOICE_XML_BYTES, {
          error: `must be at most ${MAX_E_INVOICE_XML_BYTES} bytes`,
        })
        .optional()
        .describe(
          'the UN/CEFACT Cross Industry Invoice XML (rsm:CrossIndustryInvoice), as it will be embedded',
        ),
      invoice: invoiceSchema
        .transform((invoice): Readonly<Record<string, unknown>> => invoice)
        .optional()
        .describe('an invoice by EN 16931 business terms, built into the CII XML of the profile'),
      invoice_from_variables: z
        .literal(true, { error: 'must be true' })
        .optional()
        .describe(
          "true: the render's variables are the invoice document (the shape of `invoice`): one JSON prints the PDF and builds the XML",
        ),
    },
    { error: 'must be an object {standard, profile, and one of xml, invoice, invoice_from_variables}' },
  )
  .refine((e) => [e.xml, e.invoice, e.invoice_from_variables].filter((v) => v !== undefined).length === 1, {
    error: 'give exactly one of xml, invoice and invoice_from_variables',
  })
  .superRefine(profileOfStandard)
  .describe(
    "A Factur-X / ZUGFeRD (or XRechnung) e-invoice: its XML (given, or built from `invoice`) is validated against the profile's XSD and EN 16931 schematron (and, for xrechnung-cii, KoSIT's XRechnung schematron) before the render is accepted (422 INVALID_E_INVOICE listing each failed rule, nothing charged), then embedded as factur-x.xml (xrechnung.xml) in a PDF/A-3b",
  );

/** What a saved template keeps in its pdf_options: its variables are the invoice. */
export const savedEInvoiceSchema = z
  .strictObject(
    {
      standard: z.enum(E_INVOICE_STANDARDS, { error: standardIssue }),
      profile: z.enum(E_INVOICE_PROFILES, { error: `must be one of ${E_INVOICE_PROFILES.join(', ')}` }),
      invoice_from_variables: z.literal(true, { error: 'must be true' }),
    },
    { error: 'must be an object {standard, profile, invoice_from_variables: true}' },
  )
  .superRefine(profileOfStandard)
  .describe(
    "Every render of the template embeds an e-invoice built from its variables (the shape of POST /v1/pdf's e_invoice.invoice), validated before the render is accepted; a render's own e_invoice replaces it",
  );
