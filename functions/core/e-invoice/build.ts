/**
 * An invoice document (invoice-schema.ts) written as UN/CEFACT Cross Industry Invoice XML (D16B,
 * as Factur-X 1.09 profiles it), in the element order the XSD requires. Our own mapping: the one
 * library measured for this, @e-invoice-eu/core 2.3.4 (WTFPL, 2.7 MB minified with its
 * spreadsheet reader), takes UBL-shaped JSON (`cbc:`/`cac:` keys) rather than business terms,
 * builds the profiles' CII only together with a PDF it makes PDF/A itself, and its plain CII for a
 * minimal invoice failed the Factur-X EN 16931 XSD (no ApplicableHeaderTradeDelivery).
 *
 * Nothing is checked here beyond types: absent fields are left out and the XSD and schematron
 * (check.ts) name what is missing or wrong, by EN 16931 rule. Missing totals and VAT breakdown
 * are computed from the lines (rounded to cents); given ones are written as given.
 */
import { ServiceError } from '../../domain/common/errors.js';
import type { EInvoiceProfile, EInvoiceStandard } from '../../domain/renders/e-invoice.js';
import { type InvoiceDocument, type InvoiceLine, invoiceSchema } from './invoice-schema.js';

/** BT-24, the specification identifier, by profile (Factur-X 1.09). */
export const GUIDELINE: Readonly<Record<EInvoiceProfile, string>> = {
  minimum: 'urn:factur-x.eu:1p0:minimum',
  'basic-wl': 'urn:factur-x.eu:1p0:basicwl',
  basic: 'urn:cen.eu:en16931:2017#compliant#urn:factur-x.eu:1p0:basic',
  en16931: 'urn:cen.eu:en16931:2017',
  extended: 'urn:cen.eu:en16931:2017#conformant#urn:factur-x.eu:1p0:extended',
};

/**
 * BT-24 of XRechnung 3.0 (KoSIT's common.sch, XR-CIUS-ID; BR-DE-21 requires it), as ZUGFeRD 2.x
 * names its XRECHNUNG profile.
 */
export const XRECHNUNG_GUIDELINE = 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0';
/** BT-23 written for XRechnung when the invoice names none (Peppol's rule R001, merged into XRechnung's). */
export const XRECHNUNG_DEFAULT_PROCESS = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';

