/**
 * The local stand-in for the Cognito user pool: it signs Cognito-style ID tokens that the API's
 * aws-jwt-verify verifier accepts. The RS256 key pair is generated once and kept in DATA_DIR,
 * so tokens outlive restarts; the public half is written as a JWKS file (LOCAL_JWKS_FILE) that
 * the API hands to its verifier with cacheJwks(), because aws-jwt-verify fetches only https.
 */
import { createPrivateKey, createPublicKey, generateKeyPair, type KeyObject, randomUUID } from 'node:crypto';
import { link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { calculateJwkThumbprint, SignJWT } from 'jose';

export const LOCAL_REGION = 'us-east-1';
export const LOCAL_USER_POOL_ID = 'us-east-1_localpool';
export const LOCAL_CLIENT_ID = 'local-client';
export const LOCAL_ISSUER = `https://cognito-idp.${LOCAL_REGION}.amazonaws.com/${LOCAL_USER_POOL_ID}`;

export interface Jwk {
  readonly kid: string;
  readonly alg: 'RS256';
  readonly kty: 'RSA';
  readonly use: 'sig';
  readonly n: string;
  readonly e: string;
}

export interface Jwks {
  readonly keys: readonly Jwk[];
}

export interface IssueTokenOptions {
  readonly sub: string;
  readonly email: string;
  /** @default 3600. Zero or negative issues an already expired token. */
  readonly ttlSeconds?: number;
  /** Tests only: claims that replace or add to the Cognito ones (e.g. another `aud` or `token_use`). */
  readonly claims?: Readonly<Record<string, unknown>>;
}

export interface LocalIssuer {
  /** The JWKS file for LOCAL_JWKS_FILE. */
  readonly jwksFile: string;
  readonly jwks: Jwks;
  issueToken(options: IssueTokenOptions): Promise<string>;
}

const generateRsaKeyPair = promisify(generateKeyPair);

const errorCode = (e: unknown): unknown => (e as NodeJS.ErrnoException | null)?.code;

/**
 * Reads the signing key, creating it when missing. Several processes may race here (the server
 * starting while `npm run token` runs): the key is written to a temporary file and linked into
 * place, which fails for all but the first, so everyone ends up with the same key.
 */
const loadOrCreateSigningKey = async (dir: string): Promise<KeyObject> => {
  const file = join(dir, 'signing-key.pem');
  try {
    return createPrivateKey(await readFile(file, 'utf8'));
  } catch (e) {
    if (errorCode(e) !== 'ENOENT') throw e;
  }
  await mkdir(dir, { recursive: true });
  const { privateKey } = await generateRsaKeyPair('rsa', { modulusLength: 2048 });
  const tmp = `${file}.${randomUUID()}.tmp`;
  await writeFile(tmp, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  try {
    await link(tmp, file);
  } catch (e) {
    if (errorCode(e) !== 'EEXIST') throw e;
  } finally {
    await rm(tmp, { force: true });
  }
  return createPrivateKey(await readFile(file, 'utf8'));
};

const publicJwk = async (privateKey: KeyObject): Promise<Jwk> => {
  const { n, e } = createPublicKey(privateKey).export({ format: 'jwk' });
  if (typeof n !== 'string' || typeof e !== 'string') throw new Error('local issuer: signing key is not RSA');
  // The RFC 7638 thumbprint: stable for the key, so the kid survives restarts with it.
  const kid = await calculateJwkThumbprint({ kty: 'RSA', n, e });
  return { kid, alg: 'RS256', kty: 'RSA', use: 'sig', n, e };
};

/** Writes only when the content changed, and atomically, so a reader never sees half a file. */
const writeFileIfChanged = async (file: string, content: string): Promise<void> => {
  const current = await readFile(file, 'utf8').catch(() => undefined);
  if (current === content) return;
  const tmp = `${file}.${randomUUID()}.tmp`;
  await writeFile(tmp, content);
  await rename(tmp, file);
};

/** The issuer whose keys live in `<dataDir>/issuer/`; creates them on first use. */
export const loadOrCreateIssuer = async (dataDir: string): Promise<LocalIssuer> => {
  const dir = join(dataDir, 'issuer');
  const privateKey = await loadOrCreateSigningKey(dir);
  const jwk = await publicJwk(privateKey);
  const jwks: Jwks = { keys: [jwk] };
  const jwksFile = join(dir, 'jwks.json');
  await writeFileIfChanged(jwksFile, `${JSON.stringify(jwks, null, 2)}\n`);

  return {
    jwksFile,
    jwks,
    async issueToken({ sub, email, ttlSeconds = 3600, claims = {} }) {
      if (!Number.isSafeInteger(ttlSeconds)) throw new RangeError('ttlSeconds must be an integer');
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        sub,
        email,
        email_verified: true,
        'cognito:username': sub,
        iss: LOCAL_ISSUER,
        aud: LOCAL_CLIENT_ID,
        token_use: 'id',
        auth_time: now,
        iat: now,
        exp: now + ttlSeconds,
        jti: randomUUID(),
        event_id: randomUUID(),
        origin_jti: randomUUID(),
        ...claims,
      })
        .setProtectedHeader({ alg: 'RS256', kid: jwk.kid })
        .sign(privateKey);
    },
  };
};
