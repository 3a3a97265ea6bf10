/**
 * The authenticator without a network: which credentials reach the key store at all. A key
 * whose shape or checksum is wrong is refused before any read; a well-formed one is looked up on
 * every route, also where keys are refused, so that a valid one answers 403 and an unknown one 401.
 */
import { describe, expect, it, vi } from 'vitest';
import { createAuthenticator } from '../../functions/core/auth.js';
import type { AccountStore } from '../../functions/domain/accounts.js';
import { generateApiKey } from '../../functions/domain/api-key-format.js';

const setup = (known: readonly string[] = []) => {
  const resolve = vi.fn(async (key: string) =>
    known.includes(key) ? { id: 'key_1', accountId: 'acct-1' } : undefined,
  );
  const ensure = vi.fn(async (id: string) => ({ id, email: null, plan: 'free', created_at: '' }));
  const authenticate = createAuthenticator(
    { userPoolId: 'us-east-1_localpool', clientIds: ['local-client'], jwks: { keys: [] } },
    resolve,
    { ensure } as unknown as AccountStore,
  );
  return { authenticate, resolve, ensure };
};

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'authenticated',
    (e: { code?: string }) => e.code,
  );

describe('API keys at authentication', () => {
  it('refuses a key with a broken checksum, or of the wrong length, without reading anything', async () => {
    const { authenticate, resolve, ensure } = setup();
    const key = generateApiKey();
    for (const bad of [`${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`, key.slice(0, -1), `${key}0`]) {
      expect(await codeOf(authenticate(`Bearer ${bad}`, ['apiKey', 'session']))).toBe('INVALID_API_KEY');
      expect(await codeOf(authenticate(`Bearer ${bad}`, ['session']))).toBe('INVALID_API_KEY');
    }
    expect(resolve).not.toHaveBeenCalled();
    expect(ensure).not.toHaveBeenCalled();
  });

  it('answers 401 for an unknown key and 403 for a known one where only sessions are accepted', async () => {
    const known = generateApiKey();
    const { authenticate, ensure } = setup([known]);
    expect(await codeOf(authenticate(`Bearer ${generateApiKey()}`, ['session']))).toBe('INVALID_API_KEY');
    expect(await codeOf(authenticate(`Bearer ${known}`, ['session']))).toBe('SESSION_REQUIRED');
    expect(ensure).not.toHaveBeenCalled();
    await expect(authenticate(`Bearer ${known}`, ['apiKey', 'session'])).resolves.toMatchObject({
      accountId: 'acct-1',
      credential: 'apiKey',
      apiKeyId: 'key_1',
      plan: 'free',
    });
  });
});