const xmlText = (value: string): string =>
  value.replace(
    /[<>&"']/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] ?? c,
  );

/** An element with text, or nothing when the value is absent. */
const el = (name: string, value: string | undefined, attributes = ''): string =>
  value === undefined ? '' : `<ram:${name}${attributes}>${xmlText(value)}</ram:${name}>`;
const wrap = (name: string, inner: string): string =>
  inner === '' ? '' : `<ram:${name}>${inner}</ram:${name}>`;
const money = (value: number): string => value.toFixed(2);
const round = (value: number): number => Math.round(value * 100) / 100;
const dateTime = (name: string, date: string | undefined): string =>
  date === undefined
    ? ''
    : `<ram:${name}><udt:DateTimeString format="102">${date.replaceAll('-', '')}</udt:DateTimeString></ram:${name}>`;

const lineTotal = (line: InvoiceLine): number => line.line_total ?? round(line.quantity * line.net_price);

interface VatGroup {
  readonly category: string;
  readonly rate?: number | undefined;
  readonly taxable_amount: number;
  readonly tax_amount: number;
  readonly exemption_reason?: string | undefined;
}

/** BG-23 from the lines: one group per category and rate. */
const vatFromLines = (lines: readonly InvoiceLine[]): VatGroup[] => {
  const groups = new Map<string, { category: string; rate: number | undefined; taxable: number }>();
  for (const line of lines) {
    const key = `${line.vat_category}/${line.vat_rate ?? ''}`;
    const group = groups.get(key) ?? { category: line.vat_category, rate: line.vat_rate, taxable: 0 };
    group.taxable = round(group.taxable + lineTotal(line));
    groups.set(key, group);
  }
  return [...groups.values()].map(({ category, rate, taxable }) => ({
    category,
    rate,
    taxable_amount: taxable,
    tax_amount: round((taxable * (rate ?? 0)) / 100),
  }));
};

const address = (a: NonNullable<NonNullable<InvoiceDocument['seller']>['address']>): string =>
  wrap(
    'PostalTradeAddress',
    el('PostcodeCode', a.postcode) +
      el('LineOne', a.line1) +
      el('LineTwo', a.line2) +
      el('CityName', a.city) +
      el('CountryID', a.country),
  );

const party = (
  tag: 'SellerTradeParty' | 'BuyerTradeParty',
  p: InvoiceDocument['seller'],
  profile: EInvoiceProfile,
): string => {
  const minimal = profile === 'minimum';
  const given = p ?? {};
  const postal = !given.address
    ? ''
    : minimal
      ? tag === 'SellerTradeParty'
        ? wrap('PostalTradeAddress', el('CountryID', given.address.country))
        : ''
      : address(given.address);
  const contact = given.contact;
  const definedContact =
    minimal || !contact
      ? ''
      : wrap(
          'DefinedTradeContact',
          el('PersonName', contact.name) +
            wrap('TelephoneUniversalCommunication', el('CompleteNumber', contact.phone)) +
            wrap('EmailURIUniversalCommunication', el('URIID', contact.email)),
        );
  return `<ram:${tag}>${el('Name', given.name ?? '')}${wrap('SpecifiedLegalOrganization', el('ID', given.legal_id))}${definedContact}${postal}${
    minimal || !given.email
      ? ''
      : wrap('URIUniversalCommunication', el('URIID', given.email, ' schemeID="EM"'))
  }${
    minimal && tag === 'BuyerTradeParty'
      ? ''
      : wrap('SpecifiedTaxRegistration', el('ID', given.vat_id, ' schemeID="VA"'))
  }</ram:${tag}>`;
};

const lineItem = (line: InvoiceLine, index: number, profile: EInvoiceProfile): string =>
  `<ram:IncludedSupplyChainTradeLineItem>` +
  wrap('AssociatedDocumentLineDocument', el('LineID', line.id ?? String(index + 1))) +
  wrap(
    'SpecifiedTradeProduct',
    el('Name', line.name ?? '') + (profile === 'basic' ? '' : el('Description', line.description)),
  ) +
  wrap(
    'SpecifiedLineTradeAgreement',
    wrap('NetPriceProductTradePrice', el('ChargeAmount', String(line.net_price))),
  ) +
  wrap(
    'SpecifiedLineTradeDelivery',
    el(
      'BilledQuantity',
      String(line.quantity),
      line.unit === undefined ? '' : ` unitCode="${xmlText(line.unit)}"`,
    ),
  ) +
  wrap(
    'SpecifiedLineTradeSettlement',
    wrap(
      'ApplicableTradeTax',
      el('TypeCode', 'VAT') +
        el('CategoryCode', line.vat_category) +
        el('RateApplicablePercent', line.vat_rate === undefined ? undefined : String(line.vat_rate)),
    ) + wrap('SpecifiedTradeSettlementLineMonetarySummation', el('LineTotalAmount', money(lineTotal(line)))),
  ) +
  `</ram:IncludedSupplyChainTradeLineItem>`;

const tradeTax = (group: VatGroup): string =>
  wrap(
    'ApplicableTradeTax',
    el('CalculatedAmount', money(group.tax_amount)) +
      el('TypeCode', 'VAT') +
      el('ExemptionReason', group.exemption_reason) +
      el('BasisAmount', money(group.taxable_amount)) +
      el('CategoryCode', group.category) +
      el('RateApplicablePercent', group.rate === undefined ? undefined : String(group.rate)),
  );

/** The CII XML of `invoice` (any JSON: a template's variables are read with the same schema). */
export const buildCii = (
  invoice: Readonly<Record<string, unknown>>,
  profile: EInvoiceProfile,
  /** Where the request gave the document, for a 422's field. */
  at = 'e_invoice.invoice',
  standard: EInvoiceStandard = 'factur-x',
): string => {
  const parsed = invoiceSchema.safeParse(invoice);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = [at, ...(issue?.path ?? []).map(String)].join('.');
    throw new ServiceError('INVALID_E_INVOICE', `${field} ${issue?.message ?? 'is not an invoice'}`, {
      details: [{ field, issue: issue?.message ?? 'is not an invoice' }],
    });
  }
  const inv = parsed.data;
  const withLines = profile === 'basic' || profile === 'en16931' || profile === 'extended';
  const lines = inv.lines ?? [];
  const vat = inv.vat_breakdown ?? vatFromLines(lines);
  const currency = inv.currency ?? '';
  const lineSum = inv.totals?.line_total ?? round(lines.reduce((sum, line) => sum + lineTotal(line), 0));
  const basis = inv.totals?.tax_basis_total ?? lineSum;
  const taxTotal = inv.totals?.tax_total ?? round(vat.reduce((sum, g) => sum + g.tax_amount, 0));
  const grand = inv.totals?.grand_total ?? round(basis + taxTotal);
  const prepaid = inv.totals?.prepaid;
  const due = inv.totals?.due_payable ?? round(grand - (prepaid ?? 0));
  const minimal = profile === 'minimum';
  const xrechnung = standard === 'xrechnung-cii';
  const guideline = xrechnung ? XRECHNUNG_GUIDELINE : GUIDELINE[profile];
  const process = inv.business_process ?? (xrechnung ? XRECHNUNG_DEFAULT_PROCESS : undefined);
  const payment = inv.payment;
  const paymentMeans =
    minimal || !payment?.means_code
      ? ''
      : wrap(
          'SpecifiedTradeSettlementPaymentMeans',
          el('TypeCode', payment.means_code) +
            wrap('PayeePartyCreditorFinancialAccount', el('IBANID', payment.iban)),
        );
  const terms = minimal
    ? ''
    : wrap(
        'SpecifiedTradePaymentTerms',
        el('Description', payment?.terms) + dateTime('DueDateDateTime', inv.due_date),
      );
  return (
    (
      `<?xml version="1.0" encoding="UTF-8"?>\n` +
      `<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100" xmlns:qdt="urn:un:unece:uncefact:data:standard:QualifiedDataType:100" xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100" xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100">` +
      `<rsm:ExchangedDocumentContext>${wrap('BusinessProcessSpecifiedDocumentContextParameter', el('ID', process))}${wrap('GuidelineSpecifiedDocumentContextParameter', el('ID', guideline))}</rsm:ExchangedDocumentContext>` +
      `<rsm:ExchangedDocument>${el('ID', inv.number ?? '')}${el('TypeCode', inv.type_code ?? '380')}${dateTime(
        'IssueDateTime',
        inv.issue_date ?? '',
      )}${minimal ? '' : (inv.notes ?? []).map((note) => wrap('IncludedNote', el('Content', note))).join('')}</rsm:ExchangedDocument>` +
      `<rsm:SupplyChainTradeTransaction>` +
      (withLines ? lines.map((line, i) => lineItem(line, i, profile)).join('') : '') +
      `<ram:ApplicableHeaderTradeAgreement>${el('BuyerReference', inv.buyer_reference)}${party(
        'SellerTradeParty',
        inv.seller,
        profile,
      )}${party('BuyerTradeParty', inv.buyer, profile)}${wrap(
        'BuyerOrderReferencedDocument',
        el('IssuerAssignedID', inv.order_reference),
      )}</ram:ApplicableHeaderTradeAgreement>` +
      `<ram:ApplicableHeaderTradeDelivery/>` +
      `<ram:ApplicableHeaderTradeSettlement>${el('InvoiceCurrencyCode', currency)}${paymentMeans}${
        minimal ? '' : vat.map(tradeTax).join('')
      }${terms}<ram:SpecifiedTradeSettlementHeaderMonetarySummation>${
        minimal ? '' : el('LineTotalAmount', money(lineSum))
      }${el('TaxBasisTotalAmount', money(basis))}${el('TaxTotalAmount', money(taxTotal), ` currencyID="${xmlText(currency)}"`)}${el(
        'GrandTotalAmount',
        money(grand),
      )}${prepaid === undefined ? '' : el('TotalPrepaidAmount', money(prepaid))}${el(
        'DuePayableAmount',
        money(due),
      )}</ram:SpecifiedTradeSettlementHeaderMonetarySummation></ram:ApplicableHeaderTradeSettlement>` +
      `</rsm:SupplyChainTradeTransaction></rsm:CrossIndustryInvoice>\n`
    )
      // One element a line, so that the XSD's line numbers point at one; never inside an empty element.
      .replace(/(<\/[^>]+>|\/>)(?=<)/g, '$1\n')
      .replace(/(<[^/!?][^>]*[^/]>)(?=<[^/])/g, '$1\n')
  );
};
