/**
 * Signing keys (issue 34): an account's keys that a render's `signature` signs with. Two kinds:
 * - `uploaded`: a private key the account sent (PEM, or a PKCS#12 and its passphrase), kept only
 *   sealed (AES-256-GCM, the SecretBox webhook secrets and order passwords use, under its own
 *   derived key), bound to its account and id; shown never again, in no answer, log or order.
 * - `kms`: an AWS KMS asymmetric key the deployment owns, named by its ARN: the private key never
 *   leaves KMS; the renderer asks kms:Sign for the digest of the signed attributes, nothing else.
 * Both carry the signer's X.509 certificate chain (public). Whatever is uploaded is checked here,
 * before anything is kept (KeyImport): a wrong passphrase, no private key, a key that is not the
 * certificate's, an expired certificate, each a 422 naming the field.
 */
import { isoNow } from '../common/clock.js';
import { ServiceError } from '../common/errors.js';
import { newSigningKeyId, SIGNING_KEY_ID } from '../common/ids.js';
import type { Clock } from '../common/ports.js';
import type { Principal } from '../common/principal.js';
import type { SecretBox } from '../webhooks/webhooks.js';

import type { SigningAlgorithm, SigningMaterial } from './signing-material.js';

export type { SigningAlgorithm, SigningMaterial } from './signing-material.js';

/** A key as the API shows it: never its private part. */
export interface SigningKey {
  readonly id: string;
  readonly name: string;
  readonly kind: 'uploaded' | 'kms';
  readonly algorithm: SigningAlgorithm;
  /** The signer's certificate first, then its issuers (PEM). */
  readonly certificate_pem: string;
  readonly certificate_subject: string;
  readonly certificate_expires_at: string;
  readonly kms_key_arn: string | null;
  readonly created_at: string;
}

/** A key as the store keeps it: an uploaded key's private key sealed (SecretBox), never in clear. */
export interface StoredSigningKey extends SigningKey {
  readonly account_id: string;
  readonly sealed_private_key: string | null;
}

export type SigningKeyCreateOutcome = { readonly kind: 'created' } | { readonly kind: 'limitReached' };

export interface SigningKeyStore {
  /** Creates the key unless the account has `limit` of them. */
  create(key: StoredSigningKey, limit: number): Promise<SigningKeyCreateOutcome>;
  get(accountId: string, keyId: string): Promise<StoredSigningKey | undefined>;
  /** Newest first. */
  list(accountId: string): Promise<StoredSigningKey[]>;
  /** Deletes it; the key as it was, or undefined when the account has none such. */
  delete(accountId: string, keyId: string): Promise<StoredSigningKey | undefined>;
}

/** What a caller uploads: a PEM key and its chain, a PKCS#12, or a KMS key's ARN and its chain. */
export type SigningKeyUpload =
  | { readonly kind: 'pem'; readonly privateKeyPem: string; readonly certificatePem: string }
  | { readonly kind: 'pkcs12'; readonly pkcs12: Uint8Array; readonly passphrase: string }
  | { readonly kind: 'kms'; readonly kmsKeyArn: string; readonly certificatePem: string };

/** An upload checked: the private key (uploaded keys only, PKCS#8 PEM) and the certificate chain. */
export interface ImportedKey {
  readonly privateKeyPem: string | null;
  readonly certificatePem: string;
  readonly algorithm: SigningAlgorithm;
  readonly subject: string;
  readonly expiresAt: Date;
}

/**
 * Checks an upload and opens it (functions/adapters/crypto/signing-key-import.ts); throws a
 * ServiceError (422, the field named) for anything it cannot sign with at `now`.
 */
export type KeyImport = (upload: SigningKeyUpload, now: Date) => Promise<ImportedKey>;

/**
 * AWS KMS asked to sign `message` (RAW: KMS hashes it with SHA-256) with the asymmetric key
 * `keyArn`: the signature, DER for ECDSA. The renderer's port (adapters/kms/kms-signer.ts; a
 * memory stand-in for tests, adapters/memory/kms.ts).
 */
export type KmsSign = (
  keyArn: string,
  algorithm: SigningAlgorithm,
  message: Uint8Array,
) => Promise<Uint8Array>;

/**
 * The public half of the AWS KMS key `keyArn` (its DER SubjectPublicKeyInfo) and what the key may
 * do, read when the key is registered, so that a certificate that certifies another key is refused
 * then rather than making signatures no reader accepts (adapters/kms/kms-public-key.ts; a memory
 * stand-in for tests, adapters/memory/kms.ts). Throws an Error whose `name` is KMS's exception's.
 */
export type KmsPublicKey = (
  keyArn: string,
) => Promise<{ readonly spki: Uint8Array; readonly keyUsage: string | undefined }>;

/** At most this many keys an account (each is a small item, and a key an attacker cannot fill a table with). */
export const MAX_SIGNING_KEYS = 20;

const sealContext = (accountId: string, keyId: string) => `signing-key:${accountId}:${keyId}`;

const notFound = (keyId: string) =>
  new ServiceError('SIGNING_KEY_NOT_FOUND', `Signing key ${keyId} was not found`);

