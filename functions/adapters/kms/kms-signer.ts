/**
 * Signing with an AWS KMS asymmetric key (issue 34): the renderer sends the bytes to sign (the
 * CMS signed attributes, a few hundred bytes: never the document) as a RAW message, and KMS
 * hashes and signs them with a key that never leaves it. The renderer's role may call kms:Sign
 * on the deployment's keys tagged SIGNING_KEY_TAG only (functions/wiring.ts, lib/renderer-function.ts).
 * The client is made on the first signature: a renderer that signs nothing with KMS never loads it.
 */
import { KMSClient, SignCommand } from '@aws-sdk/client-kms';
import type { KmsSign } from '../../domain/signing/signing-keys.js';

export const createKmsSign = (region?: string): KmsSign => {
  let client: KMSClient | undefined;
  return async (keyArn, algorithm, message) => {
    client ??= new KMSClient(region ? { region } : {});
    const out = await client.send(
      new SignCommand({
        KeyId: keyArn,
        Message: message,
        MessageType: 'RAW',
        SigningAlgorithm: algorithm === 'RSA' ? 'RSASSA_PKCS1_V1_5_SHA_256' : 'ECDSA_SHA_256',
      }),
    );
    if (!out.Signature) throw new Error('KMS answered no signature');
    return out.Signature;
  };
};
