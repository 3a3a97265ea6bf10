/**
 * The cost of `e_invoice` and `pdf_a` per invoice:
 * - validation, as the API Lambda runs it at acceptance: the invoice document built into CII
 *   XML, then the profile's XSD (libxml2-wasm) and schematron (SaxonJS); the first invoice of a
 *   profile (its artefacts unpacked and compiled) apart from the warm ones;
 * - the finishing steps, as the renderer runs them, on PDFs Chromium printed: `pdf_a` on the
 *   one-page invoice and the 30-page report (tagged), `e_invoice` (the XML attached, PDF/A-3b) on
 *   the invoice.
 *
 *   npx tsx test/bench/e-invoice.ts                   # about a minute
 *   npx tsx test/bench/e-invoice.ts --iterations 50
 *
 * `npm run bench` runs it too and reports it with the rest.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { buildCii } from '../../functions/core/e-invoice/build.js';
import { checkCii } from '../../functions/core/e-invoice/check.js';
import type { EInvoiceProfile } from '../../functions/domain/renders/e-invoice.js';
import { eInvoice } from '../../functions/renderer/finishing/e-invoice.js';
import { pdfA } from '../../functions/renderer/finishing/pdf-a.js';
import type { FinishingContext } from '../../functions/renderer/finishing/step.js';
import { renderTemplate } from '../../functions/templating/index.js';
import { validInvoice, validXRechnungInvoice } from '../fixtures/e-invoice.js';
import { launchTestBrowser } from '../helpers/browser.js';
import { INVOICE_TEMPLATE, invoiceVariables } from './fixtures/invoice.js';
import { REPORT_TEMPLATE, reportVariables } from './fixtures/report.js';
import { type Summary, summarize } from './lib/stats.js';

export interface EInvoiceBench {
  readonly iterations: number;
  /** ms: the first invoice of each profile in this process (artefacts unpacked, XSD compiled, SaxonJS loaded). */
  readonly firstCheckMs: Readonly<Partial<Record<EInvoiceProfile, number>>>;
  /** ms per invoice, warm: build + XSD + schematron. */
  readonly check: Readonly<Partial<Record<EInvoiceProfile, Summary>>>;
  /** xrechnung-cii (en16931's XSD and schematron, then KoSIT's XRechnung schematron): first, and warm. */
  readonly xrechnungFirstCheckMs: number;
  readonly xrechnungCheck: Summary;
  /** ms per PDF: the finishing steps on Chromium's output. */
  readonly pdfAInvoice: Summary;
  readonly pdfAReport: Summary;
  readonly eInvoiceStep: Summary;
  readonly reportPages: number;
}

const PROFILES: readonly EInvoiceProfile[] = ['extended', 'en16931', 'basic', 'basic-wl', 'minimum'];

const time = async (n: number, run: () => Promise<unknown>): Promise<Summary> => {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  return summarize(samples);
};

const silent = { debug() {}, info() {}, warn() {}, error() {} } as unknown as FinishingContext['log'];

export const measureEInvoice = async (iterations = 20): Promise<EInvoiceBench> => {
  const firstCheckMs: Partial<Record<EInvoiceProfile, number>> = {};
  const check: Partial<Record<EInvoiceProfile, Summary>> = {};
  for (const profile of PROFILES) {
    const started = performance.now();
    const first = await checkCii(buildCii(validInvoice(), profile), profile);
    if (!first.valid) throw new Error(`the bench invoice fails ${profile}: ${JSON.stringify(first)}`);
    firstCheckMs[profile] = Math.round(performance.now() - started);
    check[profile] = await time(iterations, () => checkCii(buildCii(validInvoice(), profile), profile));
  }

  const xrechnungXml = () =>
    buildCii(validXRechnungInvoice(), 'en16931', 'e_invoice.invoice', 'xrechnung-cii');
  const xrStarted = performance.now();
  const xrFirst = await checkCii(xrechnungXml(), 'en16931', 'xrechnung-cii');
  if (!xrFirst.valid) throw new Error(`the bench XRechnung fails: ${JSON.stringify(xrFirst)}`);
  const xrechnungFirstCheckMs = Math.round(performance.now() - xrStarted);
  const xrechnungCheck = await time(iterations, () => checkCii(xrechnungXml(), 'en16931', 'xrechnung-cii'));

  const browser = await launchTestBrowser();
  let invoicePdf: Uint8Array;
  let reportPdf: Uint8Array;
  try {
    const page = await browser.newPage();
    const html = (template: string, variables: Record<string, unknown>) =>
      renderTemplate(template, variables);
    await page.setContent(html(INVOICE_TEMPLATE, invoiceVariables()));
    invoicePdf = await page.pdf({ format: 'A4', tagged: true });
    await page.setContent(html(REPORT_TEMPLATE, reportVariables()));
    reportPdf = await page.pdf({ format: 'A4', tagged: true, outline: true });
  } finally {
    await browser.close();
  }
  const reportPages = (new TextDecoder('latin1').decode(reportPdf).match(/\/Type\s*\/Page\b/g) ?? []).length;

  const xml = buildCii(validInvoice(), 'en16931');
  const context = (request: Record<string, unknown>): FinishingContext =>
    ({ request, log: silent, now: new Date() }) as unknown as FinishingContext;
  const ok = (outcome: Awaited<ReturnType<typeof pdfA>>) => {
    if (!outcome.ok) throw new Error(outcome.message);
  };
  const steps = Math.max(5, Math.round(iterations / 2));
  return {
    iterations,
    firstCheckMs,
    check,
    xrechnungFirstCheckMs,
    xrechnungCheck,
    pdfAInvoice: await time(steps, async () => ok(await pdfA(invoicePdf, '2b', context({ pdf_a: '2b' })))),
    pdfAReport: await time(steps, async () => ok(await pdfA(reportPdf, '2b', context({ pdf_a: '2b' })))),
    eInvoiceStep: await time(steps, async () =>
      ok(await eInvoice(invoicePdf, { standard: 'factur-x', profile: 'en16931', xml }, context({}))),
    ),
    reportPages,
  };
};

const ms = (s: Summary | undefined) => (s ? `p50 ${s.p50} ms, p95 ${s.p95} ms` : '-');

export const eInvoiceLines = (r: EInvoiceBench): string[] => [
  `e_invoice validation per invoice (build + XSD + schematron, warm, n=${r.iterations}): ${PROFILES.map(
    (p) => `${p} ${ms(r.check[p])}`,
  ).join('; ')}`,
  `e_invoice validation, first invoice of a profile in a process: ${PROFILES.map(
    (p) => `${p} ${r.firstCheckMs[p]} ms`,
  ).join(', ')}`,
  `xrechnung-cii validation per invoice (en16931 + KoSIT's XRechnung schematron, warm, n=${r.iterations}): ${ms(
    r.xrechnungCheck,
  )}; first in a process (after en16931's): ${r.xrechnungFirstCheckMs} ms`,
  `finishing steps on Chromium's PDFs: pdf_a invoice (1 page) ${ms(r.pdfAInvoice)}; pdf_a report (${
    r.reportPages
  } pages, tagged) ${ms(r.pdfAReport)}; e_invoice (attach + PDF/A-3b) invoice ${ms(r.eInvoiceStep)}`,
];

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { iterations: { type: 'string', default: '20' } } });
  const result = await measureEInvoice(Number(values.iterations));
  for (const line of eInvoiceLines(result)) console.log(line);
}
