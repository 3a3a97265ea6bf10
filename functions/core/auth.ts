/**
 * Credentials: `Authorization: Bearer <token>`, where the token is an API key (`pdf_live_…`) or a
 * Cognito-style session JWT verified with aws-jwt-verify (issuer, one of the accepted app client ids,
 * token use, expiry).
 * Locally the verifier is handed the local issuer's JWKS; in the cloud it fetches Cognito's.
 * Tokens are never logged or echoed.
 */
import { CognitoJwtVerifier } from 'aws-jwt-verify';
import type { Jwks } from 'aws-jwt-verify/jwk';
import type { ApiKeyResolver } from '../adapters/secrets-manager/api-key-digest.js';
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
const invalidApiKey = () => new ServiceError('INVALID_API_KEY', 'The API key is not valid');
const invalidSession = () =>
  new ServiceError('INVALID_SESSION_TOKEN', 'The session token is not valid or has expired');

/**
 * Checks the credential, then resolves the caller's account once for the whole request: a
 * session's account is created on its first request (contract), a key's exists since it was made.
 */
export const createAuthenticator = (
  config: AuthConfig,
  resolveApiKey: ApiKeyResolver,
  accounts: AccountStore,
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
    if (!match) throw unauthenticated('The Authorization header must use the Bearer scheme');
    const token = match[1] ?? '';
    if (token === '') throw unauthenticated('The Bearer token is empty');

    if (looksLikeApiKey(token)) {
      const apiKey = isWellFormedApiKey(token) ? await resolveApiKey(token) : undefined;
      if (!apiKey) throw invalidApiKey();
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
    } catch {
      throw invalidSession();
    }
    const email = typeof payload.email === 'string' ? payload.email : undefined;
    const account = await accounts.ensure(payload.sub, email);
    return { accountId: payload.sub, email, credential: 'session', plan: account.plan };
  };
};
