/**
 * Opens and checks what POST /v1/signing-keys uploads (domain/signing/signing-keys.ts, KeyImport):
 * a PEM private key and its certificate chain, a PKCS#12 and its passphrase, or a KMS key's ARN
 * and its chain. PKCS#12 is read with PKI.js (already in the renderer's bundle for the CMS
 * signature: no new dependency), which checks the file's MAC with the passphrase before it
 * decrypts anything; keys and certificates are then node:crypto's. PKI.js decrypts PBES2 (what
 * OpenSSL 3 writes by default: AES-256-CBC, PBKDF2); a legacy file (RC2 or 3DES, OpenSSL 1.x's
 * default) is refused with what to do instead.
 *
 * Every refusal is a 422 naming the field; none repeats the passphrase or any key material.
 */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import * as pkijs from 'pkijs';
import type { ErrorCode } from '../../domain/common/errors.js';
import { ServiceError } from '../../domain/common/errors.js';
import type {
  ImportedKey,
  KeyImport,
  KmsPublicKey,
  SigningAlgorithm,
  SigningKeyUpload,
} from '../../domain/signing/signing-keys.js';
import { SIGNING_KEY_TAG } from '../../wiring.js';

const BAG = {
  key: '1.2.840.113549.1.12.10.1.1',
  shroudedKey: '1.2.840.113549.1.12.10.1.2',
  certificate: '1.2.840.113549.1.12.10.1.3',
} as const;

/** RSA keys shorter than this are refused (NIST SP 800-131A: 2048 bits from 2014). */
const MIN_RSA_BITS = 2048;
/** A PKCS#12's MAC iterations beyond this are refused (OpenSSL writes 2048; a bound on the CPU one upload costs). */
const MAX_PKCS12_ITERATIONS = 100_000;

const refuse = (field: string, issue: string, code: ErrorCode = 'INVALID_SIGNING_KEY'): ServiceError =>
  new ServiceError(code, `${field} ${issue}`, { details: [{ field, issue }] });

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

const certificatesOf = (pem: string, field: string): X509Certificate[] => {
  const found = [...pem.matchAll(PEM_CERTIFICATE)].map(([block]) => block);
  if (found.length === 0) throw refuse(field, 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  return found.map((block) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw refuse(field, 'holds a certificate that cannot be read');
    }
  });
};

