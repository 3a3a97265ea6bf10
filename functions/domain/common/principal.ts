/** The credential kinds a route may accept (an API key on a session-only route answers 403). */
export type CredentialKind = 'session' | 'apiKey';

/** Who is calling: the account (the session token's `sub`), how it proved it, and its plan. */
export interface Principal {
  readonly accountId: string;
  readonly email: string | undefined;
  readonly credential: CredentialKind;
  /** Set when the caller used an API key. */
  readonly apiKeyId?: string;
  /** The account's plan name, resolved once per request. */
  readonly plan: string;
}
