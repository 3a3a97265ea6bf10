/**
 * A printed PDF made into a PDF/A-2b or PDF/A-3b (ISO 19005-2/-3, level B: the look is preserved),
 * as far as the structure goes: what the standard asks of a file that Chromium does not already
 * give, written with @cantoo/pdf-lib (a maintained fork of pdf-lib, MIT) over the whole file.
 *
 * What Chromium (Skia) gives already, and is checked rather than trusted: every font embedded (a
 * subset, CID TrueType), no encryption, no JavaScript. What is added or rewritten:
 * - an output intent (GTS_PDFA1) with the sRGB ICC profile (icc/srgb.ts), as Chromium paints in sRGB;
 * - XMP metadata with pdfaid:part and pdfaid:conformance, mirroring the document information
 *   (title, author, subject, keywords, creator, producer, dates) as the standard requires;
 * - the print flag on every annotation (Chromium's link annotations have none), hidden flags off;
 * - a trailer /ID;
 * - JavaScript and launch actions removed wherever an action may sit (none in Chromium's output).
 * A font without its program is refused (the step fails with a message naming the font): it
 * cannot be embedded after the fact. Tags (StructTreeRoot, MarkInfo) and outlines are kept: the
 * whole object graph is carried over.
 *
 * Not done here: a conformance check of the content streams (veraPDF's job; none runs here).
 */
import { createHash } from 'node:crypto';
import {
  PDFArray,
  PDFDict,
  type PDFDocument,
  PDFHexString,
  PDFName,
  PDFNumber,
  type PDFObject,
  PDFRef,
} from '@cantoo/pdf-lib';
import { SRGB_ICC_BASE64 } from './icc/srgb.js';

export type PdfAPart = 2 | 3;

/** The Factur-X / ZUGFeRD XMP extension schema's values (Factur-X 1.0.7, §A.2.2). */
export interface FacturXXmp {
  /** urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0# (Factur-X) or the ZUGFeRD / XRechnung one. */
  readonly namespace: string;
  readonly prefix: string;
  readonly documentFileName: string;
  readonly conformanceLevel: string;
  readonly version: string;
}

const xmlEscape = (value: string): string => value.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

const isoDate = (date: Date | undefined): string | undefined =>
  date ? date.toISOString().replace(/\.\d{3}Z$/, 'Z') : undefined;

/** The document information dictionary's fields, as the XMP mirrors them. */
interface Info {
  readonly title?: string;
  readonly author?: string;
  readonly subject?: string;
  readonly keywords?: string;
  readonly creator?: string;
  readonly producer?: string;
  readonly created?: Date;
  readonly modified?: Date;
}

const infoOf = (doc: PDFDocument): Info => {
  const read = <T>(get: () => T | undefined): T | undefined => {
    try {
      return get();
    } catch {
      return undefined; // a value of another type than the reader expects: not mirrored
    }
  };
  return {
    title: read(() => doc.getTitle()),
    author: read(() => doc.getAuthor()),
    subject: read(() => doc.getSubject()),
    keywords: read(() => doc.getKeywords()),
    creator: read(() => doc.getCreator()),
    producer: read(() => doc.getProducer()),
    created: read(() => doc.getCreationDate()),
    modified: read(() => doc.getModificationDate()),
  };
};

const facturXExtension = (fx: FacturXXmp): string => `
  <rdf:Description rdf:about="" xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/" xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#" xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">
   <pdfaExtension:schemas>
    <rdf:Bag>
     <rdf:li rdf:parseType="Resource">
      <pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>
      <pdfaSchema:namespaceURI>${xmlEscape(fx.namespace)}</pdfaSchema:namespaceURI>
      <pdfaSchema:prefix>${fx.prefix}</pdfaSchema:prefix>
      <pdfaSchema:property>
       <rdf:Seq>
        <rdf:li rdf:parseType="Resource"><pdfaProperty:name>DocumentFileName</pdfaProperty:name><pdfaProperty:valueType>Text</pdfaProperty:valueType><pdfaProperty:category>external</pdfaProperty:category><pdfaProperty:description>The name of the embedded XML document</pdfaProperty:description></rdf:li>
        <rdf:li rdf:parseType="Resource"><pdfaProperty:name>DocumentType</pdfaProperty:name><pdfaProperty:valueType>Text</pdfaProperty:valueType><pdfaProperty:category>external</pdfaProperty:category><pdfaProperty:description>The type of the hybrid document in capital letters, e.g. INVOICE or ORDER</pdfaProperty:description></rdf:li>
        <rdf:li rdf:parseType="Resource"><pdfaProperty:name>Version</pdfaProperty:name><pdfaProperty:valueType>Text</pdfaProperty:valueType><pdfaProperty:category>external</pdfaProperty:category><pdfaProperty:description>The actual version of the standard applying to the embedded XML document</pdfaProperty:description></rdf:li>
        <rdf:li rdf:parseType="Resource"><pdfaProperty:name>ConformanceLevel</pdfaProperty:name><pdfaProperty:valueType>Text</pdfaProperty:valueType><pdfaProperty:category>external</pdfaProperty:category><pdfaProperty:description>The conformance level of the embedded XML document</pdfaProperty:description></rdf:li>
       </rdf:Seq>
      </pdfaSchema:property>
     </rdf:li>
    </rdf:Bag>
   </pdfaExtension:schemas>
  </rdf:Description>
  <rdf:Description rdf:about="" xmlns:${fx.prefix}="${xmlEscape(fx.namespace)}">
   <${fx.prefix}:DocumentType>INVOICE</${fx.prefix}:DocumentType>
   <${fx.prefix}:DocumentFileName>${xmlEscape(fx.documentFileName)}</${fx.prefix}:DocumentFileName>
   <${fx.prefix}:Version>${xmlEscape(fx.version)}</${fx.prefix}:Version>
   <${fx.prefix}:ConformanceLevel>${xmlEscape(fx.conformanceLevel)}</${fx.prefix}:ConformanceLevel>
  </rdf:Description>`;

