/** The e-invoice checker contract (test/contract/e-invoice.contract.ts) on the memory checker: build and form. */
import { createMemoryEInvoiceChecker } from '../../../functions/adapters/memory/e-invoice.js';
import { eInvoiceCheckerContract } from '../../contract/e-invoice.contract.js';

eInvoiceCheckerContract({ name: 'memory', checker: createMemoryEInvoiceChecker(), businessRules: false });
