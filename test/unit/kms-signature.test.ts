/**
 * A signature whose key is held by AWS KMS (issue 34): the signature step asks the KmsSign port
 * for the signature of the CMS signed attributes only, here the port's memory stand-in
 * (functions/adapters/memory/kms.ts, which signs as KMS's RAW messages are signed). pdfsig reads
 * the result back: valid, of the certificate registered with the key. A KMS that refuses (an
 * unknown key, the wrong algorithm) fails the render cleanly, saying nothing of the key.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryKms } from '../../functions/adapters/memory/kms.js';
import { renderOptionsFrom } from '../../functions/domain/renders/render-options.js';
import { signatureOf } from '../../functions/domain/renders/signature.js';
import type { SigningMaterial } from '../../functions/domain/signing/signing-keys.js';
import type { RenderRequest } from '../../functions/renderer/contract.js';
import { FINISHING } from '../../functions/renderer/finishing/index.js';
import { onPdf } from '../helpers/pdf-readers.js';

const run = promisify(execFile);
const kms = createMemoryKms();
let dir: string;
let printed: Uint8Array;
const materials: Record<'RSA' | 'ECDSA', SigningMaterial> = {} as never;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kms-signature-'));
  printed = new Uint8Array(await readFile(new URL('../fixtures/pdf/links.pdf', import.meta.url)));
  for (const algorithm of ['RSA', 'ECDSA'] as const) {
    const { arn, privateKey } = kms.createKey(algorithm);
    // The certificate the account registers with the key (a CA would issue it for the key's public half).
    const keyFile = join(dir, `${algorithm}.key`);
    await writeFile(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const { stdout } = await run('openssl', [
      'req',
      '-x509',
      '-key',
      keyFile,
      '-days',
      '2',
      '-subj',
      `/CN=KMS Signer ${algorithm}`,
    ]);
    await rm(keyFile);
    materials[algorithm] = { kind: 'kms', algorithm, certificatePem: stdout, kmsKeyArn: arn };
  }
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const signature = signatureOf({ key_id: 'sk_kms', reason: 'Invoice issued' });
const signWith = (signingKey: SigningMaterial, withKms = true) =>
  FINISHING.signature(printed, signature, {
    request: { ...renderOptionsFrom({}, 30_000), signature, signingKey } as RenderRequest,
    log: new Logger({ logLevel: 'SILENT' }),
    now: new Date(),
    templated: {},
    ...(withKms ? { kms: kms.sign } : {}),
  });

const pdfsig = async (pdf: Uint8Array) => {
  const out = await onPdf(pdf, 'pdfsig', (f) => [f]);
  return `${out.stdout}${out.stderr}`;
};

describe('a signature with a KMS key', () => {
  it.each(['RSA', 'ECDSA'] as const)(
    'signs with KMS (%s): pdfsig says valid, of the registered certificate',
    async (algorithm) => {
      const outcome = await signWith(materials[algorithm]);
      expect(outcome.ok).toBe(true);
      const report = await pdfsig((outcome as { pdf: Uint8Array }).pdf);
      expect(report).toContain('Signature Validation: Signature is Valid.');
      expect(report).toContain(`Signer Certificate Common Name: KMS Signer ${algorithm}`);
    },
  );

  it('fails cleanly when KMS refuses: an unknown key, the wrong algorithm, no KMS client', async () => {
    const rsa = materials.RSA as Extract<SigningMaterial, { kind: 'kms' }>;
    for (const material of [
      { ...rsa, kmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/unknown' },
      { ...rsa, algorithm: 'ECDSA' as const },
    ]) {
      expect(await signWith(material)).toEqual({
        ok: false,
        code: 'PDF_RENDERING_FAILED',
        message: 'The PDF could not be signed.',
      });
    }
    expect((await signWith(rsa, false)).ok).toBe(false);
  });
});
