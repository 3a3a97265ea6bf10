/**
 * The e-invoice checker contract (test/contract/e-invoice.contract.ts) on the real checker
 * (functions/core/e-invoice/check.ts: the XSD with libxml2, then the schematron with SaxonJS),
 * business rules included. In the integration project: its first check takes seconds.
 */
import { eInvoiceChecker } from '../../../functions/core/e-invoice/check.js';
import { eInvoiceCheckerContract } from '../../contract/e-invoice.contract.js';

eInvoiceCheckerContract({ name: 'SaxonJS', checker: eInvoiceChecker, businessRules: true });
