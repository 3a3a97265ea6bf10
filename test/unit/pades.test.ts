/**
 * PAdES B-B signatures (functions/renderer/pades.ts, issue 34) read back with poppler's pdfsig:
 * valid, of type ETSI.CAdES.detached, naming the signer, over the whole document; "Digest
 * Mismatch" once one byte of a signed range changes. Keys and certificates are made here with the
 * openssl command (RSA, and ECDSA P-256 under a CA); the PDF is one Chromium printed.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pemSigner, signPades } from '../../functions/renderer/pades.js';
import { onPdf } from '../helpers/pdf-readers.js';

const run = promisify(execFile);
let dir: string;
let printed: Uint8Array;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pades-'));
  printed = new Uint8Array(await readFile(new URL('../fixtures/pdf/links.pdf', import.meta.url)));
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  await openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'rsa.key',
    '-out',
    'rsa.crt',
    '-days',
    '2',
    '-subj',
    '/CN=Invoice Signer RSA/O=PDF Service Tests',
  );
  await openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=Test CA',
  );
  await openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'ec.key',
    '-out',
    'ec.csr',
    '-subj',
    '/CN=Invoice Signer EC',
  );
  await openssl(
    'x509',
    '-req',
    '-in',
    'ec.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'ec.crt',
    '-days',
    '2',
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const pem = (name: string) => readFile(join(dir, name), 'utf8');

const pdfsig = async (pdf: Uint8Array): Promise<string> => {
  const out = await onPdf(pdf, 'pdfsig', (f) => [f]);
  await out.cleanup();
  return out.stdout;
};

describe('PAdES B-B signatures', () => {
  it('are valid, ETSI.CAdES.detached, over the whole document, and broken by one changed byte', async () => {
    const signer = pemSigner(await pem('rsa.key'), await pem('rsa.crt'));
    const signed = await signPades(printed, signer, {
      reason: 'Invoice issued',
      location: 'Berlin',
      contact: 'billing@example.com',
      signingTime: new Date('2026-11-28T12:00:00Z'),
    });
    // The printed bytes are kept: the signature is an incremental update.
    expect(Buffer.from(signed.subarray(0, printed.length)).equals(Buffer.from(printed))).toBe(true);
    const report = await pdfsig(signed);
    expect(report).toContain('Signer Certificate Common Name: Invoice Signer RSA');
    expect(report).toContain('Signature Type: ETSI.CAdES.detached');
    expect(report).toContain('Signing Hash Algorithm: SHA-256');
    expect(report).toContain('Total document signed');
    expect(report).toContain('Signature Validation: Signature is Valid.');

    const tampered = new Uint8Array(signed);
    const at = Buffer.from(tampered).indexOf('/MediaBox');
    expect(at).toBeGreaterThan(0);
    tampered[at + 1] = 0x6d; // /MediaBox → /mediaBox, inside the first signed range
    expect(await pdfsig(tampered)).toContain('Signature Validation: Digest Mismatch.');
  });

  it('sign with an ECDSA key and carry its chain', async () => {
    const chain = `${await pem('ec.crt')}${await pem('ca.crt')}`;
    const signer = pemSigner(await pem('ec.key'), chain);
    expect(signer.certificates).toHaveLength(2);
    const report = await pdfsig(await signPades(printed, signer, { signingTime: new Date() }));
    expect(report).toContain('Signer Certificate Common Name: Invoice Signer EC');
    expect(report).toContain('Signature Validation: Signature is Valid.');
  });
});
