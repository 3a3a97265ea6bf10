/**
 * E-invoices (`e_invoice` on a render): a UN/CEFACT Cross Industry Invoice, given as XML or built
 * from an invoice document, validated before the render is accepted (so a failing invoice is
 * answered 422 INVALID_E_INVOICE with nothing charged) and embedded in a PDF/A-3b by the renderer's
 * `e_invoice` finishing step.
 *
 * The domain decides what is checked and when, and what a failure answers; the checker port
 * (functions/core/e-invoice/ implements it: XSD through libxml2 in WebAssembly, the schematron
 * through SaxonJS) does the checking.
 */
import { ServiceError } from '../common/errors.js';

/**
 * Factur-X 1.0 and ZUGFeRD 2.x (one format since ZUGFeRD 2.1), and XRechnung's CII syntax
 * (`xrechnung-cii`: Germany's CIUS of EN 16931, checked against KoSIT's XRechnung schematron on top
 * of the EN 16931 profile's XSD and rules, embedded as ZUGFeRD 2.x's XRECHNUNG profile).
 */
export type EInvoiceStandard = 'factur-x' | 'zugferd' | 'xrechnung-cii';
/**
 * Factur-X's five profiles. EXTENDED's official schematron is run with a two-character patch
 * (vendor/factur-x-1.09/README.md: SaxonJS's compiler mistypes `sum(...) * xs:decimal(100)`).
 */
export type EInvoiceProfile = 'minimum' | 'basic-wl' | 'basic' | 'en16931' | 'extended';

/** The standards and profiles served, in the order the API lists them. */
export const E_INVOICE_STANDARDS = [
  'factur-x',
  'zugferd',
  'xrechnung-cii',
] as const satisfies readonly EInvoiceStandard[];
/**
 * The profiles a standard is served with, where not all five. XRechnung 3.0 is a CIUS of EN 16931:
 * its invoice is an EN 16931 one with more required (profile en16931). XRechnung's extension
 * (urn:xeinkauf.de:kosit:extension:xrechnung_3.0, on Factur-X EXTENDED's XSD) is not served.
 */
export const E_INVOICE_PROFILES_OF: Readonly<Partial<Record<EInvoiceStandard, readonly EInvoiceProfile[]>>> =
  {
    'xrechnung-cii': ['en16931'],
  };
export const E_INVOICE_PROFILES = [
  'minimum',
  'basic-wl',
  'basic',
  'en16931',
  'extended',
] as const satisfies readonly EInvoiceProfile[];

/**
 * `e_invoice` as the caller gives it: exactly one of `xml`, `invoice` and `invoice_from_variables`
 * (checked at the edge). With `invoice_from_variables`, the render's variables are the invoice
 * document: one JSON prints the PDF and builds the XML.
 */
export interface RequestedEInvoice {
  readonly standard: EInvoiceStandard;
  readonly profile: EInvoiceProfile;
  readonly xml?: string | undefined;
  readonly invoice?: Readonly<Record<string, unknown>> | undefined;
  readonly invoice_from_variables?: true | undefined;
}

/** What a saved template keeps (in its pdf_options): its variables are the invoice. */
export interface SavedEInvoice {
  readonly standard: EInvoiceStandard;
  readonly profile: EInvoiceProfile;
  readonly invoice_from_variables: true;
}

/** `e_invoice` as the renderer is given it: the XML, already validated. */
export interface EInvoiceOption {
  readonly standard: EInvoiceStandard;
  readonly profile: EInvoiceProfile;
  /** The CII XML; absent until the render is accepted (a render without it fails the step). */
  readonly xml?: string;
  /** Given as an invoice document, built into the XML at acceptance. */
  readonly invoice?: Readonly<Record<string, unknown>>;
  /** The render's variables are the invoice document. */
  readonly fromVariables?: true;
  /** The assertions of the schematron that the XML passed. */
  readonly rulesChecked?: number;
}

/** One rule the XML broke: the schematron's or the XSD's. */
export interface RuleFailure {
  /** The business rule (BR-CO-10, ...) when the assertion names one, else the assertion's id (or XSD). */
  readonly rule: string;
  readonly message: string;
  /** Where in the XML: an XPath (schematron) or a line (XSD). */
  readonly location: string;
}

export type EInvoiceCheck =
  | { readonly valid: true; readonly rulesChecked: number }
  | { readonly valid: false; readonly rulesChecked: number; readonly failures: readonly RuleFailure[] };

/** The checker: builds and validates CII XML for a profile (functions/core/e-invoice/). */
export interface EInvoiceChecker {
  /** `standard` xrechnung-cii adds XRechnung's CIUS rules to the profile's (factur-x by default). */
  check(xml: string, profile: EInvoiceProfile, standard?: EInvoiceStandard): Promise<EInvoiceCheck>;
  /**
   * The CII XML of an invoice document (the shape the API publishes); throws 422 INVALID_E_INVOICE
   * naming the field under `field` (where the request gave the document) when it is not one.
   */
  build(
    invoice: Readonly<Record<string, unknown>>,
    profile: EInvoiceProfile,
    field: string,
    standard?: EInvoiceStandard,
  ): string;
}

/** What a job records of its e-invoice. */
export interface JobEInvoice {
  readonly standard: EInvoiceStandard;
  readonly profile: EInvoiceProfile;
  readonly valid: true;
  readonly rules_checked: number;
}

/** At most this many failed rules are listed (the count is in the message). */
export const MAX_LISTED_FAILURES = 50;

/**
 * The e-invoice's XML built (from `invoice`) and validated: the option the renderer is given, with
 * the rules it passed; a failing one throws 422 INVALID_E_INVOICE listing each failed rule.
 */
export const validateEInvoice = async (
  checker: EInvoiceChecker,
  option: EInvoiceOption,
  /** The render's variables (JSON text), read only when they are the invoice. */
  variables: () => string,
): Promise<{ option: EInvoiceOption; record: JobEInvoice }> => {
  const invoice = option.fromVariables
    ? (JSON.parse(variables()) as Record<string, unknown>)
    : option.invoice;
  const field =
    option.xml !== undefined ? 'e_invoice.xml' : option.fromVariables ? 'variables' : 'e_invoice.invoice';
  const xml =
    option.xml ?? (invoice ? checker.build(invoice, option.profile, field, option.standard) : undefined);
  if (xml === undefined) throw new Error('e_invoice without xml or invoice passed the edge');
  const checked = await checker.check(xml, option.profile, option.standard);
  if (!checked.valid) {
    const { failures } = checked;
    throw new ServiceError(
      'INVALID_E_INVOICE',
      `The e-invoice breaks ${failures.length} rule${failures.length === 1 ? '' : 's'} of ${option.standard} ${option.profile}: ${failures
        .slice(0, 3)
        .map((f) => f.rule)
        .join(', ')}${failures.length > 3 ? ', ...' : ''}`,
      {
        details: failures.slice(0, MAX_LISTED_FAILURES).map((f) => ({
          field,
          issue: f.message,
          rule: f.rule,
          location: f.location,
        })),
      },
    );
  }
  const { standard, profile } = option;
  return {
    option: { standard, profile, xml, rulesChecked: checked.rulesChecked },
    record: { standard, profile, valid: true, rules_checked: checked.rulesChecked },
  };
};
