/**
 * The Signer (pades.ts) for a render's signing key: an uploaded key in memory, or an AWS KMS key
 * asked to sign (adapters/kms/kms-signer.ts), never handing its private key out.
 */
import type { SigningMaterial } from '../domain/signing/signing-keys.js';
import { pemSigner, type Signer } from './pades.js';

export const signerOf = (material: SigningMaterial): Signer => {
  if (material.kind === 'uploaded') return pemSigner(material.privateKeyPem, material.certificatePem);
  throw new Error('KMS signing keys are not available in this deployment');
};
