/**
 * Signing keys and the `signature` render option (issue 34) over HTTP against the real local
 * stack, read back with real readers: pdfsig reports the signature valid, of the signer, over the
 * whole file, and "Digest Mismatch" once a signed byte changes; qpdf checks the file and shows a
 * visible signature's box. Keys are uploaded as PEM and PKCS#12; hostile uploads, another
 * account's key and an unknown one answer 4xx naming the field, nothing charged; the table holds
 * no private key in clear, and no log line of the run holds one.
 */
import { DynamoDBDocumentClient, paginateScan } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { errorSchema } from '../../functions/openapi.js';
import { waitForJob } from '../helpers/async-jobs.js';
import { type ApiResponse, dynamoDbClient, useLocalStack } from '../helpers/local-stack.js';
import { onPdf, qpdfCheck, qpdfJson } from '../helpers/pdf-readers.js';
import type { CapturedOutput } from '../helpers/process-output.js';
import { makeTestKeys, PASSPHRASE, type TestKeys } from '../helpers/signing-keys.js';
import { newAccount, type TestAccount } from '../helpers/template-fixtures.js';

const local = useLocalStack();

let keys: TestKeys;
let account: TestAccount;
let output: CapturedOutput;
beforeAll(async () => {
  [keys, account] = await Promise.all([makeTestKeys(), newAccount(local, 'sign')]);
});
afterAll(() => keys?.remove());
beforeEach(() => {
  output = local.captureOutput();
});
afterEach(() => {
  // Nothing the stack logged holds a private key or the passphrase.
  for (const secret of [
    'PRIVATE KEY',
    PASSPHRASE,
    keys.rsaKey.split('\n')[1] ?? '',
    keys.p12.slice(100, 160),
  ]) {
    expect(output.chunks.join('')).not.toContain(secret);
  }
  output.stop();
});

const createKey = (body: Record<string, unknown>, token = account.session) =>
  local.api('/v1/signing-keys', { method: 'POST', token, body: { name: 'invoices', ...body } });

const expectError = (res: ApiResponse, status: number, code: string, field?: string) => {
  expect(res.status, res.text).toBe(status);
  expect(res.json.error.code).toBe(code);
  expect(() => errorSchema.parse(res.json)).not.toThrow();
  if (field) expect(res.json.error.details.map((d: { field: string }) => d.field)).toContain(field);
};

const pdfsig = async (pdf: Uint8Array): Promise<string> => {
  const out = await onPdf(pdf, 'pdfsig', (f) => [f]);
  return `${out.stdout}${out.stderr}`;
};

const download = async (job: { download_url: string }): Promise<Uint8Array> =>
  new Uint8Array(await (await fetch(job.download_url)).arrayBuffer());

const html = '<h1>Invoice {{ number }}</h1><p>Total: 12.00</p>';

