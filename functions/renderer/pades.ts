/**
 * A PAdES baseline B-B signature (ETSI EN 319 142-1) on a finished PDF, issue 34: a signature
 * dictionary (SubFilter ETSI.CAdES.detached, /M the signing time) appended by an incremental
 * update with a /Contents placeholder (made with @cantoo/pdf-lib as @signpdf/placeholder-pdf-lib
 * makes it with pdf-lib; @signpdf/placeholder-plain would bring pdfkit 0.10 and crypto-js 3),
 * then a detached CMS SignedData
 * over the byte ranges around it (@signpdf/signpdf) whose signed attributes are what B-B asks:
 * content-type, message-digest and ESS signing-certificate-v2 (no signing-time: the time is /M).
 * The CMS is built with PKI.js; the signature value comes from a `Signer` port, so the private key
 * can stay where it lives (an uploaded key opened in memory, or AWS KMS asked to sign the hash
 * of the signed attributes, never the document).
 *
 * Measured (issue 34, 2 busy cores): 49 ms for the one-page invoice with an RSA-2048 key, most of
 * it the RSA signature and PKI.js's first use; pdfsig reports it valid, and "Digest Mismatch"
 * after one byte of a signed range is changed. Bundle: PKI.js, asn1js and @signpdf/* (MIT,
 * BSD-3-Clause).
 *
 * The render option `signature` (finishing/signature.ts) signs with it; a visible signature's
 * box is the widget's appearance stream, its text in the service's own font (embedded, so that a
 * PDF/A stays one).
 */
import { createHash, createPrivateKey, sign as signWithKey, X509Certificate } from 'node:crypto';
import fontkit from '@cantoo/fontkit';
import {
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFInvalidObject,
  PDFName,
  PDFNumber,
  PDFRef,
  PDFString,
} from '@cantoo/pdf-lib';
import { SignPdf } from '@signpdf/signpdf';
import {
  ANNOTATION_FLAGS,
  DEFAULT_BYTE_RANGE_PLACEHOLDER,
  SIG_FLAGS,
  Signer as SignPdfSigner,
  SUBFILTER_ETSI_CADES_DETACHED,
} from '@signpdf/utils';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

import type { Signer } from '../domain/renders/signer.js';

/** What signs: the port (domain/renders/signer.ts). */
export type { Signer };

/** The DER certificates of a PEM chain, in its order. */
export const certificatesOfPem = (certificateChainPem: string): Uint8Array[] =>
  [...certificateChainPem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)].map(
    ([pem]) => new Uint8Array(new X509Certificate(pem).raw),
  );

/** A signer over a key held in memory: an uploaded PEM key and its certificate chain. */
export const pemSigner = (privateKeyPem: string, certificateChainPem: string): Signer => {
  const key = createPrivateKey(privateKeyPem);
  const certificates = certificatesOfPem(certificateChainPem);
  const algorithm = key.asymmetricKeyType === 'ec' ? 'ECDSA' : 'RSA';
  return {
    certificates,
    algorithm,
    // ECDSA as DER (the CMS form); RSA PKCS#1 v1.5.
    sign: async (data) => new Uint8Array(signWithKey('sha256', data, { key, dsaEncoding: 'der' })),
  };
};

const OID = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha256WithRsa: '1.2.840.113549.1.1.11',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
} as const;

const sha256 = (bytes: Uint8Array): Uint8Array => new Uint8Array(createHash('sha256').update(bytes).digest());

/** ESS SigningCertificateV2 (RFC 5035) naming the signer's certificate by its SHA-256 and issuer/serial. */
const signingCertificateV2 = (certificate: pkijs.Certificate, der: Uint8Array) =>
  new asn1js.Sequence({
    value: [
      new asn1js.Sequence({
        value: [
          new asn1js.Sequence({
            value: [
              new asn1js.OctetString({ valueHex: sha256(der) }),
              new asn1js.Sequence({
                value: [
                  new asn1js.Sequence({
                    // GeneralName directoryName [4]
                    value: [
                      new asn1js.Constructed({
                        idBlock: { tagClass: 3, tagNumber: 4 },
                        value: [certificate.issuer.toSchema()],
                      }),
                    ],
                  }),
                  certificate.serialNumber,
                ],
              }),
            ],
          }),
        ],
      }),
    ],
  });

