/**
 * Credentials: `Authorization: Bearer <token>`, where the token is an API key (`pdf_live_…`) or a
 * Cognito-style session JWT verified with aws-jwt-verify (issuer, one of the accepted app client ids,
 * token use, expiry).
 * Locally the verifier is handed the local issuer's JWKS; in the cloud it fetches Cognito's.
 * Tokens are never logged or echoed.
 */
import { CognitoJwtVerifier } from 'aws-jwt-verify';
import {
  CognitoJwtInvalidClientIdError,
  CognitoJwtInvalidTokenUseError,
  JwtExpiredError,
  JwtInvalidIssuerError,
  JwtInvalidSignatureError,
  JwtParseError,
} from 'aws-jwt-verify/error';
import type { Jwks } from 'aws-jwt-verify/jwk';
import type { ApiKeyResolver, ApiKeyRevocation } from '../adapters/secrets-manager/api-key-digest.js';
import type { AccountStore } from '../domain/accounts/accounts.js';
import { isWellFormedApiKey, looksLikeApiKey } from '../domain/accounts/api-key-format.js';
import { ServiceError } from '../domain/common/errors.js';
import type { CredentialKind, Principal } from '../domain/common/principal.js';
import type { AuthConfig } from './config.js';

export type Authenticate = (
  authorization: string | undefined,
  allowed: readonly CredentialKind[],
) => Promise<Principal>;

const unauthenticated = (message: string) => new ServiceError('UNAUTHENTICATED', message);
const invalidApiKey = (message: string) => new ServiceError('INVALID_API_KEY', message);
const invalidSession = (message: string) => new ServiceError('INVALID_SESSION_TOKEN', message);

/** Where a caller gets a new credential: said in every refusal that needs one. */
const NEW_KEY = 'make a new one (POST /v1/api-keys with a session, or the dashboard)';
const NEW_SESSION = 'sign in again for a new one (locally: npm run token)';

/** An API key's id (`key_…`, what the key list shows) sent where the key itself belongs. */
const API_KEY_ID = /^key_[0-9A-Za-z]+$/;
/** A JWT's shape: three base64url parts (a session token is a Cognito ID token). */
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/;

/** The `exp` of a JWT whose expiry failed verification, read for the message only. */
const expiryOf = (token: string): string | undefined => {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
    return typeof payload?.exp === 'number' ? new Date(payload.exp * 1000).toISOString() : undefined;
  } catch {
    return undefined;
  }
};

/** Why a token of a session's shape was refused, in words that say what to send instead. */
const sessionRefusal = (error: unknown, token: string): string => {
  if (error instanceof JwtExpiredError) {
    const at = expiryOf(token);
    return `The session token expired${at ? ` at ${at}` : ''}: ${NEW_SESSION}`;
  }
  if (error instanceof CognitoJwtInvalidTokenUseError) {
    return 'The session token is not an ID token (an access token?): send the ID token';
  }
  if (error instanceof CognitoJwtInvalidClientIdError) {
    return "The session token was issued for another app client than this deployment's";
  }
  if (error instanceof JwtInvalidIssuerError) {
    return "The session token was issued by another user pool than this deployment's";
  }
  if (error instanceof JwtInvalidSignatureError) {
    return "The session token is not signed by this deployment's user pool (its signature does not verify)";
  }
  if (error instanceof JwtParseError) {
    return 'The session token is malformed (not a JWT that can be read): send it as it was issued';
  }
  return `The session token is not valid or has expired: ${NEW_SESSION}`;
};

/**
 * Checks the credential, then resolves the caller's account once for the whole request: a
 * session's account is created on its first request (contract), a key's exists since it was made.
 */
export const createAuthenticator = (
  config: AuthConfig,
  resolveApiKey: ApiKeyResolver,
  accounts: AccountStore,
  /** When a refused key was revoked, to say so (only asked about a key that did not resolve). */
  revokedAt?: ApiKeyRevocation,
): Authenticate => {
  const verifier = CognitoJwtVerifier.create({
    userPoolId: config.userPoolId,
    clientId: [...config.clientIds],
    tokenUse: 'id',
  });
  if (config.jwks !== undefined) verifier.cacheJwks(config.jwks as Jwks);

  return async (authorization, allowed) => {
    if (authorization === undefined || authorization.trim() === '') {
      throw unauthenticated('Send credentials as "Authorization: Bearer <API key or session token>"');
    }
    const match = /^Bearer[ ]+(\S*)\s*$/i.exec(authorization.trim());
    if (!match) {
      const bare = authorization.trim();
      throw unauthenticated(
        looksLikeApiKey(bare) || JWT_SHAPE.test(bare)
          ? 'The Authorization header needs the Bearer scheme: send "Authorization: Bearer <credential>"'
          : `The Authorization header must use the Bearer scheme, not ${JSON.stringify(bare.split(/\s/)[0]?.slice(0, 20))}: send "Authorization: Bearer <API key or session token>"`,
      );
    }
    const token = match[1] ?? '';
    if (token === '') throw unauthenticated('The Bearer token is empty');

    if (API_KEY_ID.test(token)) {
      throw invalidApiKey(
        "This is an API key's id (key_…), not the key: send the key itself (pdf_live_…), shown once when it was made; if it was not kept, " +
          NEW_KEY,
      );
    }
    if (looksLikeApiKey(token)) {
      if (!isWellFormedApiKey(token)) {
        throw invalidApiKey(
          'The API key is malformed: pdf_live_ and 40 letters and digits whose last 6 check the rest, and these do not (a character mistyped, missing or added?); copy it again',
        );
      }
      const apiKey = await resolveApiKey(token);
      if (!apiKey) {
        const revoked = revokedAt ? await revokedAt(token) : undefined;
        throw invalidApiKey(
          revoked
            ? `The API key was revoked at ${revoked}: ${NEW_KEY}`
            : `The API key is not known to this deployment (made on another one, or its account was deleted): ${NEW_KEY}`,
        );
      }
      if (!allowed.includes('apiKey')) {
        throw new ServiceError(
          'SESSION_REQUIRED',
          'This endpoint needs a signed-in session; API keys are not accepted',
        );
      }
      const account = await accounts.ensure(apiKey.accountId, undefined);
      return {
        accountId: apiKey.accountId,
        email: undefined,
        credential: 'apiKey',
        apiKeyId: apiKey.id,
        plan: account.plan,
      };
    }

    let payload: Awaited<ReturnType<typeof verifier.verify>>;
    try {
      payload = await verifier.verify(token);
    } catch (e) {
      throw invalidSession(
        JWT_SHAPE.test(token)
          ? sessionRefusal(e, token)
          : 'The Bearer token is neither an API key (pdf_live_…) nor a session token (a JWT: three parts separated by dots)',
      );
    }
    const email = typeof payload.email === 'string' ? payload.email : undefined;
    const account = await accounts.ensure(payload.sub, email);
    return { accountId: payload.sub, email, credential: 'session', plan: account.plan };
  };
};
