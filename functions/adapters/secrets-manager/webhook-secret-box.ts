/**
 * Webhook signing secrets at rest: sealed with AES-256-GCM under a key derived (HKDF-SHA256) from
 * the deployment's API-key secret, so the table never holds one in clear and no second secret has
 * to be provisioned. Each is bound (as additional authenticated data) to its endpoint: a sealed
 * secret copied onto another item does not open.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { ApiKeySecretSource, AwsConfig } from '../../core/config.js';
import type { SecretBox } from '../../domain/webhooks/webhooks.js';
import { secretLoader } from './api-key-digest.js';

const VERSION = 'v1';
const KEY_INFO = 'pdf-service webhook signing secrets v1';

/** Render orders' passwords (domain/renders/order-secrets.ts): another key from the same secret. */
const ORDER_KEY_INFO = 'pdf-service render order passwords v1';

/** Uploaded signing keys' private keys (domain/signing/signing-keys.ts): a third key from the same secret. */
const SIGNING_KEY_INFO = 'pdf-service signing keys v1';

const deriveKey = (secret: string, info: string): Buffer =>
  Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), info, 32));

/** A box from the secret itself (tests, and the loaded secret); `info` names the key's use. */
export const secretBoxOf = (loadSecret: () => Promise<string>, info = KEY_INFO): SecretBox => {
  let key: Promise<Buffer> | undefined;
  const keyOf = () => {
    key ??= loadSecret().then(
      (secret) => deriveKey(secret, info),
      (e: unknown) => {
        key = undefined;
        throw e;
      },
    );
    return key;
  };
  return {
    async seal(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', await keyOf(), iv);
      cipher.setAAD(Buffer.from(context));
      const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [VERSION, iv, sealed, cipher.getAuthTag()]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
    },
    async open(sealed, context) {
      const [version, iv, data, tag] = sealed.split('.');
      if (version !== VERSION || !iv || data === undefined || !tag) throw new Error('not a sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', await keyOf(), Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    },
  };
};

export const createWebhookSecretBox = (source: ApiKeySecretSource, aws: AwsConfig): SecretBox =>
  secretBoxOf(secretLoader(source, aws));

/** The box of render orders' passwords (a `protection`'s), under its own derived key. */
export const createOrderSecretBox = (source: ApiKeySecretSource, aws: AwsConfig): SecretBox =>
  secretBoxOf(secretLoader(source, aws), ORDER_KEY_INFO);

/** The box of uploaded signing keys' private keys, under its own derived key. */
export const createSigningKeySecretBox = (source: ApiKeySecretSource, aws: AwsConfig): SecretBox =>
  secretBoxOf(secretLoader(source, aws), SIGNING_KEY_INFO);

/** Idempotency records' body hashes (domain/renders/idempotency.ts, keyedIdempotency): a fourth derived key. */
const BODY_HASH_KEY_INFO = 'pdf-service idempotency body hashes v1';

/** HMAC-SHA256 (hex) of a body hash under a key derived from the API-key secret. */
export const createBodyHashDigest = (source: ApiKeySecretSource, aws: AwsConfig) => {
  const load = secretLoader(source, aws);
  let key: Promise<Buffer> | undefined;
  return async (hash: string): Promise<string> => {
    key ??= load().then(
      (secret) => deriveKey(secret, BODY_HASH_KEY_INFO),
      (e: unknown) => {
        key = undefined;
        throw e;
      },
    );
    return createHmac('sha256', await key)
      .update(hash)
      .digest('hex');
  };
};

const EXTERNAL_ID_KEY_INFO = 'pdf-service destination external ids v1';

/**
 * A destination's external id (domain/destinations/destinations.ts): an HMAC of the account and
 * the role under a key derived from the API-key secret, so that the same account naming the same
 * role gets the same id (the customer writes it into the role's trust policy, then creates the
 * destination again), and another account naming that role gets another.
 */
export const createExternalIdDigest = (source: ApiKeySecretSource, aws: AwsConfig) => {
  const load = secretLoader(source, aws);
  let key: Promise<Buffer> | undefined;
  return async (accountId: string, roleArn: string): Promise<string> => {
    key ??= load().then(
      (secret) => deriveKey(secret, EXTERNAL_ID_KEY_INFO),
      (e: unknown) => {
        key = undefined;
        throw e;
      },
    );
    return createHmac('sha256', await key)
      .update(`${accountId}\n${roleArn}`)
      .digest('hex')
      .slice(0, 40);
  };
};
