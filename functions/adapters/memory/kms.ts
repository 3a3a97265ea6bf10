/**
 * A stand-in for AWS KMS's asymmetric signing (issue 34), for tests: keys made here, each named
 * by an ARN, sign RAW messages with SHA-256 as KMS does (RSASSA-PKCS1-v1_5, or ECDSA as DER);
 * an unknown ARN or a key of the other algorithm is refused as KMS refuses it. No npm package
 * serves the KMS API locally (nsmithuk/local-kms is a Go binary), so the port's memory adapter
 * stands in, as the issue allows.
 */
import { createPublicKey, generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto';
import type { KmsPublicKey, KmsSign, SigningAlgorithm } from '../../domain/signing/signing-keys.js';

export interface MemoryKms {
  readonly sign: KmsSign;
  /** kms:GetPublicKey: the key's DER SubjectPublicKeyInfo; every key made here signs (SIGN_VERIFY). */
  readonly publicKey: KmsPublicKey;
  /** A new key: its ARN, and its private key (to certify its public key in tests). */
  createKey(algorithm: SigningAlgorithm): { readonly arn: string; readonly privateKey: KeyObject };
}

export const createMemoryKms = (region = 'eu-west-1', account = '123456789012'): MemoryKms => {
  const keys = new Map<string, { algorithm: SigningAlgorithm; privateKey: KeyObject }>();
  return {
    createKey(algorithm) {
      const { privateKey } =
        algorithm === 'RSA'
          ? generateKeyPairSync('rsa', { modulusLength: 2048 })
          : generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const arn = `arn:aws:kms:${region}:${account}:key/${randomUUID()}`;
      keys.set(arn, { algorithm, privateKey });
      return { arn, privateKey };
    },
    publicKey: async (keyArn) => {
      const key = keys.get(keyArn);
      if (!key)
        throw Object.assign(new Error(`Key '${keyArn}' does not exist`), { name: 'NotFoundException' });
      return {
        spki: new Uint8Array(createPublicKey(key.privateKey).export({ type: 'spki', format: 'der' })),
        keyUsage: 'SIGN_VERIFY',
      };
    },
    sign: async (keyArn, algorithm, message) => {
      const key = keys.get(keyArn);
      if (!key)
        throw Object.assign(new Error(`Key '${keyArn}' does not exist`), { name: 'NotFoundException' });
      if (key.algorithm !== algorithm) {
        throw Object.assign(new Error('The signing algorithm is not valid for this key'), {
          name: 'InvalidKeyUsageException',
        });
      }
      return new Uint8Array(sign('sha256', message, { key: key.privateKey, dsaEncoding: 'der' }));
    },
  };
};