const algorithmOf = (key: KeyObject, field: string): SigningAlgorithm => {
  if (key.asymmetricKeyType === 'rsa') {
    if ((key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) {
      throw refuse(field, `is an RSA key shorter than ${MIN_RSA_BITS} bits`);
    }
    return 'RSA';
  }
  if (key.asymmetricKeyType === 'ec') return 'ECDSA';
  throw refuse(field, 'is neither an RSA nor an ECDSA key (PAdES signs with these)');
};

/** The chain with the signer's certificate first; checked for its time of validity at `now`. */
const chainOf = (
  certificates: readonly X509Certificate[],
  signer: (c: X509Certificate) => boolean,
  field: string,
  keyField: string,
  now: Date,
) => {
  const leaf = certificates.find(signer);
  if (!leaf) throw refuse(keyField, `is not the key of any certificate in ${field}`);
  const expiresAt = new Date(leaf.validTo);
  if (expiresAt.getTime() <= now.getTime()) {
    throw refuse(field, `expired on ${expiresAt.toISOString()}`, 'SIGNING_CERTIFICATE_EXPIRED');
  }
  if (new Date(leaf.validFrom).getTime() > now.getTime()) {
    throw refuse(field, `is not valid before ${new Date(leaf.validFrom).toISOString()}`);
  }
  const chain = [leaf, ...certificates.filter((c) => c !== leaf)];
  return {
    certificatePem: chain.map((c) => c.toString().trim()).join('\n'),
    subject: leaf.subject.replaceAll('\n', ', '),
    expiresAt,
  };
};

const fromKey = (
  key: KeyObject,
  certificates: X509Certificate[],
  fields: Fields,
  now: Date,
): ImportedKey => ({
  ...chainOf(certificates, (c) => c.checkPrivateKey(key), fields.chain, fields.key, now),
  algorithm: algorithmOf(key, fields.key),
  privateKeyPem: key.export({ type: 'pkcs8', format: 'pem' }).toString(),
});

interface Fields {
  readonly key: string;
  readonly chain: string;
}

const fromPem = (privateKeyPem: string, certificatePem: string, now: Date): ImportedKey => {
  let key: KeyObject;
  try {
    key = createPrivateKey(privateKeyPem);
  } catch {
    throw refuse('private_key_pem', 'is not a PEM private key (PKCS#8, PKCS#1 or SEC1), unencrypted');
  }
  return fromKey(
    key,
    certificatesOf(certificatePem, 'certificate_pem'),
    {
      key: 'private_key_pem',
      chain: 'certificate_pem',
    },
    now,
  );
};

const PBES2 = '1.2.840.113549.1.5.13';
const PBKDF2 = '1.2.840.113549.1.5.12';
const ENCRYPTED_DATA = '1.2.840.113549.1.7.6';

/** The PBKDF2 iterations an encryption algorithm asks for (PBES2), or 0 for another algorithm. */
const iterationsOf = (algorithm: pkijs.AlgorithmIdentifier | undefined): number => {
  if (algorithm?.algorithmId !== PBES2) return 0;
  const pbes2 = new pkijs.PBES2Params({ schema: algorithm.algorithmParams });
  if (pbes2.keyDerivationFunc.algorithmId !== PBKDF2) return 0;
  return new pkijs.PBKDF2Params({ schema: pbes2.keyDerivationFunc.algorithmParams }).iterationCount;
};

/**
 * The most PBKDF2 iterations any encrypted part of the file asks for: each is work this function
 * does for the caller, so a file asking for millions is refused before any is done.
 */
const mostIterations = (safe: pkijs.AuthenticatedSafe): number => {
  let most = 0;
  for (const info of safe.safeContents) {
    if (info.contentType !== ENCRYPTED_DATA) continue;
    // From its own bytes: parsing the content in place would change what decrypting reads later.
    const data = pkijs.EncryptedData.fromBER(info.content.toBER(false));
    most = Math.max(most, iterationsOf(data.encryptedContentInfo.contentEncryptionAlgorithm));
  }
  return most;
};

const bytesOf = (view: ArrayBuffer | ArrayBufferView): Uint8Array =>
  view instanceof ArrayBuffer
    ? new Uint8Array(view)
    : new Uint8Array(view.buffer, view.byteOffset, view.byteLength);

const fromPkcs12 = async (der: Uint8Array, passphrase: string, now: Date): Promise<ImportedKey> => {
  const field = 'pkcs12_base64';
  let pfx: pkijs.PFX;
  try {
    pfx = pkijs.PFX.fromBER(der.buffer.slice(der.byteOffset, der.byteOffset + der.byteLength) as ArrayBuffer);
  } catch {
    throw refuse(field, 'is not a PKCS#12 file (DER, base64-encoded)');
  }
  // Each PBKDF2 iteration is work the function does for the caller: OpenSSL writes 2048.
  if ((pfx.macData?.iterations ?? 1) > MAX_PKCS12_ITERATIONS) {
    throw refuse(field, `asks for more than ${MAX_PKCS12_ITERATIONS} key derivation iterations`);
  }
  const password = new TextEncoder().encode(passphrase).buffer as ArrayBuffer;
  try {
    await pfx.parseInternalValues({ password, checkIntegrity: true });
  } catch {
    // The MAC is checked first: a wrong passphrase fails here, before anything is decrypted.
    throw refuse('passphrase', 'does not open the PKCS#12 file', 'SIGNING_KEY_PASSPHRASE_INCORRECT');
  }
  const safe = pfx.parsedValue?.authenticatedSafe;
  if (!safe) throw refuse(field, 'holds no contents');
  let iterations: number;
  try {
    iterations = mostIterations(safe);
  } catch {
    throw refuse(field, 'holds contents that cannot be read');
  }
  if (iterations > MAX_PKCS12_ITERATIONS) {
    throw refuse(field, `asks for more than ${MAX_PKCS12_ITERATIONS} key derivation iterations`);
  }
  try {
    await safe.parseInternalValues({ safeContents: safe.safeContents.map(() => ({ password })) });
  } catch {
    throw refuse(
      field,
      'is encrypted with a legacy cipher (RC2 or 3DES): export it again with AES-256 (OpenSSL 3: openssl pkcs12 -export, its default)',
    );
  }
  const keys: KeyObject[] = [];
  const certificates: X509Certificate[] = [];
  for (const contents of safe.parsedValue?.safeContents ?? []) {
    for (const bag of contents.value.safeBags) {
      try {
        if (bag.bagId === BAG.certificate) {
          const value = (bag.bagValue as pkijs.CertBag).parsedValue;
          if (value instanceof pkijs.Certificate)
            certificates.push(new X509Certificate(bytesOf(value.toSchema().toBER())));
        } else if (bag.bagId === BAG.shroudedKey || bag.bagId === BAG.key) {
          let info: pkijs.PrivateKeyInfo | undefined;
          if (bag.bagId === BAG.key) info = bag.bagValue as pkijs.PrivateKeyInfo;
          else {
            // Public in PKI.js's own PKCS#12 example, protected in its types only.
            const shrouded = bag.bagValue as unknown as pkijs.PKCS8ShroudedKeyBag & {
              parseInternalValues(parameters: { password: ArrayBuffer }): Promise<void>;
            };
            if (iterationsOf(shrouded.encryptionAlgorithm) > MAX_PKCS12_ITERATIONS) {
              throw refuse(field, `asks for more than ${MAX_PKCS12_ITERATIONS} key derivation iterations`);
            }
            await shrouded.parseInternalValues({ password });
            info = shrouded.parsedValue;
          }
          if (info) {
            keys.push(
              createPrivateKey({ key: Buffer.from(info.toSchema().toBER()), format: 'der', type: 'pkcs8' }),
            );
          }
        }
      } catch (e) {
        if (e instanceof ServiceError) throw e;
        throw refuse(field, 'holds a key or certificate that cannot be read (a legacy cipher?)');
      }
    }
  }
  const [key, ...more] = keys;
  if (!key) throw refuse(field, 'holds no private key');
  if (more.length > 0) throw refuse(field, 'holds more than one private key');
  if (certificates.length === 0) throw refuse(field, 'holds no certificate');
  return fromKey(key, certificates, { key: field, chain: field }, now);
};

/** Why KMS would not give a key's public half, as the caller can act on it (never the ARN again). */
const KMS_REFUSALS: Readonly<Record<string, string>> = {
  NotFoundException: 'names no key of this deployment’s AWS account and region',
  DisabledException: 'names a disabled key: enable it first',
  KMSInvalidStateException: 'names a key pending deletion or import: use an enabled key',
  AccessDeniedException: `names a key the service may not read: tag it ${SIGNING_KEY_TAG.key}=${SIGNING_KEY_TAG.value} (docs/api/pdf.md, Digital signatures)`,
};

const fromKms = async (
  kmsKeyArn: string,
  certificatePem: string,
  now: Date,
  kmsPublicKey: KmsPublicKey,
): Promise<ImportedKey> => {
  const certificates = certificatesOf(certificatePem, 'certificate_pem');
  // The signer's certificate is the first, and it must certify the KMS key: a certificate of
  // another key would make signatures that pdfsig and every reader refuse.
  let kmsKey: Awaited<ReturnType<KmsPublicKey>>;
  try {
    kmsKey = await kmsPublicKey(kmsKeyArn);
  } catch (e) {
    if (e instanceof ServiceError) throw e;
    const name = (e as Error).name;
    throw refuse('kms_key_arn', KMS_REFUSALS[name] ?? `could not be read from AWS KMS (${name}): try again`);
  }
  if (kmsKey.keyUsage !== undefined && kmsKey.keyUsage !== 'SIGN_VERIFY') {
    throw refuse('kms_key_arn', 'names a key that does not sign (its KeyUsage is not SIGN_VERIFY)');
  }
  const certified = Buffer.from(
    (certificates[0] as X509Certificate).publicKey.export({ type: 'spki', format: 'der' }),
  );
  if (!certified.equals(Buffer.from(kmsKey.spki))) {
    throw refuse(
      'certificate_pem',
      "certifies another key than kms_key_arn's: have it issued for the KMS key's public key (aws kms get-public-key)",
    );
  }
  const chain = chainOf(
    certificates,
    (c) => c === certificates[0],
    'certificate_pem',
    'certificate_pem',
    now,
  );
  return {
    ...chain,
    algorithm: algorithmOf((certificates[0] as X509Certificate).publicKey, 'certificate_pem'),
    privateKeyPem: null,
  };
};

/** A function handed no KMS (every one but signing-keys): a KMS key is refused. */
const noKms: KmsPublicKey = async () => {
  throw refuse('kms_key_arn', 'cannot be registered here: this function reads no AWS KMS keys');
};

/** The upload check, with the KMS keys' public halves read through `kmsPublicKey`. */
export const createSigningKeyImport =
  (kmsPublicKey: KmsPublicKey = noKms): KeyImport =>
  async (upload: SigningKeyUpload, now: Date) => {
    switch (upload.kind) {
      case 'pem':
        return fromPem(upload.privateKeyPem, upload.certificatePem, now);
      case 'pkcs12':
        return fromPkcs12(upload.pkcs12, upload.passphrase, now);
      case 'kms':
        return fromKms(upload.kmsKeyArn, upload.certificatePem, now, kmsPublicKey);
    }
  };