/** The detached CMS SignedData of `content` (the PDF's signed byte ranges), PAdES B-B's attributes. */
export const cadesDetached = async (content: Uint8Array, signer: Signer): Promise<Uint8Array> => {
  const [leafDer] = signer.certificates;
  if (!leafDer) throw new Error('a signer needs its certificate');
  const chain = signer.certificates.map((der) => pkijs.Certificate.fromBER(der));
  const leaf = chain[0] as pkijs.Certificate;
  const signedAttrs = new pkijs.SignedAndUnsignedAttributes({
    type: 0,
    attributes: [
      new pkijs.Attribute({
        type: OID.contentType,
        values: [new asn1js.ObjectIdentifier({ value: OID.data })],
      }),
      new pkijs.Attribute({
        type: OID.messageDigest,
        values: [new asn1js.OctetString({ valueHex: sha256(content) })],
      }),
      new pkijs.Attribute({ type: OID.signingCertificateV2, values: [signingCertificateV2(leaf, leafDer)] }),
    ],
  });
  // What is signed is the attributes' DER as a SET OF (tag 0x31), not as the [0] they are stored as.
  const toSign = new Uint8Array(signedAttrs.toSchema().toBER(false));
  toSign[0] = 0x31;
  const signatureValue = await signer.sign(toSign);
  const signerInfo = new pkijs.SignerInfo({
    version: 1,
    sid: new pkijs.IssuerAndSerialNumber({ issuer: leaf.issuer, serialNumber: leaf.serialNumber }),
    signedAttrs,
    digestAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }),
    signatureAlgorithm:
      signer.algorithm === 'RSA'
        ? new pkijs.AlgorithmIdentifier({
            algorithmId: OID.sha256WithRsa,
            algorithmParams: new asn1js.Null(),
          })
        : new pkijs.AlgorithmIdentifier({ algorithmId: OID.ecdsaWithSha256 }),
    signature: new asn1js.OctetString({ valueHex: signatureValue }),
  });
  const signedData = new pkijs.SignedData({
    version: 1,
    encapContentInfo: new pkijs.EncapsulatedContentInfo({ eContentType: OID.data }),
    digestAlgorithms: [new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 })],
    certificates: chain,
    signerInfos: [signerInfo],
  });
  const contentInfo = new pkijs.ContentInfo({
    contentType: OID.signedData,
    content: signedData.toSchema(true),
  });
  return new Uint8Array(contentInfo.toSchema().toBER(false));
};

export interface SignatureFields {
  readonly reason?: string;
  readonly location?: string;
  readonly contact?: string;
  /** The signing time written as /M. */
  readonly signingTime: Date;
  /** Absent: an invisible signature (a widget of no size on the first page). */
  readonly appearance?: VisibleSignature;
}

/** A visible signature: a box on a page (points from its top-left corner) showing `lines`. */
export interface VisibleSignature {
  /** 0-based. */
  readonly pageIndex: number;
  readonly box: { readonly x: number; readonly y: number; readonly width: number; readonly height: number };
  readonly lines: readonly string[];
  /** A TrueType or OpenType font, embedded as a subset. */
  readonly font: Uint8Array;
}

/** A visible signature's page is past the document's last. */
export class SignaturePageError extends Error {
  constructor(readonly pages: number) {
    super(`the PDF has ${pages} pages`);
    this.name = 'SignaturePageError';
  }
}

/** The widget's normal appearance: a thin frame and the lines, as large as fits (at most 10 pt). */
const appearanceStream = async (document: PDFDocument, visible: VisibleSignature): Promise<PDFRef> => {
  document.registerFontkit(fontkit);
  const font = await document.embedFont(visible.font, { subset: true });
  const { width, height } = visible.box;
  const pad = 4;
  const widest = Math.max(1, ...visible.lines.map((line) => font.widthOfTextAtSize(line, 1)));
  const size = Math.max(
    1,
    Math.min(10, (height - 2 * pad) / (visible.lines.length * 1.2), (width - 2 * pad) / widest),
  );
  const text = visible.lines
    .map(
      (line, i) =>
        `1 0 0 1 ${pad} ${(height - pad - size * (1.2 * i + 1)).toFixed(2)} Tm ${font.encodeText(line).toString()} Tj`,
    )
    .join('\n');
  const content = `q 0.25 0.25 0.25 RG 0.75 w 0.5 0.5 ${width - 1} ${height - 1} re S Q\nBT 0.1 0.1 0.1 rg /F1 ${size.toFixed(2)} Tf\n${text}\nET`;
  const stream = document.context.stream(content, {
    Type: 'XObject',
    Subtype: 'Form',
    BBox: [0, 0, width, height],
    Resources: { Font: { F1: font.ref } },
  });
  return document.context.register(stream);
};

/** Room for the CMS in /Contents: the chain, the attributes and the signature, with a margin. */
const placeholderBytes = (signer: Signer): number =>
  4096 + signer.certificates.reduce((sum, c) => sum + c.byteLength, 0) * 2;

