/**
 * The public half of an AWS KMS key (kms:GetPublicKey), read when an account registers the key
 * with its certificate (issue 34): the signing-keys function compares the two, so a certificate
 * of another key is refused at once. Its role may call kms:GetPublicKey on the deployment's keys
 * tagged SIGNING_KEY_TAG only (lib/service-function.ts). The SDK module is imported on the first
 * registration: a cold start that registers no KMS key never evaluates it.
 */
import type { KMSClient } from '@aws-sdk/client-kms';
import type { KmsPublicKey } from '../../domain/signing/signing-keys.js';

export const awsKmsPublicKey: KmsPublicKey = (() => {
  let client: KMSClient | undefined;
  return async (keyArn) => {
    const { KMSClient, GetPublicKeyCommand } = await import('@aws-sdk/client-kms');
    client ??= new KMSClient({});
    const out = await client.send(new GetPublicKeyCommand({ KeyId: keyArn }));
    if (!out.PublicKey) throw new Error('KMS answered no public key');
    return { spki: out.PublicKey, keyUsage: out.KeyUsage };
  };
})();