/** The XMP packet: PDF/A identification, the document information mirrored, and Factur-X's when given. */
export const xmpPacket = (part: PdfAPart, info: Info, facturX?: FacturXXmp): string => {
  const optional = (tag: string, value: string | undefined) =>
    value === undefined || value === '' ? '' : `\n   <${tag}>${xmlEscape(value)}</${tag.split(' ')[0]}>`;
  const alt = (tag: string, value: string | undefined) =>
    value === undefined || value === ''
      ? ''
      : `\n   <${tag}><rdf:Alt><rdf:li xml:lang="x-default">${xmlEscape(value)}</rdf:li></rdf:Alt></${tag}>`;
  const creator =
    info.author === undefined || info.author === ''
      ? ''
      : `\n   <dc:creator><rdf:Seq><rdf:li>${xmlEscape(info.author)}</rdf:li></rdf:Seq></dc:creator>`;
  return `<?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/">
   <pdfaid:part>${part}</pdfaid:part>
   <pdfaid:conformance>B</pdfaid:conformance>
  </rdf:Description>
  <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">
   <dc:format>application/pdf</dc:format>${alt('dc:title', info.title)}${creator}${alt('dc:description', info.subject)}
  </rdf:Description>
  <rdf:Description rdf:about="" xmlns:pdf="http://ns.adobe.com/pdf/1.3/">${optional('pdf:Producer', info.producer)}${optional('pdf:Keywords', info.keywords)}
  </rdf:Description>
  <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/">${optional('xmp:CreatorTool', info.creator)}${optional('xmp:CreateDate', isoDate(info.created))}${optional('xmp:ModifyDate', isoDate(info.modified))}${optional('xmp:MetadataDate', isoDate(info.modified ?? info.created))}
  </rdf:Description>${facturX ? facturXExtension(facturX) : ''}
 </rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>`;
};

/** Sets the catalog's XMP metadata stream (uncompressed, as PDF/A wants it readable). */
export const setXmp = (doc: PDFDocument, part: PdfAPart, facturX?: FacturXXmp): void => {
  const bytes = new TextEncoder().encode(xmpPacket(part, infoOf(doc), facturX));
  const stream = doc.context.stream(bytes, { Type: 'Metadata', Subtype: 'XML', Length: bytes.length });
  doc.catalog.set(PDFName.of('Metadata'), doc.context.register(stream));
};

const ACTION_KEYS = ['A', 'AA', 'OpenAction'] as const;
const FORBIDDEN_ACTIONS = new Set(['JavaScript', 'Launch', 'ImportData', 'ResetForm', 'Sound', 'Movie']);

const lookupDict = (doc: PDFDocument, value: PDFObject | undefined): PDFDict | undefined => {
  const resolved = value instanceof PDFRef ? doc.context.lookup(value) : value;
  return resolved instanceof PDFDict ? resolved : undefined;
};

/** An action (or additional-actions dictionary) PDF/A forbids: JavaScript, launch and the like. */
const forbiddenAction = (doc: PDFDocument, action: PDFDict): boolean => {
  const kind = action.get(PDFName.of('S'));
  if (kind instanceof PDFName && FORBIDDEN_ACTIONS.has(kind.decodeText())) return true;
  // An additional-actions dictionary (/AA) holds actions by event; a /Next chain holds more.
  for (const [, value] of action.entries()) {
    const inner = lookupDict(doc, value);
    if (inner && inner !== action && inner.has(PDFName.of('S')) && forbiddenAction(doc, inner)) return true;
  }
  return false;
};