/**
 * The PDF with an invisible signature field on its first page whose value is a signature
 * dictionary with placeholders (/ByteRange, /Contents) for @signpdf to fill: an incremental
 * update of the catalog, the page, the form and the new objects.
 */
const withPlaceholder = async (
  pdf: Uint8Array,
  fields: SignatureFields & { readonly name: string; readonly length: number },
): Promise<Buffer> => {
  const document = await PDFDocument.load(pdf, { updateMetadata: false });
  const increment = document.takeSnapshot();
  const { context, catalog } = document;
  const visible = fields.appearance;
  if (visible && visible.pageIndex >= document.getPageCount()) {
    throw new SignaturePageError(document.getPageCount());
  }
  const page = document.getPage(visible?.pageIndex ?? 0);
  let rect = [0, 0, 0, 0];
  if (visible) {
    // From the top-left corner the caller gives to PDF's bottom-left, on the page's visible box.
    const { x: left, y: bottom, height: pageHeight } = page.getCropBox();
    const { x, y, width, height } = visible.box;
    rect = [left + x, bottom + pageHeight - y - height, left + x + width, bottom + pageHeight - y];
  }
  const appearance = visible ? await appearanceStream(document, visible) : undefined;
  const byteRange = PDFArray.withContext(context);
  byteRange.push(PDFNumber.of(0));
  for (let i = 0; i < 3; i++) byteRange.push(PDFName.of(DEFAULT_BYTE_RANGE_PLACEHOLDER));
  const signature = context.obj({
    Type: 'Sig',
    Filter: 'Adobe.PPKLite',
    SubFilter: SUBFILTER_ETSI_CADES_DETACHED,
    ByteRange: byteRange,
    Contents: PDFHexString.of('0'.repeat(fields.length * 2)),
    Reason: PDFString.of(fields.reason ?? ''),
    M: PDFString.fromDate(fields.signingTime),
    ContactInfo: PDFString.of(fields.contact ?? ''),
    Name: PDFString.of(fields.name),
    Location: PDFString.of(fields.location ?? ''),
  });
  // Written as the bytes it is now: never put in an object stream, never reformatted.
  const bytes = new Uint8Array(signature.sizeInBytes());
  signature.copyBytesInto(bytes, 0);
  const signatureRef = context.register(PDFInvalidObject.of(bytes));
  const widget = context.register(
    context.obj({
      Type: 'Annot',
      Subtype: 'Widget',
      FT: 'Sig',
      Rect: rect,
      ...(appearance ? { AP: { N: appearance } } : {}),
      V: signatureRef,
      T: PDFString.of('Signature1'),
      F: ANNOTATION_FLAGS.PRINT,
      P: page.ref,
    }),
  );
  const annots = page.node.get(PDFName.of('Annots'));
  if (annots instanceof PDFRef) {
    context.lookup(annots, PDFArray).push(widget);
    increment.markRefForSave(annots);
  } else if (annots instanceof PDFArray) annots.push(widget);
  else page.node.set(PDFName.of('Annots'), context.obj([widget]));
  increment.markRefForSave(page.ref);
  const formRef = catalog.get(PDFName.of('AcroForm'));
  const form = formRef instanceof PDFRef ? context.lookup(formRef, PDFDict) : context.obj({ Fields: [] });
  form.lookup(PDFName.of('Fields'), PDFArray).push(widget);
  form.set(PDFName.of('SigFlags'), PDFNumber.of(SIG_FLAGS.SIGNATURES_EXIST | SIG_FLAGS.APPEND_ONLY));
  if (formRef instanceof PDFRef) increment.markRefForSave(formRef);
  else catalog.set(PDFName.of('AcroForm'), context.register(form));
  const root = context.trailerInfo.Root;
  if (root instanceof PDFRef) increment.markRefForSave(root);
  const appended = await document.saveIncremental(increment, { useObjectStreams: false });
  return Buffer.concat([pdf, appended]);
};

/** The PDF signed (PAdES B-B), by an incremental update after everything it already holds. */
export const signPades = async (
  pdf: Uint8Array,
  signer: Signer,
  fields: SignatureFields,
): Promise<Uint8Array> => {
  const name = new X509Certificate(Buffer.from(signer.certificates[0] ?? new Uint8Array())).subject
    .split('\n')
    .find((line) => line.startsWith('CN='))
    ?.slice(3);
  const prepared = await withPlaceholder(pdf, {
    ...fields,
    name: name ?? '',
    length: placeholderBytes(signer),
  });
  class PortSigner extends SignPdfSigner {
    override async sign(content: Buffer): Promise<Buffer> {
      return Buffer.from(await cadesDetached(new Uint8Array(content), signer));
    }
  }
  return new Uint8Array(await new SignPdf().sign(prepared, new PortSigner()));
};
