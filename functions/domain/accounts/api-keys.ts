/**
 * API keys as the domain sees them: records (never the key itself) and the store port; the
 * DynamoDB adapter (functions/adapters/dynamodb/api-keys.ts) explains the item layout.
 */
export interface ActiveApiKey {
  readonly id: string;
  readonly accountId: string;
}

/** A key as the API shows it; the key itself only in the creation answer. */
export interface ApiKeyRecord {
  readonly id: string;
  readonly prefix: string;
  readonly name: string;
  readonly created_at: string;
  readonly last_used_at: string | null;
  readonly revoked_at: string | null;
}

export interface NewApiKey {
  readonly id: string;
  readonly digest: string;
  readonly prefix: string;
  readonly name: string;
}

/** A new key's record as every store writes it, made at `at`: never used, not revoked. */
export const newApiKeyRecord = (key: NewApiKey, at: string): ApiKeyRecord => ({
  id: key.id,
  prefix: key.prefix,
  name: key.name,
  created_at: at,
  last_used_at: null,
  revoked_at: null,
});

export type CreateOutcome =
  | { readonly kind: 'created'; readonly record: ApiKeyRecord }
  | { readonly kind: 'limitReached' };

export interface ApiKeyStore {
  /** The key with this digest, when it exists and is not revoked; marks it used. */
  useByDigest(digest: string): Promise<ActiveApiKey | undefined>;
  /** When the key with this digest was revoked; undefined when it is active or unknown. */
  revokedAt(digest: string): Promise<string | undefined>;
  /** Creates a key unless the account has `limit` active keys. */
  create(accountId: string, key: NewApiKey, limit: number): Promise<CreateOutcome>;
  /** The account's keys, newest first, revoked ones included. */
  list(accountId: string): Promise<ApiKeyRecord[]>;
  /**
   * Revokes the account's key `keyId`: the record first (from then on the key is refused),
   * then its slot. Revoking again returns the record unchanged. Undefined when the account has
   * no such key.
   */
  revoke(accountId: string, keyId: string): Promise<ApiKeyRecord | undefined>;
}
