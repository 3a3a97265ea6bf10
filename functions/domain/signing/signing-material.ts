/**
 * What a signature needs of a signing key, as the renderer is handed it (domain/common/ports.ts's
 * RenderRequest.signingKey): a leaf module, so that the ports need not import the signing-key use
 * cases (signing-keys.ts), which use the ports.
 */
export type SigningAlgorithm = 'RSA' | 'ECDSA';

/** What the renderer signs with: the chain, and either the private key or the KMS key that holds it. */
export type SigningMaterial =
  | {
      readonly kind: 'uploaded';
      readonly algorithm: SigningAlgorithm;
      readonly certificatePem: string;
      readonly privateKeyPem: string;
    }
  | {
      readonly kind: 'kms';
      readonly algorithm: SigningAlgorithm;
      readonly certificatePem: string;
      readonly kmsKeyArn: string;
    };
