/**
 * AWS KMS's HTTP API for the operations the service calls (Sign, GetPublicKey), served from the KmsSign port's
 * memory stand-in (functions/adapters/memory/kms.ts), so that a process of its own (the renderer
 * bundle in the Lambda-like sandbox) signs through the real KMS client of its bundle: the SDK
 * reaches it through AWS_ENDPOINT_URL_KMS, speaking KMS's JSON 1.1 protocol
 * (`X-Amz-Target: TrentService.Sign`, blobs in base64, errors as `__type`). No npm package serves
 * the KMS API (nsmithuk/local-kms is a Go binary), hence this one, as issue 34 allows.
 *
 * It records every Sign call it answered, so that a test can see what the renderer sent KMS.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryKms, type MemoryKms } from '../../functions/adapters/memory/kms.js';

export interface SignCall {
  readonly keyId: string;
  readonly messageType: string;
  readonly signingAlgorithm: string;
  /** The bytes KMS was asked to sign. */
  readonly message: Buffer;
}

export interface KmsApi {
  /** For AWS_ENDPOINT_URL_KMS. */
  readonly endpoint: string;
  readonly kms: MemoryKms;
  readonly signCalls: readonly SignCall[];
  /** The key ids GetPublicKey was asked for. */
  readonly publicKeyCalls: readonly string[];
  close(): Promise<void>;
}

const ALGORITHMS = { RSASSA_PKCS1_V1_5_SHA_256: 'RSA', ECDSA_SHA_256: 'ECDSA' } as const;

export const startKmsApi = async (kms: MemoryKms = createMemoryKms()): Promise<KmsApi> => {
  const signCalls: SignCall[] = [];
  const publicKeyCalls: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify(body));
      };
      const fault = (type: string, message: string) => answer(400, { __type: type, message });
      const target = String(req.headers['x-amz-target'] ?? '');
      let body: { KeyId?: string; Message?: string; MessageType?: string; SigningAlgorithm?: string };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return fault('SerializationException', 'the body is not JSON');
      }
      if (target === 'TrentService.GetPublicKey') {
        publicKeyCalls.push(String(body.KeyId));
        try {
          const { spki, keyUsage } = await kms.publicKey(String(body.KeyId));
          return answer(200, {
            KeyId: body.KeyId,
            PublicKey: Buffer.from(spki).toString('base64'),
            KeyUsage: keyUsage,
          });
        } catch (e) {
          return fault((e as Error).name, (e as Error).message);
        }
      }
      if (target !== 'TrentService.Sign')
        return fault('UnsupportedOperationException', `not served: ${target}`);
      const algorithm = ALGORITHMS[body.SigningAlgorithm as keyof typeof ALGORITHMS];
      if (!body.KeyId || !body.Message || !algorithm)
        return fault('ValidationException', 'KeyId, Message and a known SigningAlgorithm are required');
      const message = Buffer.from(body.Message, 'base64');
      signCalls.push({
        keyId: body.KeyId,
        messageType: String(body.MessageType),
        signingAlgorithm: body.SigningAlgorithm as string,
        message,
      });
      try {
        const signature = await kms.sign(body.KeyId, algorithm, message);
        answer(200, {
          KeyId: body.KeyId,
          Signature: Buffer.from(signature).toString('base64'),
          SigningAlgorithm: body.SigningAlgorithm,
        });
      } catch (e) {
        fault((e as Error).name, (e as Error).message);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    kms,
    signCalls,
    publicKeyCalls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
