/**
 * Signing with an AWS KMS asymmetric key (issue 34): the renderer sends the bytes to sign (the
 * CMS signed attributes, a few hundred bytes: never the document) as a RAW message, and KMS
 * hashes and signs them with a key that never leaves it. The renderer's role may call kms:Sign
 * on the deployment's keys tagged SIGNING_KEY_TAG only (functions/wiring.ts, lib/renderer-function.ts).
 * The SDK module is imported, and the client made, on the first signature: the renderer's bundle
 * carries it (0.9 MB minified, 0.24 MB gzipped, measured), but a renderer that signs nothing with
 * KMS never evaluates it, and its cold start does not wait for it.
 */
import type { KMSClient } from '@aws-sdk/client-kms';
import type { KmsSign } from '../../domain/signing/signing-keys.js';

/**
 * The one KMS signing port of a process (the renderer's): its client made on its first signature,
 * in the region Lambda sets (AWS_REGION), and kept for the warm Lambda's life.
 */
export const awsKmsSign: KmsSign = (() => {
  let client: KMSClient | undefined;
  return async (keyArn, algorithm, message) => {
    const { KMSClient, SignCommand } = await import('@aws-sdk/client-kms');
    client ??= new KMSClient({});
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
})();
