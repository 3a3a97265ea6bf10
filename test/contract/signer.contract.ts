/**
 * The Signer port's contract (domain/renders/signer.ts): a certificate that names the signer and
 * holds the key its signatures verify under, and PAdES signatures made with it
 * (renderer/pades.ts) that poppler's pdfsig reports valid, and broken by one changed byte. The
 * same cases for the memory signer (a key made in-process, adapters/memory/signer.ts) and
 * pemSigner (a PEM key and certificate made by the openssl command), RSA and ECDSA.
 */
import { verify, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Signer } from '../../functions/domain/renders/signer.js';
import { signPades } from '../../functions/renderer/pades.js';
import { onPdf } from '../helpers/pdf-readers.js';

export interface SignerBackend {
  readonly name: string;
  create(options: { readonly algorithm: Signer['algorithm']; readonly commonName: string }): Promise<Signer>;
}

const pdfsig = async (pdf: Uint8Array): Promise<string> => {
  const out = await onPdf(pdf, 'pdfsig', (f) => [f]);
  await out.cleanup();
  return out.stdout;
};

export const signerContract = (backend: SignerBackend): void => {
  describe.each(['RSA', 'ECDSA'] as const)(`Signer (${backend.name}, %s)`, (algorithm) => {
    const commonName = `Invoice Signer ${backend.name} ${algorithm}`;
    let signer: Signer;
    let printed: Uint8Array;
    beforeAll(async () => {
      signer = await backend.create({ algorithm, commonName });
      printed = new Uint8Array(await readFile(new URL('../fixtures/pdf/links.pdf', import.meta.url)));
    });

    it('carries a certificate that names it, valid now, for a key of its algorithm', () => {
      expect(signer.algorithm).toBe(algorithm);
      const certificate = new X509Certificate(Buffer.from(signer.certificates[0] as Uint8Array));
      expect(certificate.subject).toContain(`CN=${commonName}`);
      expect(certificate.publicKey.asymmetricKeyType).toBe(algorithm === 'RSA' ? 'rsa' : 'ec');
      const now = Date.now();
      expect(new Date(certificate.validFrom).getTime()).toBeLessThanOrEqual(now);
      expect(new Date(certificate.validTo).getTime()).toBeGreaterThan(now);
    });

    it('signs SHA-256 of the data: the signature verifies under its certificate, and only for that data', async () => {
      const key = new X509Certificate(Buffer.from(signer.certificates[0] as Uint8Array)).publicKey;
      const data = new TextEncoder().encode('the signed attributes');
      const signature = await signer.sign(data);
      expect(verify('sha256', data, { key, dsaEncoding: 'der' }, signature)).toBe(true);
      const other = new TextEncoder().encode('the signed attributes, changed');
      expect(verify('sha256', other, { key, dsaEncoding: 'der' }, signature)).toBe(false);
    });

    it('makes PAdES signatures pdfsig reports valid, over the whole document, broken by one changed byte', async () => {
      const signed = await signPades(printed, signer, { reason: 'Invoice issued', signingTime: new Date() });
      const report = await pdfsig(signed);
      expect(report).toContain(`Signer Certificate Common Name: ${commonName}`);
      expect(report).toContain('Signature Type: ETSI.CAdES.detached');
      expect(report).toContain('Signing Hash Algorithm: SHA-256');
      expect(report).toContain('Total document signed');
      expect(report).toContain('Signature Validation: Signature is Valid.');
      const tampered = new Uint8Array(signed);
      const at = Buffer.from(tampered).indexOf('/MediaBox');
      expect(at).toBeGreaterThan(0);
      tampered[at + 1] = 0x6d; // /MediaBox → /mediaBox, inside the first signed range
      expect(await pdfsig(tampered)).toContain('Signature Validation: Digest Mismatch.');
    });
  });
};
