/**
 * Builds functions/core/e-invoice/artefacts/<profile>.ts from the official Factur-X artefacts
 * committed in vendor/factur-x-1.09/<profile>/ (XSD, schematron compiled to XSLT, code lists):
 * the schematron's XSLT is compiled once to SaxonJS's SEF with xslt3 (a dev dependency), and the
 * XSD files, the code lists and the SEF are written as one gzipped, base64 blob, so that every
 * bundle (the API Lambda, the local stack, the tests) carries them without files of its own.
 *
 * EXTENDED's schematron is compiled with one patch (PATCHES below, and vendor/factur-x-1.09/README.md):
 * the official file stays as published, the patched copy is made in a temporary folder.
 *
 *   npx tsx bin/e-invoice-artefacts.ts [profile...]   # the five and xrechnung by default; minutes each
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const ROOT = new URL('..', import.meta.url).pathname;
const VENDOR = join(ROOT, 'vendor/factur-x-1.09');
const OUT = join(ROOT, 'functions/core/e-invoice/artefacts');
const PROFILES = ['minimum', 'basicwl', 'basic', 'en16931', 'extended'];

/**
 * `round(sum(nodes) * xs:decimal(100)) div xs:decimal(100)` written `round(sum(nodes) * 100) div
 * 100` in the tests the XSLT runs (not in the copies of them it reports), as the file's other 153
 * such roundings read. SaxonJS 2.7's compiler (xslt3) types this arithmetic on the sum of untyped
 * nodes and xs:decimal operands as decimal arithmetic, while the sum is an xs:double at run time
 * (untyped values are cast to xs:double, XPath 3.1 section 14.4.3): every invoice with lines then
 * stops the schematron with XPTY0004 ("Required item type of first operand of 'arith' is
 * xs:decimal; supplied value is xs:double"). A double times or divided by the integer 100 is the
 * same double as by the decimal 100 (either is promoted to xs:double), so the rules are unchanged.
 * Two places, BR-FXEXT-CO-10 and BR-FXEXT-CO-13; the count is checked, so that a new version of
 * the file is looked at again rather than patched blindly.
 */
const DECIMAL_ROUNDING = '* xs:decimal(100)) div xs:decimal(100))';
const PATCHES: Readonly<
  Record<string, { readonly count: number; readonly apply: (xsl: string) => [string, number] }>
> = {
  extended: {
    count: 2,
    apply: (xsl) => {
      let count = 0;
      const patched = xsl.replace(/<xsl:when test="([^"]*)"/g, (_, test: string) => {
        count += test.split(DECIMAL_ROUNDING).length - 1;
        return `<xsl:when test="${test.replaceAll(DECIMAL_ROUNDING, '* 100) div 100)')}"`;
      });
      return [patched, count];
    },
  },
};

const xslt3 = (args: readonly string[]): void => {
  execFileSync(join(ROOT, 'node_modules/.bin/xslt3'), [...args], { stdio: ['ignore', 'ignore', 'inherit'] });
};

/**
 * XRechnung's CIUS schematron for CII (KoSIT's xrechnung-schematron, vendor/xrechnung-schematron-*),
 * built as KoSIT's build.xml builds it: the version tokens filled in, the whitelisted Peppol BIS
 * rules merged in (its src/xsl/peppol-into-xr.xsl with rule-list.xml, reading Peppol's CII
 * schematron from build/bis/), then compiled to XSLT with SchXslt's pipeline-for-svrl.xsl (the
 * 2.0 pipeline, generate-fired-rule false, as KoSIT's abu-schematron-schxslt.xml calls it), and
 * that XSLT to SaxonJS's SEF. Run by SaxonJS's xslt3 here where KoSIT runs Saxon HE.
 */
