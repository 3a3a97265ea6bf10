/**
 * What each finishing step of issue 34 costs per document: the steps alone (no Chromium, no
 * upload) on the bench's invoice and report as Chromium prints them, wall time and this process's
 * CPU, median of several runs after a warm-up (fonts read, modules loaded).
 *
 *   npx tsx test/bench/finishing.ts            # about half a minute
 *   npx tsx test/bench/finishing.ts --runs 9
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { Logger } from '@aws-lambda-powertools/logger';
import { markOf } from '../../functions/domain/renders/marks.js';
import { protectionOf } from '../../functions/domain/renders/protection.js';
import { renderOptionsFrom } from '../../functions/domain/renders/render-options.js';
import { signatureOf } from '../../functions/domain/renders/signature.js';
import type { RenderRequest } from '../../functions/renderer/contract.js';
import { FINISHING, type FinishingContext } from '../../functions/renderer/finishing/index.js';
import { renderTemplate } from '../../functions/templating/index.js';
import { localFontconfigFile } from '../../lib/layer-fonts.js';
import { launchTestBrowser } from '../helpers/browser.js';
import { INVOICE_TEMPLATE, invoiceVariables } from './fixtures/invoice.js';
import { REPORT_TEMPLATE, reportVariables } from './fixtures/report.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' } } });
const RUNS = Number(values.runs);
const ROOT = join(dirname(new URL(import.meta.url).pathname), '../..');

const browser = await launchTestBrowser();
const print = async (html: string): Promise<Uint8Array> => {
  const page = await browser.newPage();
  await page.setContent(html);
  const pdf = await page.pdf({ format: 'A4', printBackground: true });
  await page.close();
  return pdf;
};
const documents = {
  invoice: await print(renderTemplate(INVOICE_TEMPLATE, invoiceVariables())),
  report: await print(renderTemplate(REPORT_TEMPLATE, reportVariables())),
};
await browser.close();

const keys = mkdtempSync(join(tmpdir(), 'bench-keys-'));
execFileSync(
  'openssl',
  [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'k.pem',
    '-out',
    'c.pem',
    '-days',
    '2',
    '-subj',
    '/CN=Bench',
  ],
  { cwd: keys, stdio: 'ignore' },
);
const signingKey = {
  kind: 'uploaded' as const,
  algorithm: 'RSA' as const,
  privateKeyPem: readFileSync(join(keys, 'k.pem'), 'utf8'),
  certificatePem: readFileSync(join(keys, 'c.pem'), 'utf8'),
};
rmSync(keys, { recursive: true, force: true });

const options = renderOptionsFrom({}, 30_000);
const context = (
  request: Partial<RenderRequest>,
  templated: FinishingContext['templated'] = {},
): FinishingContext => ({
  request: { ...options, ...request } as RenderRequest,
  log: new Logger({ logLevel: 'SILENT' }),
  now: new Date(),
  fontsDir: dirname(localFontconfigFile(ROOT)),
  templated,
});

const watermark = markOf({ text: 'COPY' }, 'watermark');
const stamp = markOf({ text: 'PAID 2026-11-28' }, 'stamp');
const stampCjk = markOf({ text: '支払済 2026-11-28' }, 'stamp');
const protection = protectionOf({ owner_password: 'Bench-Owner-Pass-1', user_password: 'bench' });

const invisible = signatureOf({ key_id: 'sk_bench', reason: 'Invoice issued' });
const visible = signatureOf({
  key_id: 'sk_bench',
  reason: 'Invoice issued',
  appearance: { page: 1, x: 300, y: 40, width: 240, height: 60 },
});

const steps: Record<string, (pdf: Uint8Array) => Promise<unknown>> = {
  'watermark (text)': (pdf) =>
    Promise.resolve(FINISHING.watermark(pdf, watermark, context({ watermark }, { watermark: 'COPY' }))),
  'stamp (Latin text)': (pdf) =>
    Promise.resolve(FINISHING.stamp(pdf, stamp, context({ stamp }, { stamp: 'PAID 2026-11-28' }))),
  'stamp (Japanese text)': (pdf) =>
    Promise.resolve(
      FINISHING.stamp(pdf, stampCjk, context({ stamp: stampCjk }, { stamp: '支払済 2026-11-28' })),
    ),
  'protection (AES-256)': (pdf) =>
    Promise.resolve(FINISHING.protection(pdf, protection, context({ protection }))),
  'signature (PAdES B-B, RSA-2048, invisible)': (pdf) =>
    Promise.resolve(FINISHING.signature(pdf, invisible, context({ signature: invisible, signingKey }))),
  'signature (PAdES B-B, RSA-2048, visible)': (pdf) =>
    Promise.resolve(FINISHING.signature(pdf, visible, context({ signature: visible, signingKey }))),
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
console.log(`| step | document | wall ms (median of ${RUNS}) | CPU ms | bytes added |`);
console.log('| --- | --- | --- | --- | --- |');
for (const [name, step] of Object.entries(steps)) {
  for (const [doc, pdf] of Object.entries(documents)) {
    await step(pdf); // warm-up: modules, fonts
    const walls: number[] = [];
    const cpus: number[] = [];
    let size = 0;
    for (let i = 0; i < RUNS; i++) {
      const cpu = process.cpuUsage();
      const started = performance.now();
      const out = (await step(pdf)) as { pdf?: Uint8Array } | Uint8Array;
      walls.push(performance.now() - started);
      const used = process.cpuUsage(cpu);
      cpus.push((used.user + used.system) / 1000);
      size = (out instanceof Uint8Array ? out : (out.pdf ?? pdf)).byteLength - pdf.byteLength;
    }
    console.log(
      `| ${name} | ${doc} (${Math.round(pdf.byteLength / 1024)} KiB) | ${median(walls).toFixed(1)} | ${median(cpus).toFixed(1)} | ${size} |`,
    );
  }
}
