import type { CredentialKind } from '../routes.js';

/** Who is calling: the account (the session token's `sub`) and how it proved it. */
export interface Principal {
  readonly accountId: string;
  readonly email: string | undefined;
  readonly credential: CredentialKind;
  /** Set when the caller used an API key. */
  readonly apiKeyId?: string;
}
