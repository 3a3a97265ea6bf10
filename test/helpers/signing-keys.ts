/**
 * Keys and certificates for the signing tests (issue 34), made with the openssl command in a
 * temporary directory: an RSA-2048 self-signed certificate, an ECDSA P-256 key under a test CA,
 * PKCS#12 files (OpenSSL 3's AES-256 default, the legacy RC2/3DES one, one without a key), an
 * expired certificate, and a certificate that is not the key's.
 */
import { execFile } from 'node:child_process';
import type { KeyObject } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestKeys {
  readonly rsaKey: string;
  readonly rsaCert: string;
  readonly ecKey: string;
  /** The EC signer's certificate, then the CA's. */
  readonly ecChain: string;
  /** base64 of a PKCS#12 of the EC key and its chain, passphrase PASSPHRASE. */
  readonly p12: string;
  readonly legacyP12: string;
  readonly noKeyP12: string;
  /** A PKCS#12 whose key is encrypted with 2,000,000 PBKDF2 iterations (work for whoever opens it). */
  readonly slowP12: string;
  readonly expiredCert: string;
  /** Another key's certificate. */
  readonly otherCert: string;
  readonly remove: () => Promise<void>;
}

export const PASSPHRASE = 'p12-Passphrase-7';

/**
 * A self-signed certificate (PEM) for `privateKey`'s public half, valid two days: what an account
 * registers with a KMS key (a CA would issue it; the tests' KMS stand-in hands out the private key).
 */
export const certificateFor = async (privateKey: KeyObject, subject: string): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), 'signing-cert-'));
  try {
    await writeFile(join(dir, 'k.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const { stdout } = await run(
      'openssl',
      ['req', '-x509', '-key', 'k.pem', '-days', '2', '-subj', subject],
      {
        cwd: dir,
      },
    );
    return stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

export const makeTestKeys = async (): Promise<TestKeys> => {
  const dir = await mkdtemp(join(tmpdir(), 'signing-keys-'));
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  const text = (name: string) => readFile(join(dir, name), 'utf8');
  const base64 = async (name: string) => (await readFile(join(dir, name))).toString('base64');
  const selfSigned = (key: string, cert: string, cn: string, days = '30') =>
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      days,
      '-subj',
      cn,
    );
  await selfSigned('rsa.key', 'rsa.crt', '/CN=Invoice Signer RSA/O=PDF Service Tests');
  await selfSigned('other.key', 'other.crt', '/CN=Someone Else');
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '30',
    '-subj',
    '/CN=Test CA',
  );
  await openssl('req', ...ec, '-keyout', 'ec.key', '-out', 'ec.csr', '-subj', '/CN=Invoice Signer EC');
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
    '30',
  );
  const pass = `pass:${PASSPHRASE}`;
  await openssl(
    'pkcs12',
    '-export',
    '-inkey',
    'ec.key',
    '-in',
    'ec.crt',
    '-certfile',
    'ca.crt',
    '-out',
    'ec.p12',
    '-passout',
    pass,
  );
  await openssl(
    'pkcs12',
    '-export',
    '-legacy',
    '-inkey',
    'rsa.key',
    '-in',
    'rsa.crt',
    '-out',
    'legacy.p12',
    '-passout',
    pass,
  ).catch(
    // An OpenSSL without the legacy provider: the modern file stands in (its case then fails loudly).
    () =>
      openssl(
        'pkcs12',
        '-export',
        '-inkey',
        'rsa.key',
        '-in',
        'rsa.crt',
        '-out',
        'legacy.p12',
        '-passout',
        pass,
      ),
  );
  await openssl(
    'pkcs12',
    '-export',
    '-inkey',
    'rsa.key',
    '-in',
    'rsa.crt',
    '-iter',
    '2000000',
    '-out',
    'slow.p12',
    '-passout',
    pass,
  );
  await openssl('pkcs12', '-export', '-nokeys', '-in', 'rsa.crt', '-out', 'nokey.p12', '-passout', pass);
  await openssl('req', '-new', '-key', 'rsa.key', '-subj', '/CN=Expired Signer', '-out', 'old.csr');
  await openssl('x509', '-req', '-in', 'old.csr', '-signkey', 'rsa.key', '-days', '-1', '-out', 'old.crt');
  const keys: TestKeys = {
    rsaKey: await text('rsa.key'),
    rsaCert: await text('rsa.crt'),
    ecKey: await text('ec.key'),
    ecChain: `${await text('ec.crt')}${await text('ca.crt')}`,
    p12: await base64('ec.p12'),
    legacyP12: await base64('legacy.p12'),
    noKeyP12: await base64('nokey.p12'),
    slowP12: await base64('slow.p12'),
    expiredCert: await text('old.crt'),
    otherCert: await text('other.crt'),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
  return keys;
};
