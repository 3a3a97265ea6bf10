/**
 * The Signer (pades.ts) for a render's signing key: an uploaded key in memory, or an AWS KMS key
 * asked to sign (the KmsSign port: adapters/kms/kms-signer.ts in the renderer), never handing its
 * private key out.
 */
import type { KmsSign, SigningMaterial } from '../domain/signing/signing-keys.js';
import { certificatesOfPem, pemSigner, type Signer } from './pades.js';

export const signerOf = (material: SigningMaterial, kms: KmsSign | undefined): Signer => {
  if (material.kind === 'uploaded') return pemSigner(material.privateKeyPem, material.certificatePem);
  if (!kms) throw new Error('this renderer has no KMS client');
  const { kmsKeyArn, algorithm } = material;
  return {
    certificates: certificatesOfPem(material.certificatePem),
    algorithm,
    sign: (data) => kms(kmsKeyArn, algorithm, data),
  };
};