const XRECHNUNG = join(ROOT, 'vendor/xrechnung-schematron-2.5.0');
const XRECHNUNG_TOKENS = { 'xr-schematron.version.full': '2.5.0', 'xrechnung.version': '3.0.2' };
const buildXRechnung = (): void => {
  const started = Date.now();
  const tmp = mkdtempSync(join(tmpdir(), 'xr-'));
  for (const dir of ['src/xsl', 'build/bis', 'build/tmp', 'build/schematron/cii'])
    mkdirSync(join(tmp, dir), { recursive: true });
  let sch = readFileSync(join(XRECHNUNG, 'cii/XRechnung-CII-validation.sch'), 'utf8');
  for (const [token, value] of Object.entries(XRECHNUNG_TOKENS)) sch = sch.replaceAll(`@${token}@`, value);
  writeFileSync(join(tmp, 'build/tmp/XRechnung-CII-validation.sch'), sch);
  for (const f of ['peppol-into-xr.xsl', 'rule-list.xml'])
    copyFileSync(join(XRECHNUNG, 'xsl', f), join(tmp, 'src/xsl', f));
  copyFileSync(
    join(XRECHNUNG, 'peppol/PEPPOL-EN16931-CII.sch'),
    join(tmp, 'build/bis/PEPPOL-EN16931-CII.sch'),
  );
  copyFileSync(join(XRECHNUNG, 'common.sch'), join(tmp, 'build/schematron/common.sch'));
  const merged = join(tmp, 'build/schematron/cii/XRechnung-CII-validation.sch');
  xslt3([
    `-xsl:${join(tmp, 'src/xsl/peppol-into-xr.xsl')}`,
    `-s:${join(tmp, 'build/tmp/XRechnung-CII-validation.sch')}`,
    `-o:${merged}`,
    'syntax=CII',
  ]);
  const xsl = join(tmp, 'XRechnung-CII-validation.xsl');
  xslt3([
    `-xsl:${join(XRECHNUNG, 'schxslt-1.10.1/pipeline-for-svrl.xsl')}`,
    `-s:${merged}`,
    `-o:${xsl}`,
    'generate-fired-rule=false',
  ]);
  const sefFile = join(tmp, 'schematron.sef.json');
  xslt3([`-xsl:${xsl}`, `-export:${sefFile}`, '-nogo', '-relocate:on']);
  const mergedText = readFileSync(merged, 'utf8');
  const rules = mergedText.split(/<(?:\w+:)?(?:assert|report)\b/).length - 1;
  const gz = gzipSync(JSON.stringify({ sef: readFileSync(sefFile, 'utf8') }), { level: 9 }).toString(
    'base64',
  );
  rmSync(tmp, { recursive: true, force: true });
  writeFileSync(
    join(OUT, 'xrechnung.ts'),
    `// Generated by bin/e-invoice-artefacts.ts from vendor/xrechnung-schematron-2.5.0/ (XRechnung-CII-validation.sch with Peppol's rules merged, SchXslt 1.10.1): do not edit.\n` +
      `import type { CiusArtefacts } from './artefact.js';\n\n` +
      `export const artefacts: CiusArtefacts = {\n  source: 'XRechnung-CII-validation.sch 2.5.0 (XRechnung 3.0.2)',\n  rules: ${rules},\n  gz: '${gz}',\n};\n`,
  );
  console.log(`xrechnung: ${rules} assertions, ${gz.length} base64 characters, ${Date.now() - started} ms`);
};

for (const profile of process.argv.length > 2 ? process.argv.slice(2) : [...PROFILES, 'xrechnung']) {
  if (profile === 'xrechnung') {
    buildXRechnung();
    continue;
  }
  const dir = join(VENDOR, profile);
  const files = readdirSync(dir);
  const xsl = files.find((f) => f.endsWith('.xsl'));
  const codedb = files.find((f) => f.endsWith('_codedb.xml'));
  const main = files.find((f) => /^Factur-X_[A-Z0-9]+\.xsd$/.test(f));
  if (!xsl || !codedb || !main) throw new Error(`${dir}: no schematron, code list or main XSD`);
  const tmp = mkdtempSync(join(tmpdir(), 'sef-'));
  const sefFile = join(tmp, 'schematron.sef.json');
  const started = Date.now();
  let compiled = join(dir, xsl);
  const patch = PATCHES[profile];
  if (patch) {
    const [patched, count] = patch.apply(readFileSync(compiled, 'utf8'));
    if (count !== patch.count) throw new Error(`${xsl}: ${count} places to patch, not ${patch.count}`);
    compiled = join(tmp, xsl);
    writeFileSync(compiled, patched);
  }
  execFileSync(
    join(ROOT, 'node_modules/.bin/xslt3'),
    [`-xsl:${compiled}`, `-export:${sefFile}`, '-nogo', '-relocate:on'],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const source = readFileSync(join(dir, xsl), 'utf8');
  const rules = source.split('<svrl:failed-assert').length - 1;
  const blob = {
    xsd: Object.fromEntries(
      files.filter((f) => f.endsWith('.xsd')).map((f) => [f, readFileSync(join(dir, f), 'utf8')]),
    ),
    codedb: readFileSync(join(dir, codedb), 'utf8'),
    sef: readFileSync(sefFile, 'utf8'),
  };
  rmSync(tmp, { recursive: true, force: true });
  const gz = gzipSync(JSON.stringify(blob), { level: 9 }).toString('base64');
  writeFileSync(
    join(OUT, `${profile}.ts`),
    `// Generated by bin/e-invoice-artefacts.ts from vendor/factur-x-1.09/${profile}/ (${xsl}): do not edit.\n` +
      `import type { ProfileArtefacts } from './artefact.js';\n\n` +
      `export const artefacts: ProfileArtefacts = {\n  source: '${xsl}',\n  mainXsd: '${main}',\n  codedb: '${codedb}',\n  rules: ${rules},\n  gz: '${gz}',\n};\n`,
  );
  console.log(`${profile}: ${rules} assertions, ${gz.length} base64 characters, ${Date.now() - started} ms`);
}
