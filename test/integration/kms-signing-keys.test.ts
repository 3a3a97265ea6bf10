/**
 * A signing key held by AWS KMS, over HTTP (issue 34), on a local stack pointed at KMS's API
 * (test/helpers/kms-api.ts, the KmsSign port's memory stand-in served as KMS serves it, through
 * AWS_ENDPOINT_URL_KMS): registering reads the key's public half (kms:GetPublicKey) and refuses a
 * certificate of another key, an unknown key and a key that does not sign, each naming the field;
 * a registered key signs a render through kms:Sign, and pdfsig says the signature is valid. A
 * local stack with no KMS endpoint refuses KMS keys, saying what to do instead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StackProcess, startStackProcess } from '../helpers/child-stack.js';
import { type KmsApi, startKmsApi } from '../helpers/kms-api.js';
import { createApi } from '../helpers/local-stack.js';
import { onPdf } from '../helpers/pdf-readers.js';
import { certificateFor } from '../helpers/signing-keys.js';

let kmsApi: KmsApi;
let stack: StackProcess;
let token: string;
let api: ReturnType<typeof createApi>;

beforeAll(async () => {
  kmsApi = await startKmsApi();
  stack = await startStackProcess({}, 120_000, {
    AWS_ENDPOINT_URL_KMS: kmsApi.endpoint,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'AKIALOCALKMSTEST',
    AWS_SECRET_ACCESS_KEY: 'local-kms-test-secret',
  });
  api = createApi(stack.baseUrl);
  token = await stack.sessionToken();
}, 150_000);

afterAll(async () => {
  await stack?.stop();
  await kmsApi?.close();
});

const register = (body: Record<string, unknown>) =>
  api('/v1/signing-keys', { method: 'POST', token, body: { name: 'KMS signer', ...body } });

describe('registering a KMS key', () => {
  it('registers a key whose certificate certifies it, and signs a render with it (pdfsig: valid)', async () => {
    const { arn, privateKey } = kmsApi.kms.createKey('ECDSA');
    const certificate_pem = await certificateFor(privateKey, '/CN=KMS Invoice Signer');
    const created = await register({ kms_key_arn: arn, certificate_pem });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    expect(created.json).toMatchObject({ kind: 'kms', algorithm: 'ECDSA', kms_key_arn: arn });
    expect(kmsApi.publicKeyCalls).toContain(arn);

    const signs = kmsApi.signCalls.length;
    const res = await api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: '<h1>Signed through KMS</h1>', signature: { key_id: created.json.id, reason: 'Issued' } },
    });
    expect(res.status, JSON.stringify(res.json)).toBe(201);
    expect(kmsApi.signCalls.slice(signs).map((c) => c.keyId)).toEqual([arn]);
    const pdf = new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer());
    const report = await onPdf(pdf, 'pdfsig', (f) => [f]);
    expect(`${report.stdout}${report.stderr}`).toContain('Signature Validation: Signature is Valid.');
    expect(`${report.stdout}${report.stderr}`).toContain('KMS Invoice Signer');
  });

  it('refuses a certificate of another key, naming certificate_pem, and keeps nothing', async () => {
    const { arn } = kmsApi.kms.createKey('RSA');
    const other = kmsApi.kms.createKey('RSA');
    const res = await register({
      kms_key_arn: arn,
      certificate_pem: await certificateFor(other.privateKey, '/CN=Someone Else'),
    });
    expect(res.status).toBe(422);
    expect(res.json.error).toMatchObject({ code: 'INVALID_SIGNING_KEY' });
    expect(res.json.error.details).toEqual([expect.objectContaining({ field: 'certificate_pem' })]);
    const listed = await api('/v1/signing-keys', { token });
    expect(JSON.stringify(listed.json)).not.toContain(arn);
  });

  it('refuses a key KMS does not have, naming kms_key_arn', async () => {
    const { privateKey } = kmsApi.kms.createKey('ECDSA');
    const res = await register({
      kms_key_arn: 'arn:aws:kms:eu-west-1:123456789012:key/00000000-0000-4000-8000-000000000000',
      certificate_pem: await certificateFor(privateKey, '/CN=No Such Key'),
    });
    expect(res.status).toBe(422);
    expect(res.json.error).toMatchObject({ code: 'INVALID_SIGNING_KEY' });
    expect(res.json.error.details).toEqual([expect.objectContaining({ field: 'kms_key_arn' })]);
    expect(res.json.error.message).toMatch(/no key/);
  });
});
