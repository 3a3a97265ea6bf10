/**
 * `e_invoice` on the wire (POST /v1/pdf): the standard, the profile, and exactly one of the CII
 * XML and an invoice document to build it from (functions/core/e-invoice/invoice-schema.ts).
 */
import { z } from 'zod';
import { invoiceSchema } from '../core/e-invoice/invoice-schema.js';
import {
  E_INVOICE_PROFILES,
  E_INVOICE_STANDARDS,
  E_INVOICE_STANDARDS_NOT_SERVED,
} from '../domain/renders/e-invoice.js';

/** A CII invoice is small; this bounds what the validator is given. */
export const MAX_E_INVOICE_XML_BYTES = 1024 * 1024;

/** The standard's issue: a standard named in the issue but not served says why, others list the served. */
const standardIssue = (input: unknown): string =>
  typeof input === 'string' && input in E_INVOICE_STANDARDS_NOT_SERVED
    ? `${input} is not supported yet: ${E_INVOICE_STANDARDS_NOT_SERVED[input as keyof typeof E_INVOICE_STANDARDS_NOT_SERVED]}; one of ${E_INVOICE_STANDARDS.join(', ')} is`
    : `must be one of ${E_INVOICE_STANDARDS.join(', ')}`;

export const eInvoiceSchema = z
  .strictObject(
    {
      standard: z
        .enum(E_INVOICE_STANDARDS, { error: (issue) => standardIssue(issue.input) })
        .describe(
          'factur-x (Factur-X 1.0, France) or zugferd (ZUGFeRD 2.x, Germany): one format since ZUGFeRD 2.1, embedded as factur-x.xml',
        ),
      profile: z
        .enum(E_INVOICE_PROFILES, { error: `must be one of ${E_INVOICE_PROFILES.join(', ')}` })
        .describe('the Factur-X profile the XML conforms to, validated against its XSD and schematron'),
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
  .describe(
    "A Factur-X / ZUGFeRD e-invoice: its XML (given, or built from `invoice`) is validated against the profile's XSD and EN 16931 schematron before the render is accepted (422 INVALID_E_INVOICE listing each failed rule, nothing charged), then embedded as factur-x.xml in a PDF/A-3b",
  );

/** What a saved template keeps in its pdf_options: its variables are the invoice. */
export const savedEInvoiceSchema = z
  .strictObject(
    {
      standard: z.enum(E_INVOICE_STANDARDS, { error: (issue) => standardIssue(issue.input) }),
      profile: z.enum(E_INVOICE_PROFILES, { error: `must be one of ${E_INVOICE_PROFILES.join(', ')}` }),
      invoice_from_variables: z.literal(true, { error: 'must be true' }),
    },
    { error: 'must be an object {standard, profile, invoice_from_variables: true}' },
  )
  .describe(
    "Every render of the template embeds an e-invoice built from its variables (the shape of POST /v1/pdf's e_invoice.invoice), validated before the render is accepted; a render's own e_invoice replaces it",
  );
