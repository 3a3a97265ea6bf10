/**
 * The e-invoice checker (domain/renders/e-invoice.ts's port): a Cross Industry Invoice validated
 * against the official Factur-X 1.09 artefacts of its profile (vendor/factur-x-1.09/, compiled by
 * bin/e-invoice-artefacts.ts): first the XSD, with libxml2 in WebAssembly (libxml2-wasm), then
 * the schematron (the EN 16931 business rules and the profile's own), with SaxonJS running the
 * schematron's XSLT. No Java, no network, no files: the artefacts are in the bundle. For
 * xrechnung-cii, KoSIT's XRechnung schematron (vendor/xrechnung-schematron-2.5.0/) runs after the
 * EN 16931 profile's, the same way.
 *
 * Why libxml2-wasm rather than xmllint-wasm: it runs in the calling thread with the schema
 * compiled once (measured, the EN 16931 XSD: 25 ms to compile, under 1-30 ms per invoice), where
 * xmllint-wasm starts a worker thread from a file beside its own and compiles the schema on every
 * call (200-800 ms per invoice on 2 busy cores), and a bundle holds no such file.
 *
 * SaxonJS and a profile's artefacts are imported on the first invoice (of the profile), so that the
 * pdf function's cold start does not run them; libxml2-wasm is imported with the module: its own
 * module starts its WebAssembly with a top-level await, which never settles when esbuild's bundle
 * initializes it lazily from a dynamic import (Node.js exits 13 on the first e-invoice; measured,
 * a lazy import would save 18 MiB and some 15 ms of CPU at cold start). A profile's artefacts are
 * unpacked on its first invoice and kept for the life of the process.
 */
import { gunzipSync } from 'node:zlib';
import type { XmlBufferInputProvider, XmlDocument, XsdValidator } from 'libxml2-wasm';
import * as libxml2Wasm from 'libxml2-wasm';
import type SaxonJSType from 'saxon-js';
import type {
  EInvoiceCheck,
  EInvoiceChecker,
  EInvoiceProfile,
  EInvoiceStandard,
  RuleFailure,
} from '../../domain/renders/e-invoice.js';
import type { CiusArtefacts, ProfileArtefacts } from './artefacts/artefact.js';
import { buildCii } from './build.js';

type ArtefactDir = 'minimum' | 'basicwl' | 'basic' | 'en16931' | 'extended';

const DIRECTORY: Readonly<Record<EInvoiceProfile, ArtefactDir>> = {
  minimum: 'minimum',
  'basic-wl': 'basicwl',
  basic: 'basic',
  en16931: 'en16931',
  extended: 'extended',
};

const LOADERS: Readonly<Record<ArtefactDir, () => Promise<{ artefacts: ProfileArtefacts }>>> = {
  minimum: () => import('./artefacts/minimum.js'),
  basicwl: () => import('./artefacts/basicwl.js'),
  basic: () => import('./artefacts/basic.js'),
  en16931: () => import('./artefacts/en16931.js'),
  extended: () => import('./artefacts/extended.js'),
};

/**
 * SaxonJS 2, loaded on the first invoice. It assigns two undeclared globals as it loads, which
 * strict mode (every ES module bundle: the Lambdas', the local stack's) refuses with a
 * ReferenceError: they are declared first. Loaded late, it costs a render without e-invoice nothing.
 */
let saxon: Promise<typeof SaxonJSType> | undefined;
const saxonJs = (): Promise<typeof SaxonJSType> => {
  const globals = globalThis as Record<string, unknown>;
  for (const name of ['abstractNode', 'HostPlatform']) if (!(name in globals)) globals[name] = undefined;
  saxon ??= import('saxon-js').then((m) => m.default);
  return saxon;
};

type LibXml2 = typeof libxml2Wasm;
const libXml2 = async (): Promise<LibXml2> => libxml2Wasm;

interface Loaded {
  readonly lib: LibXml2;
  readonly xsd: XsdValidator;
  readonly rules: number;
  /** The schematron's compiled XSLT and its code lists, with SaxonJS: loaded on the first check that runs it. */
  readonly schematron: () => Promise<Schematron>;
}

interface Schematron {
  readonly sef: unknown;
  readonly baseUri: string;
  readonly pool: Record<string, unknown>;
}

interface Blob {
  readonly xsd: Record<string, string>;
  readonly codedb: string;
  readonly sef: string;
}

/** One input provider for every profile's XSD files, each under its own directory. */
let xsdFiles: XmlBufferInputProvider | undefined;
let providerRegistered = false;

