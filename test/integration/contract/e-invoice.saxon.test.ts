/**
 * The e-invoice checker contract (test/contract/e-invoice.contract.ts) on the real checker
 * (functions/core/e-invoice/check.ts: the XSD with libxml2, then the schematron with SaxonJS),
 * business rules included. In the heavy tier (vitest.config.ts): its first check loads SaxonJS and
 * a schematron in this process, seconds on 2 busy cores; the fast tier runs the same rules over
 * HTTP (integration/e-invoice.test.ts, the shared stack's checker).
 */
import { eInvoiceChecker } from '../../../functions/core/e-invoice/check.js';
import { eInvoiceCheckerContract } from '../../contract/e-invoice.contract.js';

eInvoiceCheckerContract({ name: 'SaxonJS', checker: eInvoiceChecker, businessRules: true });