export const signingKeyView = (k: SigningKey): SigningKey => ({
  id: k.id,
  name: k.name,
  kind: k.kind,
  algorithm: k.algorithm,
  certificate_pem: k.certificate_pem,
  certificate_subject: k.certificate_subject,
  certificate_expires_at: k.certificate_expires_at,
  kms_key_arn: k.kms_key_arn,
  created_at: k.created_at,
});

export interface SigningKeyDeps {
  readonly store: SigningKeyStore;
  /** Seals uploaded private keys; asked for only when one is stored or opened. */
  readonly box: () => SecretBox;
  readonly importKey: KeyImport;
  readonly clock: Clock;
  /** @default MAX_SIGNING_KEYS */
  readonly maxKeys?: number;
}

/** The signing-keys resource's use cases (session only). */
export const createSigningKeyManagement = (deps: SigningKeyDeps) => {
  const { store, clock } = deps;
  const find = async (principal: Principal, keyId: string) => {
    const key = SIGNING_KEY_ID.test(keyId) ? await store.get(principal.accountId, keyId) : undefined;
    if (!key) throw notFound(keyId);
    return key;
  };
  return {
    async create(principal: Principal, name: string, upload: SigningKeyUpload): Promise<SigningKey> {
      const now = clock.now();
      const imported = await deps.importKey(upload, now);
      const id = newSigningKeyId();
      const stored: StoredSigningKey = {
        id,
        name,
        kind: upload.kind === 'kms' ? 'kms' : 'uploaded',
        algorithm: imported.algorithm,
        certificate_pem: imported.certificatePem,
        certificate_subject: imported.subject,
        certificate_expires_at: isoNow(imported.expiresAt),
        kms_key_arn: upload.kind === 'kms' ? upload.kmsKeyArn : null,
        created_at: isoNow(now),
        account_id: principal.accountId,
        sealed_private_key:
          imported.privateKeyPem === null
            ? null
            : await deps.box().seal(imported.privateKeyPem, sealContext(principal.accountId, id)),
      };
      const outcome = await store.create(stored, deps.maxKeys ?? MAX_SIGNING_KEYS);
      if (outcome.kind === 'limitReached') {
        throw new ServiceError(
          'SIGNING_KEY_LIMIT_REACHED',
          `An account has at most ${deps.maxKeys ?? MAX_SIGNING_KEYS} signing keys: delete one first`,
        );
      }
      return signingKeyView(stored);
    },
    list: async (principal: Principal): Promise<SigningKey[]> =>
      (await store.list(principal.accountId)).map(signingKeyView),
    get: async (principal: Principal, keyId: string): Promise<SigningKey> =>
      signingKeyView(await find(principal, keyId)),
    async delete(principal: Principal, keyId: string): Promise<SigningKey> {
      const deleted = SIGNING_KEY_ID.test(keyId) ? await store.delete(principal.accountId, keyId) : undefined;
      if (!deleted) throw notFound(keyId);
      return signingKeyView(deleted);
    },
  };
};

/** A render's signature names a key of the caller's: refused at acceptance (422), nothing charged. */
export const unknownSigningKey = (keyId: string) =>
  new ServiceError('INVALID_SIGNING_KEY', `signature.key_id ${keyId} is not one of your signing keys`, {
    details: [{ field: 'signature.key_id', issue: 'is not one of your signing keys' }],
  });

/**
 * The keys a render signs with: `exists` at acceptance (another account's key is not found: keys
 * live in their account's partition), `material` when the render is called (the private key
 * opened then, and handed to the renderer in that call only).
 */
export const createSigningKeyResolver = (deps: Pick<SigningKeyDeps, 'store' | 'box'>) => ({
  async check(accountId: string, keyId: string): Promise<void> {
    const key = SIGNING_KEY_ID.test(keyId) ? await deps.store.get(accountId, keyId) : undefined;
    if (!key) throw unknownSigningKey(keyId);
  },
  async material(accountId: string, keyId: string): Promise<SigningMaterial | undefined> {
    const key = SIGNING_KEY_ID.test(keyId) ? await deps.store.get(accountId, keyId) : undefined;
    if (!key) return undefined;
    if (key.kind === 'kms' && key.kms_key_arn) {
      return {
        kind: 'kms',
        algorithm: key.algorithm,
        certificatePem: key.certificate_pem,
        kmsKeyArn: key.kms_key_arn,
      };
    }
    if (!key.sealed_private_key) return undefined;
    return {
      kind: 'uploaded',
      algorithm: key.algorithm,
      certificatePem: key.certificate_pem,
      privateKeyPem: await deps.box().open(key.sealed_private_key, sealContext(accountId, key.id)),
    };
  },
});

export type SigningKeyResolver = ReturnType<typeof createSigningKeyResolver>;

/** A render's signature key is the caller's (422 INVALID_SIGNING_KEY otherwise, nothing held). */
export const checkSigningKey = async (
  keys: Pick<SigningKeyResolver, 'check'> | undefined,
  accountId: string,
  keyId: string,
): Promise<void> => {
  if (!keys) throw unknownSigningKey(keyId);
  await keys.check(accountId, keyId);
};
