/**
 * An EInvoiceChecker (domain/renders/e-invoice.ts) without SaxonJS: it builds the CII XML as the
 * real checker does (core/e-invoice/build.ts) and checks its form as the real checker's first
 * stage does (core/e-invoice/check.ts, structuralFailures: no DOCTYPE, well-formed, the profile's
 * official XSD with libxml2 in WebAssembly, a few milliseconds), but runs none of the
 * schematron's business rules (the real checker's first use costs some 3 s, each en16931 check
 * some 0.6 s on 2 busy cores). So it answers `rulesChecked: 0`, and an invoice whose totals do not
 * add up passes it. For use cases on fakes; the contract (test/contract/e-invoice.contract.ts)
 * holds it and the real checker to the same cases, the business rules to the real one alone.
 */
import { buildCii } from '../../core/e-invoice/build.js';
import type { EInvoiceChecker } from '../../domain/renders/e-invoice.js';

/** libxml2 in WebAssembly and the artefacts, loaded on the first check (not by every importer). */
let checking: Promise<typeof import('../../core/e-invoice/check.js')> | undefined;

export const createMemoryEInvoiceChecker = (): EInvoiceChecker => ({
  build: buildCii,
  // The XSD is the profile's for every standard (xrechnung-cii: en16931's); no schematron runs.
  async check(xml, profile) {
    checking ??= import('../../core/e-invoice/check.js');
    const failures = await (await checking).structuralFailures(xml, profile);
    return failures.length > 0
      ? { valid: false, rulesChecked: 0, failures }
      : { valid: true, rulesChecked: 0 };
  },
});
