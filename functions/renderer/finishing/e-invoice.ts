import { AFRelationship, PDFDocument } from '@cantoo/pdf-lib';
import type { EInvoiceOption } from '../../domain/renders/e-invoice.js';
import { type FacturXXmp, makePdfA, setXmp } from './pdf-a-document.js';
import type { FinishingStep } from './step.js';

/**
 * The Factur-X 1.0 / ZUGFeRD 2.x names (they are one standard since ZUGFeRD 2.1); XRechnung is
 * ZUGFeRD 2.x's profile XRECHNUNG, embedded as xrechnung.xml (ZUGFeRD 2.1's specification, as
 * Mustang, the reference implementation, writes and reads it).
 */
const FILE_NAME = 'factur-x.xml';
const XRECHNUNG_FILE_NAME = 'xrechnung.xml';
const XRECHNUNG_CONFORMANCE = 'XRECHNUNG';
const CONFORMANCE: Readonly<Record<EInvoiceOption['profile'], string>> = {
  minimum: 'MINIMUM',
  'basic-wl': 'BASIC WL',
  basic: 'BASIC',
  en16931: 'EN 16931',
  extended: 'EXTENDED',
};

const xrechnungOf = (option: EInvoiceOption): boolean => option.standard === 'xrechnung-cii';
const fileName = (option: EInvoiceOption): string => (xrechnungOf(option) ? XRECHNUNG_FILE_NAME : FILE_NAME);
const conformance = (option: EInvoiceOption): string =>
  xrechnungOf(option) ? XRECHNUNG_CONFORMANCE : CONFORMANCE[option.profile];

const facturX = (option: EInvoiceOption): FacturXXmp => ({
  namespace: 'urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#',
  prefix: 'fx',
  documentFileName: fileName(option),
  conformanceLevel: conformance(option),
  version: '1.0',
});

/**
 * `e_invoice`: the validated CII XML (the API validated it before accepting the render) embedded
 * as factur-x.xml (xrechnung.xml, conformance level XRECHNUNG, for xrechnung-cii), an associated file of the document (/AF) with AFRelationship Alternative (Data
 * for minimum and basic-wl, whose XML is not the whole invoice), in a PDF/A-3b whose XMP carries
 * the Factur-X extension schema. A PDF/A already made by `pdf_a` (which runs before) is kept as
 * it is, its XMP extended.
 */
export const eInvoice: FinishingStep<'e_invoice'> = async (pdf, option, { request, now, log }) => {
  if (option.xml === undefined) {
    return { ok: false, code: 'PDF_RENDERING_FAILED', message: 'e_invoice: the invoice was not validated' };
  }
  const doc = await PDFDocument.load(pdf, { updateMetadata: false });
  if (request.pdf_a === undefined) {
    const made = makePdfA(doc, pdf, 3);
    if (!made.ok) return { ok: false, code: 'PDF_RENDERING_FAILED', message: made.message };
  }
  const minimal = option.profile === 'minimum' || option.profile === 'basic-wl';
  await doc.attach(new TextEncoder().encode(option.xml), fileName(option), {
    mimeType: 'text/xml',
    description: xrechnungOf(option)
      ? 'XRechnung invoice (ZUGFeRD profile XRECHNUNG)'
      : `Factur-X invoice, profile ${CONFORMANCE[option.profile]}`,
    creationDate: now,
    modificationDate: now,
    afRelationship: minimal ? AFRelationship.Data : AFRelationship.Alternative,
  });
  setXmp(doc, 3, facturX(option));
  log.debug('e-invoice', { standard: option.standard, profile: option.profile, bytes: option.xml.length });
  return { ok: true, pdf: await doc.save({ useObjectStreams: false, updateFieldAppearances: false }) };
};
