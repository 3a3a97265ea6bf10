/**
 * The measurement that decided against Paged.js for page references (functions/renderer/
 * navigation/print.ts): the invoice and the 30-page report printed by Chromium as the renderer
 * prints them, and with the Paged.js polyfill injected from disk (never fetched) laying them out
 * first; time, size, and how many pages keep the same text.
 *
 *   npm install --no-save pagedjs@0.4.3    # not a dependency: only this measurement needs it
 *   npx tsx test/bench/pagedjs.ts
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import chromium from '@sparticuz/chromium';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import puppeteer from 'puppeteer-core';
import { loadFixtures } from './fixtures/index.js';
import { ROOT } from './service.js';

// Read from disk: the package's exports list neither its browser build nor its package.json.
const polyfill = readFileSync(join(ROOT, 'node_modules/pagedjs/dist/paged.polyfill.min.js'), 'utf8');
const MARGIN = '0.4in';
const ROUNDS = 3;

const pageTexts = async (pdf: Uint8Array): Promise<string[]> => {
  const doc = await getDocument({ data: new Uint8Array(pdf), verbosity: 0 }).promise;
  const texts: string[] = [];
  for (let n = 1; n <= doc.numPages; n++) {
    const content = await (await doc.getPage(n)).getTextContent();
    texts.push(content.items.map((item) => ('str' in item ? item.str : '')).join(' '));
  }
  await doc.destroy();
  return texts;
};

const browser = await puppeteer.launch({
  executablePath: await chromium.executablePath(),
  args: chromium.args,
  headless: true,
});
for (const fixture of loadFixtures().filter((f) => f.name === 'invoice' || f.name === 'report')) {
  for (let round = 0; round < ROUNDS; round++) {
    const plainPage = await browser.newPage();
    let started = performance.now();
    await plainPage.setContent(fixture.html);
    const plain = await plainPage.pdf({
      format: 'A4',
      margin: { top: MARGIN, right: MARGIN, bottom: MARGIN, left: MARGIN },
      printBackground: true,
      tagged: false,
    });
    const plainMs = performance.now() - started;
    await plainPage.close();

    const pagedPage = await browser.newPage();
    started = performance.now();
    await pagedPage.setContent(
      fixture.html.replace('</head>', `<style>@page { size: A4; margin: ${MARGIN}; }</style></head>`),
    );
    await pagedPage.evaluate('window.PagedConfig = { auto: false }');
    await pagedPage.addScriptTag({ content: polyfill });
    const layoutStarted = performance.now();
    await pagedPage.evaluate('window.PagedPolyfill.preview()');
    const layoutMs = performance.now() - layoutStarted;
    const paged = await pagedPage.pdf({ preferCSSPageSize: true, printBackground: true, tagged: false });
    const pagedMs = performance.now() - started;
    await pagedPage.close();

    const [a, b] = [await pageTexts(plain), await pageTexts(paged)];
    console.log(
      `${fixture.name}: Chromium ${a.length} pages ${Math.round(plainMs)} ms ${plain.length} B | ` +
        `Paged.js ${b.length} pages ${Math.round(pagedMs)} ms (its layout ${Math.round(layoutMs)} ms) ` +
        `${paged.length} B | pages with the same text: ${a.filter((t, i) => t === b[i]).length}`,
    );
  }
}
await browser.close();