describe('/v1/signing-keys', () => {
  it('registers a PEM key: 201 without the private key; listed, read, deleted; the table holds it sealed only', async () => {
    const res = await createKey({ private_key_pem: keys.rsaKey, certificate_pem: keys.rsaCert });
    expect(res.status, res.text).toBe(201);
    expect(res.json).toMatchObject({
      id: expect.stringMatching(/^sk_[0-9A-Z]{26}$/),
      name: 'invoices',
      kind: 'uploaded',
      algorithm: 'RSA',
      certificate_subject: expect.stringContaining('CN=Invoice Signer RSA'),
      kms_key_arn: null,
    });
    expect(res.text).not.toContain('PRIVATE KEY');
    const id = res.json.id as string;
    expect(
      (await local.api('/v1/signing-keys', { token: account.session })).json.map((k: { id: string }) => k.id),
    ).toContain(id);
    expect((await local.api(`/v1/signing-keys/${id}`, { token: account.session })).json).toEqual(res.json);

    const body = keys.rsaKey.split('\n').slice(1, -2).join('');
    for await (const page of paginateScan(
      { client: DynamoDBDocumentClient.from(dynamoDbClient(local.stack)) },
      { TableName: local.stack.tableName },
    )) {
      const text = JSON.stringify(page.Items);
      expect(text).not.toContain('PRIVATE KEY');
      expect(text).not.toContain(body.slice(0, 64));
    }

    const deleted = await local.api(`/v1/signing-keys/${id}`, { method: 'DELETE', token: account.session });
    expect(deleted.status, deleted.text).toBe(200);
    expectError(
      await local.api(`/v1/signing-keys/${id}`, { token: account.session }),
      404,
      'SIGNING_KEY_NOT_FOUND',
    );
    expectError(
      await local.api(`/v1/signing-keys/${id}`, { method: 'DELETE', token: account.session }),
      404,
      'SIGNING_KEY_NOT_FOUND',
    );
  });

  it('registers a PKCS#12 (ECDSA under a CA): the chain kept, signer first', async () => {
    const res = await createKey({ pkcs12_base64: keys.p12, passphrase: PASSPHRASE });
    expect(res.status, res.text).toBe(201);
    expect(res.json.algorithm).toBe('ECDSA');
    expect(res.json.certificate_subject).toContain('CN=Invoice Signer EC');
    expect(res.json.certificate_pem.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    expect(res.text).not.toContain(PASSPHRASE);
  });

  it.each([
    [
      'a wrong passphrase',
      () => ({ pkcs12_base64: keys.p12, passphrase: 'not-it' }),
      'SIGNING_KEY_PASSPHRASE_INCORRECT',
      'passphrase',
    ],
    [
      'a PKCS#12 without a key',
      () => ({ pkcs12_base64: keys.noKeyP12, passphrase: PASSPHRASE }),
      'INVALID_SIGNING_KEY',
      'pkcs12_base64',
    ],
    [
      'a legacy (RC2/3DES) PKCS#12',
      () => ({ pkcs12_base64: keys.legacyP12, passphrase: PASSPHRASE }),
      'INVALID_SIGNING_KEY',
      'pkcs12_base64',
    ],
    [
      'a PKCS#12 asking for 2,000,000 key derivation iterations',
      () => ({ pkcs12_base64: keys.slowP12, passphrase: PASSPHRASE }),
      'INVALID_SIGNING_KEY',
      'pkcs12_base64',
    ],
    [
      'bytes that are no PKCS#12',
      () => ({ pkcs12_base64: Buffer.from('hello').toString('base64'), passphrase: 'x' }),
      'INVALID_SIGNING_KEY',
      'pkcs12_base64',
    ],
    [
      'an expired certificate',
      () => ({ private_key_pem: keys.rsaKey, certificate_pem: keys.expiredCert }),
      'SIGNING_CERTIFICATE_EXPIRED',
      'certificate_pem',
    ],
    [
      'another key’s certificate',
      () => ({ private_key_pem: keys.rsaKey, certificate_pem: keys.otherCert }),
      'INVALID_SIGNING_KEY',
      'private_key_pem',
    ],
    [
      'a key that is not PEM',
      () => ({ private_key_pem: 'nope', certificate_pem: keys.rsaCert }),
      'INVALID_SIGNING_KEY',
      'private_key_pem',
    ],
    [
      'a huge PKCS#12',
      () => ({ pkcs12_base64: 'A'.repeat(70_000), passphrase: 'x' }),
      'VALIDATION_ERROR',
      'pkcs12_base64',
    ],
    [
      'two forms at once',
      () => ({ pkcs12_base64: keys.p12, passphrase: 'x', private_key_pem: keys.rsaKey }),
      'VALIDATION_ERROR',
      'private_key_pem',
    ],
    [
      'a KMS alias, not a key ARN',
      () => ({ kms_key_arn: 'alias/mine', certificate_pem: keys.rsaCert }),
      'VALIDATION_ERROR',
      'kms_key_arn',
    ],
    [
      // The local stack has no KMS (test/integration/kms-signing-keys.test.ts points one at it).
      'a KMS key on a local stack without KMS',
      () => ({
        kms_key_arn: 'arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-4333-8444-555555555555',
        certificate_pem: keys.rsaCert,
      }),
      'INVALID_SIGNING_KEY',
      'kms_key_arn',
    ],
  ])('refuses %s with 422 naming the field, keeping nothing', async (_, body, code, field) => {
    const fresh = await newAccount(local, 'sign-bad');
    const res = await createKey(body(), fresh.session);
    expectError(res, 422, code, field);
    expect(res.text).not.toContain(PASSPHRASE);
    expect(res.text).not.toContain('PRIVATE KEY');
    expect((await local.api('/v1/signing-keys', { token: fresh.session })).json).toEqual([]);
  });
});

describe('signature', () => {
  let rsaKeyId: string;
  let ecKeyId: string;
  beforeAll(async () => {
    const [rsa, ec] = await Promise.all([
      createKey({ private_key_pem: keys.rsaKey, certificate_pem: keys.rsaCert }),
      createKey({ pkcs12_base64: keys.p12, passphrase: PASSPHRASE }),
    ]);
    rsaKeyId = rsa.json.id;
    ecKeyId = ec.json.id;
  });

  it('signs invisibly (PAdES B-B): pdfsig says valid, of the signer, with the reason and location; a changed byte breaks it', async () => {
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      token: account.session,
      body: {
        html,
        variables: { number: '2026-0042' },
        signature: { key_id: rsaKeyId, reason: 'Invoice issued', location: 'Lyon' },
      },
    });
    expect(res.status, res.text).toBe(201);
    const pdf = await download(res.json);
    const report = await pdfsig(pdf);
    expect(report).toContain('Signature Validation: Signature is Valid.');
    expect(report).toContain('Signer Certificate Common Name: Invoice Signer RSA');
    expect(report).toContain('Signature Type: ETSI.CAdES.detached');
    expect(report).toContain('Signature Field Name: Signature1');
    expect(report).toMatch(/Total document signed/);
    expect((await qpdfCheck(pdf)).code).toBe(0);
    const dictionary = Object.values((await qpdfJson(pdf)).objects).find(
      (o) => (o.value as { '/Type'?: string } | undefined)?.['/Type'] === '/Sig',
    )?.value as Record<string, string>;
    expect(dictionary['/Reason']).toBe('u:Invoice issued');
    expect(dictionary['/Location']).toBe('u:Lyon');
    expect(dictionary['/SubFilter']).toBe('/ETSI.CAdES.detached');

    const tampered = new Uint8Array(pdf);
    const at = Buffer.from(pdf).indexOf('Invoice');
    const index = at > 0 ? at : 200;
    tampered[index] = (tampered[index] ?? 0) ^ 0x01;
    expect(await pdfsig(tampered)).toContain('Digest Mismatch');
  });

  it('draws a visible signature in the box asked (ECDSA key from a PKCS#12), still valid', async () => {
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      token: account.session,
      body: {
        html,
        variables: { number: '7' },
        signature: {
          key_id: ecKeyId,
          reason: 'Approved',
          appearance: { page: 1, x: 36, y: 600, width: 220, height: 60 },
        },
      },
    });
    expect(res.status, res.text).toBe(201);
    const pdf = await download(res.json);
    const report = await pdfsig(pdf);
    expect(report).toContain('Signature Validation: Signature is Valid.');
    expect(report).toContain('Signer Certificate Common Name: Invoice Signer EC');
    expect((await qpdfCheck(pdf)).code).toBe(0);
    // The widget's box, in PDF's bottom-up points: A4 is 842 high, y 600 from the top, 60 high.
    const json = await qpdfJson(pdf);
    const widget = Object.values(json.objects).find(
      (o) => (o.value as { '/FT'?: string } | undefined)?.['/FT'] === '/Sig',
    ) as { value: { '/Rect': number[]; '/AP'?: unknown } } | undefined;
    expect(widget?.value['/AP']).toBeDefined();
    const [x1 = 0, y1 = 0, x2 = 0, y2 = 0] = (widget?.value['/Rect'] ?? []).map(Math.round);
    expect([x1, x2, y2 - y1]).toEqual([36, 256, 60]);
    expect(y2).toBeGreaterThan(230);
    expect(y2).toBeLessThan(250);
  });

  it('signs an async render (the order names the key only; the worker opens it)', async () => {
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      token: account.session,
      body: { html, variables: { number: 'async' }, async: true, signature: { key_id: rsaKeyId } },
    });
    expect(res.status, res.text).toBe(202);
    const job = await waitForJob(local.api, account.session, res.json.id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(await pdfsig(await download(job))).toContain('Signature Validation: Signature is Valid.');
  });

  it('refuses another account’s key and an unknown one with 422 naming signature.key_id, nothing charged', async () => {
    const other = await newAccount(local, 'sign-other');
    for (const keyId of [rsaKeyId, 'sk_01JZZZZZZZZZZZZZZZZZZZZZZZ', 'not-a-key']) {
      const res = await local.api('/v1/pdf', {
        method: 'POST',
        token: other.session,
        body: { html, variables: { number: '1' }, signature: { key_id: keyId } },
      });
      expectError(res, 422, 'INVALID_SIGNING_KEY', 'signature.key_id');
    }
    expect((await local.api('/v1/pdf', { token: other.session })).json).toEqual([]);
    expect((await local.api('/v1/usage', { token: other.session })).json.renders_used).toBe(0);
  });

  it('refuses signature with protection (422 naming both), and a box past the last page', async () => {
    const both = await local.api('/v1/pdf', {
      method: 'POST',
      token: account.session,
      body: {
        html,
        variables: { number: '1' },
        signature: { key_id: rsaKeyId },
        protection: { owner_password: 'Correct-Horse-Battery-9' },
      },
    });
    expectError(both, 422, 'INVALID_PDF_OPTIONS', 'signature');
    expect(both.json.error.details.map((d: { field: string }) => d.field)).toContain('protection');

    const beyond = await local.api('/v1/pdf', {
      method: 'POST',
      token: account.session,
      body: {
        html,
        variables: { number: '1' },
        signature: { key_id: rsaKeyId, appearance: { page: 3, x: 0, y: 0, width: 100, height: 40 } },
      },
    });
    expectError(beyond, 422, 'INVALID_PDF_OPTIONS');
    expect(beyond.json.error.message).toContain('signature.appearance.page');
  });
});
