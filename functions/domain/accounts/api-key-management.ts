/**
 * The API key use cases (session only): create a key, list the account's keys, revoke one. The
 * key itself exists only in the creation answer; what is kept is its keyed digest (computed by
 * the `digest` port, which holds the deployment's secret).
 */

import { ServiceError } from '../common/errors.js';
import { API_KEY_ID, newApiKeyId } from '../common/ids.js';
import type { Principal } from '../common/principal.js';
import { apiKeyPrefix, generateApiKey } from './api-key-format.js';
import type { ApiKeyRecord, ApiKeyStore } from './api-keys.js';

/** Active (not revoked) keys per account (contract). */
export const MAX_ACTIVE_API_KEYS = 25;
export const MAX_API_KEY_NAME_CHARACTERS = 100;

/** A new key's label, as the edge parsed it (functions/api-keys/request.ts). */
export interface CreateApiKeyCommand {
  readonly name: string;
}

/** The creation answer: the record and, this once, the key. */
export type CreatedApiKey = ApiKeyRecord & { readonly key: string };

export interface ApiKeyManagementDeps {
  readonly store: ApiKeyStore;
  /** The keyed digest under which a key is stored (HMAC-SHA256 with the deployment's secret). */
  readonly digest: (key: string) => Promise<string>;
  /** @default MAX_ACTIVE_API_KEYS */
  readonly maxActiveKeys?: number;
}

const keyNotFound = (keyId: string) =>
  new ServiceError('API_KEY_NOT_FOUND', `API key ${keyId} was not found`);

export const createApiKeyManagement = (deps: ApiKeyManagementDeps) => {
  const { store } = deps;
  const maxActiveKeys = deps.maxActiveKeys ?? MAX_ACTIVE_API_KEYS;
  return {
    async create(principal: Principal, body: CreateApiKeyCommand): Promise<CreatedApiKey> {
      const key = generateApiKey();
      const outcome = await store.create(
        principal.accountId,
        { id: newApiKeyId(), digest: await deps.digest(key), prefix: apiKeyPrefix(key), name: body.name },
        maxActiveKeys,
      );
      if (outcome.kind === 'limitReached') {
        throw new ServiceError(
          'API_KEY_LIMIT_REACHED',
          `The account has ${maxActiveKeys} active API keys, the most it can have; revoke one first`,
        );
      }
      const { id, prefix, name, ...times } = outcome.record;
      return { id, prefix, name, key, ...times };
    },

    list: (principal: Principal): Promise<ApiKeyRecord[]> => store.list(principal.accountId),

    async revoke(principal: Principal, keyId: string): Promise<ApiKeyRecord> {
      if (!API_KEY_ID.test(keyId)) throw keyNotFound(keyId);
      const revoked = await store.revoke(principal.accountId, keyId);
      if (!revoked) throw keyNotFound(keyId);
      return revoked;
    },
  };
};

export type ApiKeyManagement = ReturnType<typeof createApiKeyManagement>;
