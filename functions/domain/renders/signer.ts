/**
 * What signs a PAdES signature (issue 34; functions/renderer/pades.ts builds the CMS around it):
 * a certificate chain and the private key's signature over some bytes, so that the key can stay
 * where it lives. Adapters: pemSigner (renderer/pades.ts: an uploaded PEM key opened in memory),
 * the memory signer (adapters/memory/signer.ts: a key made in-process, never exported); both held
 * to one contract (test/contract/signer.contract.ts). An AWS KMS signer is to come.
 */
export interface Signer {
  /** DER certificates, the signer's first, then its issuers. */
  readonly certificates: readonly Uint8Array[];
  /** RSA (PKCS#1 v1.5) or ECDSA, with SHA-256. */
  readonly algorithm: 'RSA' | 'ECDSA';
  /** The signature of `data` (SHA-256 hashed by the signer, as KMS's RAW messages are); ECDSA as DER. */
  sign(data: Uint8Array): Promise<Uint8Array>;
}
