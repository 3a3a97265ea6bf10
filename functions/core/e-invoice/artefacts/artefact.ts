/** One Factur-X profile's official artefacts, as bin/e-invoice-artefacts.ts writes them. */
export interface ProfileArtefacts {
  /** The schematron's XSLT the SEF was compiled from (vendor/factur-x-1.09/<profile>/). */
  readonly source: string;
  /** The XSD to validate against (it imports the others). */
  readonly mainXsd: string;
  /** The code list file the schematron reads with document(). */
  readonly codedb: string;
  /** The schematron's assertions: every one is evaluated where its context exists. */
  readonly rules: number;
  /** gzip, base64: JSON {xsd: {file: text}, codedb: text, sef: SaxonJS's compiled stylesheet}. */
  readonly gz: string;
}

/**
 * A CIUS's own schematron on top of a profile's (XRechnung's on EN 16931's), as
 * bin/e-invoice-artefacts.ts writes it: its XSD and EN 16931 rules are the profile's.
 */
export interface CiusArtefacts {
  /** The schematron and version the SEF was built from (vendor/). */
  readonly source: string;
  /** Its assertions (with the Peppol rules merged in). */
  readonly rules: number;
  /** gzip, base64: JSON {sef: SaxonJS's compiled stylesheet}. */
  readonly gz: string;
}