const load = async (dir: ArtefactDir): Promise<Loaded> => {
  const [{ artefacts }, lib] = await Promise.all([LOADERS[dir](), libXml2()]);
  const { XmlBufferInputProvider, XmlDocument, XsdValidator, xmlRegisterInputProvider } = lib;
  const blob = JSON.parse(gunzipSync(Buffer.from(artefacts.gz, 'base64')).toString('utf8')) as Blob;
  xsdFiles ??= new XmlBufferInputProvider({});
  const files = xsdFiles;
  if (!providerRegistered) providerRegistered = xmlRegisterInputProvider(files);
  for (const [name, text] of Object.entries(blob.xsd))
    files.addBuffer(`/factur-x/${dir}/${name}`, new TextEncoder().encode(text));
  const main = `/factur-x/${dir}/${artefacts.mainXsd}`;
  const schema = XmlDocument.fromString(blob.xsd[artefacts.mainXsd] ?? '', { url: main });
  const xsd = XsdValidator.fromDoc(schema);
  const baseUri = `file:///factur-x/${dir}/`;
  let schematron: Promise<Schematron> | undefined;
  const loadSchematron = async (): Promise<Schematron> => {
    const codedb = await (await saxonJs()).getResource({ text: blob.codedb, type: 'xml' });
    return { sef: JSON.parse(blob.sef), baseUri, pool: { [`${baseUri}${artefacts.codedb}`]: codedb } };
  };
  return {
    lib,
    xsd,
    rules: artefacts.rules,
    schematron: () => {
      schematron ??= loadSchematron();
      schematron.catch(() => {
        schematron = undefined;
      });
      return schematron;
    },
  };
};

const loaded = new Map<ArtefactDir, Promise<Loaded>>();
const artefactsOf = (profile: EInvoiceProfile): Promise<Loaded> => {
  const dir = DIRECTORY[profile];
  let entry = loaded.get(dir);
  if (!entry) {
    entry = load(dir);
    entry.catch(() => loaded.delete(dir));
    loaded.set(dir, entry);
  }
  return entry;
};

/** A DOCTYPE brings entities and external loads; an invoice never has one. */
const DOCTYPE = /<!DOCTYPE|<!ENTITY/i;

const xsdFailures = (xml: string, { lib, xsd: validator }: Loaded): RuleFailure[] => {
  const { XmlDocument, XmlLibError, XmlValidateError } = lib;
  let doc: XmlDocument;
  try {
    doc = XmlDocument.fromString(xml);
  } catch (e) {
    if (!(e instanceof XmlLibError)) throw e;
    return e.details.map((d) => ({
      rule: 'XML',
      message: `not well-formed XML: ${d.message.trim()}`,
      location: `line ${d.line}`,
    }));
  }
  try {
    validator.validate(doc);
    return [];
  } catch (e) {
    if (!(e instanceof XmlValidateError)) throw e;
    return e.details.map((d) => ({ rule: 'XSD', message: d.message.trim(), location: `line ${d.line}` }));
  } finally {
    doc.dispose();
  }
};

interface SvrlFailure {
  readonly id: string;
  readonly flag: string;
  readonly location: string;
  readonly text: string;
}

const SVRL = 'http://purl.oclc.org/dsdl/svrl';

/**
 * Failed assertions of the schematron (warnings are not failures: the invoice may still go), and
 * the warnings whose ids are in `errors`.
 */
const schematronFailures = async (
  xml: string,
  artefacts: Schematron,
  errors: readonly string[] = [],
): Promise<RuleFailure[]> => {
  const SaxonJS = await saxonJs();
  const { principalResult } = await SaxonJS.transform(
    {
      stylesheetInternal: artefacts.sef,
      stylesheetBaseURI: artefacts.baseUri,
      documentPool: artefacts.pool,
      sourceText: xml,
      destination: 'document',
    },
    'async',
  );
  const found = SaxonJS.XPath.evaluate(
    "array { //svrl:failed-assert ! map { 'id': string(@id), 'flag': string(@flag), 'location': string(@location), 'text': normalize-space(svrl:text) } }",
    principalResult,
    { namespaceContext: { svrl: SVRL } },
  ) as SvrlFailure[];
  return found
    .filter((f) => (f.flag !== 'warning' && f.flag !== 'information') || errors.includes(f.id))
    .map((f) => {
      // The Factur-X schematron names the EN 16931 rule in its text: "[BR-CO-10]-Sum of ...".
      // EXTENDED's code-list assertions name none ("Value of 'ram:CountryID' is not allowed."):
      // SCHEMATRON, their location says where.
      const named = /^\[([^\]]+)\]\s*-?\s*(.*)$/s.exec(f.text);
      return {
        rule: named?.[1] ?? (f.id || 'SCHEMATRON'),
        message: named?.[2] ?? f.text,
        location: f.location.replace(/\[namespace-uri\(\)='[^']*'\]/g, ''),
      };
    });
};

