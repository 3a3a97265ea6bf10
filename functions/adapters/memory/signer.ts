/**
 * A Signer (domain/renders/signer.ts) whose key is made in-process and never leaves it: a WebCrypto
 * key pair (RSA-2048 or ECDSA P-256, not extractable) and a self-signed certificate for it made
 * with PKI.js, as a KMS key's would be issued. Signs as pemSigner does (SHA-256; ECDSA as DER), so
 * a PDF it signs (renderer/pades.ts) is one poppler's pdfsig reports valid. Held with pemSigner to
 * one contract (test/contract/signer.contract.ts).
 */
import { KeyObject, randomBytes, sign as signWithKey, webcrypto } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { Signer } from '../../domain/renders/signer.js';

export interface MemorySignerOptions {
  /** @default 'RSA' */
  readonly algorithm?: Signer['algorithm'];
  /** The certificate's subject and issuer CN. @default 'Memory Signer' */
  readonly commonName?: string;
  /** The certificate's validity starts here, for a day. @default now */
  readonly notBefore?: Date;
}

const KEY_PARAMS = {
  RSA: {
    name: 'RSASSA-PKCS1-v1_5',
    modulusLength: 2048,
    publicExponent: new Uint8Array([1, 0, 1]),
    hash: 'SHA-256',
  },
  ECDSA: { name: 'ECDSA', namedCurve: 'P-256' },
} as const;

export const createMemorySigner = async (options: MemorySignerOptions = {}): Promise<Signer> => {
  const algorithm = options.algorithm ?? 'RSA';
  const keys = (await webcrypto.subtle.generateKey(KEY_PARAMS[algorithm], false, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;

  const certificate = new pkijs.Certificate();
  certificate.version = 2;
  const serial = randomBytes(8);
  // A positive INTEGER in its shortest form: a first byte of 0x00 (1 in 128 before this) made a
  // non-minimal encoding that OpenSSL refuses to parse (one CI run failed on it).
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x40;
  certificate.serialNumber = new asn1js.Integer({ valueHex: serial });
  const cn = new pkijs.AttributeTypeAndValue({
    type: '2.5.4.3',
    value: new asn1js.Utf8String({ value: options.commonName ?? 'Memory Signer' }),
  });
  certificate.subject.typesAndValues.push(cn);
  certificate.issuer.typesAndValues.push(cn);
  const from = options.notBefore ?? new Date();
  certificate.notBefore.value = from;
  certificate.notAfter.value = new Date(from.getTime() + 86_400_000);
  await certificate.subjectPublicKeyInfo.importKey(keys.publicKey);
  await certificate.sign(keys.privateKey, 'SHA-256');
  const der = new Uint8Array(certificate.toSchema(true).toBER(false));

  const key = KeyObject.from(keys.privateKey);
  return {
    certificates: [der],
    algorithm,
    sign: async (data) => new Uint8Array(signWithKey('sha256', data, { key, dsaEncoding: 'der' })),
  };
};
