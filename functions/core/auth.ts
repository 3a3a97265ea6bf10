/**
 * Credentials: `Authorization: Bearer <token>`, where the token is an API key (`pdf_live_…`) or a
 * Cognito-style session JWT verified with aws-jwt-verify (issuer, client id, token use, expiry).
 * Locally the verifier is handed the local issuer's JWKS; in the cloud it fetches Cognito's.
 * Tokens are never logged or echoed.
 */
import { CognitoJwtVerifier } from 'aws-jwt-verify';
import type { Jwks } from 'aws-jwt-verify/jwk';
import { isWellFormedApiKey, looksLikeApiKey } from '../domain/api-key-format.js';
import { ServiceError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import type { CredentialKind } from '../routes.js';
import type { AuthConfig } from './config.js';

/** Finds the account behind a well-formed API key, or undefined when it is unknown or revoked. */
export interface ApiKeyResolver {
  resolve(key: string): Promise<Principal | undefined>;
}

export type Authenticate = (
  authorization: string | undefined,
  allowed: readonly CredentialKind[],
) => Promise<Principal>;

const unauthenticated = (message: string) =>
  new ServiceError('UNAUTHENTICATED', message, { headers: { 'WWW-Authenticate': 'Bearer' } });
const invalidApiKey = () =>
  new ServiceError('INVALID_API_KEY', 'The API key is not valid', {
    headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
  });
const invalidSession = () =>
  new ServiceError('INVALID_SESSION_TOKEN', 'The session token is not valid or has expired', {
    headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
  });

export const createAuthenticator = (
  config: AuthConfig,
  apiKeys: ApiKeyResolver,
  onSession: (principal: Principal) => Promise<unknown>,
): Authenticate => {
  const verifier = CognitoJwtVerifier.create({
    userPoolId: config.userPoolId,
    clientId: config.clientId,
    tokenUse: 'id',
  });
  if (config.jwks !== undefined) verifier.cacheJwks(config.jwks as Jwks);

  return async (authorization, allowed) => {
    if (authorization === undefined || authorization.trim() === '') {
      throw unauthenticated('Send credentials as "Authorization: Bearer <API key or session token>"');
    }
    const match = /^Bearer[ ]+(\S*)\s*$/i.exec(authorization.trim());
    if (!match) throw unauthenticated('The Authorization header must use the Bearer scheme');
    const token = match[1] ?? '';
    if (token === '') throw unauthenticated('The Bearer token is empty');

    if (looksLikeApiKey(token)) {
      const principal = isWellFormedApiKey(token) ? await apiKeys.resolve(token) : undefined;
      if (!principal) throw invalidApiKey();
      if (!allowed.includes('apiKey')) {
        throw new ServiceError(
          'SESSION_REQUIRED',
          'This endpoint needs a signed-in session; API keys are not accepted',
        );
      }
      return principal;
    }

    let payload: Awaited<ReturnType<typeof verifier.verify>>;
    try {
      payload = await verifier.verify(token);
    } catch {
      throw invalidSession();
    }
    const principal: Principal = {
      accountId: payload.sub,
      email: typeof payload.email === 'string' ? payload.email : undefined,
      credential: 'session',
    };
    await onSession(principal);
    return principal;
  };
};