/** Removes JavaScript, launch and other forbidden actions from a dictionary's action keys. */
const dropForbiddenActions = (doc: PDFDocument, dict: PDFDict): number => {
  let dropped = 0;
  for (const key of ACTION_KEYS) {
    const action = lookupDict(doc, dict.get(PDFName.of(key)));
    if (key === 'AA' && action) {
      dict.delete(PDFName.of('AA')); // PDF/A-2 forbids additional actions outright (6.6.2)
      dropped++;
    } else if (action && forbiddenAction(doc, action)) {
      dict.delete(PDFName.of(key));
      dropped++;
    }
  }
  return dropped;
};

/** Annotation flags (PDF 1.7, 12.5.3): Invisible 1, Hidden 2, Print 4, NoView 32. */
const PRINT = 4;
const HIDING = 1 | 2 | 32;

/** Every annotation printable and visible (6.3.2), and no forbidden action on it or its page. */
const fixPages = (doc: PDFDocument): { annotations: number; actions: number } => {
  let annotations = 0;
  let actions = 0;
  for (const page of doc.getPages()) {
    actions += dropForbiddenActions(doc, page.node);
    const annots = page.node.lookupMaybe(PDFName.of('Annots'), PDFArray);
    if (!annots) continue;
    for (let i = 0; i < annots.size(); i++) {
      const annot = lookupDict(doc, annots.get(i));
      if (!annot) continue;
      const flags = annot.get(PDFName.of('F'));
      const current = flags instanceof PDFNumber ? flags.asNumber() : 0;
      annot.set(PDFName.of('F'), PDFNumber.of((current | PRINT) & ~HIDING));
      actions += dropForbiddenActions(doc, annot);
      annotations++;
    }
  }
  return { annotations, actions };
};

/** The document-level JavaScript name tree, and the catalog's open and additional actions. */
const fixCatalog = (doc: PDFDocument): number => {
  let dropped = dropForbiddenActions(doc, doc.catalog);
  const names = doc.catalog.lookupMaybe(PDFName.of('Names'), PDFDict);
  if (names?.has(PDFName.of('JavaScript'))) {
    names.delete(PDFName.of('JavaScript'));
    dropped++;
  }
  return dropped;
};

const FONT_FILES = ['FontFile', 'FontFile2', 'FontFile3'].map((key) => PDFName.of(key));

/** The name of a font whose program is not in the file (Type3 fonts are drawn, not embedded). */
const unembeddedFont = (doc: PDFDocument): string | undefined => {
  for (const [, object] of doc.context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFDict)) continue;
    if (object.get(PDFName.of('Type'))?.toString() !== '/FontDescriptor') continue;
    if (!FONT_FILES.some((key) => object.has(key))) {
      return object.get(PDFName.of('FontName'))?.toString().replace(/^\//, '') ?? 'a font';
    }
  }
  return undefined;
};

/** The sRGB output intent (6.2.3), replacing any other. */
const setOutputIntent = (doc: PDFDocument): void => {
  const profile = Buffer.from(SRGB_ICC_BASE64, 'base64');
  const stream = doc.context.flateStream(profile, { N: 3 });
  const intent = doc.context.obj({
    Type: 'OutputIntent',
    S: 'GTS_PDFA1',
    OutputConditionIdentifier: PDFHexString.fromText('sRGB IEC61966-2.1'),
    Info: PDFHexString.fromText('sRGB IEC61966-2.1'),
    DestOutputProfile: doc.context.register(stream),
  });
  doc.catalog.set(PDFName.of('OutputIntents'), doc.context.obj([doc.context.register(intent)]));
};

/** The trailer's /ID (6.1.3): two equal hashes of the printed bytes, as a new file has. */
const setTrailerId = (doc: PDFDocument, printed: Uint8Array): void => {
  const id = PDFHexString.of(createHash('md5').update(printed).digest('hex').toUpperCase());
  doc.context.trailerInfo.ID = doc.context.obj([id, id]);
};

export type PdfAOutcome =
  | { readonly ok: true; readonly annotations: number; readonly actionsRemoved: number }
  | { readonly ok: false; readonly message: string };

/**
 * Makes the loaded document a PDF/A of `part`, level B, in place. Refuses (the message says why)
 * a file that cannot become one: encrypted, or with a font not embedded.
 */
export const makePdfA = (doc: PDFDocument, printed: Uint8Array, part: PdfAPart): PdfAOutcome => {
  if (doc.isEncrypted) return { ok: false, message: 'pdf_a: the PDF is encrypted, which PDF/A forbids' };
  const font = unembeddedFont(doc);
  if (font !== undefined)
    return { ok: false, message: `pdf_a: the font ${font} is not embedded, which PDF/A forbids` };
  const actionsRemoved = fixCatalog(doc);
  const pages = fixPages(doc);
  setOutputIntent(doc);
  setXmp(doc, part);
  setTrailerId(doc, printed);
  return { ok: true, annotations: pages.annotations, actionsRemoved: actionsRemoved + pages.actions };
};