/**
 * What the XML breaks of its form: a DOCTYPE, well-formedness, the profile's XSD (libxml2, a few
 * milliseconds); the schematron's business rules are not run. The first stage of checkCii, and
 * all the memory checker does (adapters/memory/e-invoice.ts).
 */
export const structuralFailures = async (xml: string, profile: EInvoiceProfile): Promise<RuleFailure[]> => {
  const artefacts = await artefactsOf(profile);
  if (DOCTYPE.test(xml)) {
    return [{ rule: 'XML', message: 'must not declare a DOCTYPE or entities', location: 'line 1' }];
  }
  return xsdFailures(xml, artefacts);
};

/**
 * XRechnung's CIUS schematron (KoSIT's, with the Peppol rules it merges in; built by
 * bin/e-invoice-artefacts.ts from vendor/xrechnung-schematron-2.5.0/), loaded on the first
 * xrechnung-cii invoice and kept. It reads no code-list file: its lists are in its variables.
 */
let xrechnung: Promise<{ readonly rules: number; readonly schematron: Schematron }> | undefined;
const xrechnungArtefacts = (): Promise<{ readonly rules: number; readonly schematron: Schematron }> => {
  xrechnung ??= import('./artefacts/xrechnung.js').then(({ artefacts }: { artefacts: CiusArtefacts }) => {
    const { sef } = JSON.parse(gunzipSync(Buffer.from(artefacts.gz, 'base64')).toString('utf8')) as {
      sef: string;
    };
    return {
      rules: artefacts.rules,
      schematron: { sef: JSON.parse(sef), baseUri: 'file:///xrechnung/', pool: {} },
    };
  });
  xrechnung.catch(() => {
    xrechnung = undefined;
  });
  return xrechnung;
};

/**
 * Factur-X EN 16931's code-list assertion on BT-24 (FX-SCH-A-000026 on the guideline's ID) admits
 * only Factur-X's own identifier, urn:cen.eu:en16931:2017; an XRechnung invoice carries XRechnung's
 * (urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0), which XRechnung's BR-DE-21
 * checks instead. So for xrechnung-cii that one assertion is not counted (its id also names a
 * country-code assertion elsewhere: matched by location too).
 */
const facturXGuidelineAssertion = (f: RuleFailure): boolean =>
  f.rule === 'FX-SCH-A-000026' && f.location.includes('GuidelineSpecifiedDocumentContextParameter');

/**
 * BR-DE-21 (BT-24 is XRechnung's identifier) is a warning in KoSIT's schematron, so that a plain
 * EN 16931 invoice may still be received; here it is a failure: the XML is embedded as ZUGFeRD's
 * XRECHNUNG profile, whose invoices carry XRechnung's identifier.
 */
const XRECHNUNG_ERRORS = ['BR-DE-21'];

/** SchXslt writes locations with Q{namespace}name steps; the Factur-X schematron's read *:name. */
const plainLocation = (f: RuleFailure): RuleFailure => ({
  ...f,
  location: f.location.replace(/Q\{[^}]*\}/g, '*:'),
});

/**
 * The XSD and schematron of the profile; for `xrechnung-cii` (profile en16931), XRechnung's CIUS
 * rules (BR-DE-*, and Peppol's PEPPOL-EN16931-R* it merges in) as well, after EN 16931's: every
 * failure of both is listed, and the rules checked are both schematrons' assertions (less the one
 * facturXGuidelineAssertion replaces).
 */
export const checkCii = async (
  xml: string,
  profile: EInvoiceProfile,
  standard: EInvoiceStandard = 'factur-x',
): Promise<EInvoiceCheck> => {
  const structural = await structuralFailures(xml, profile);
  if (structural.length > 0) return { valid: false, rulesChecked: 0, failures: structural };
  const artefacts = await artefactsOf(profile);
  let failures = await schematronFailures(xml, await artefacts.schematron());
  let rules = artefacts.rules;
  if (standard === 'xrechnung-cii') {
    const cius = await xrechnungArtefacts();
    failures = [
      ...failures.filter((f) => !facturXGuidelineAssertion(f)),
      ...(await schematronFailures(xml, cius.schematron, XRECHNUNG_ERRORS)).map(plainLocation),
    ];
    rules += cius.rules - 1;
  }
  return failures.length > 0
    ? { valid: false, rulesChecked: rules, failures }
    : { valid: true, rulesChecked: rules };
};

export const eInvoiceChecker: EInvoiceChecker = { check: checkCii, build: buildCii };
