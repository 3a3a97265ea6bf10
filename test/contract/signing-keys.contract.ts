/**
 * The signing key store's contract (domain/signing/signing-keys.ts: SigningKeyStore): the same
 * cases for the memory store and the DynamoDB adapter on dynalite.
 */
import { monotonicFactory } from 'ulid';
import { describe, expect, it } from 'vitest';
import type { SigningKeyStore, StoredSigningKey } from '../../functions/domain/signing/signing-keys.js';
import { unique } from './stores.js';

export interface SigningKeyStoreBackend {
  readonly name: string;
  create(): SigningKeyStore;
}

const nextUlid = monotonicFactory();

const key = (accountId: string, kind: StoredSigningKey['kind'] = 'uploaded'): StoredSigningKey => ({
  id: `sk_${nextUlid()}`,
  name: 'invoices',
  kind,
  algorithm: 'RSA',
  certificate_pem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
  certificate_subject: 'CN=Test Signer',
  certificate_expires_at: '2027-11-28T10:00:00.000Z',
  kms_key_arn: kind === 'kms' ? 'arn:aws:kms:eu-west-1:123456789012:key/abc' : null,
  created_at: '2026-11-28T10:00:00.000Z',
  account_id: accountId,
  sealed_private_key: kind === 'kms' ? null : 'v1.sealed',
});

export const signingKeyStoreContract = (backend: SigningKeyStoreBackend): void => {
  describe(`the signing key store on ${backend.name}`, () => {
    it('creates, lists newest first, gets and deletes an account’s keys, each field as it was', async () => {
      const store = backend.create();
      const account = unique('acct');
      const first = key(account);
      const second = key(account, 'kms');
      expect(await store.create(first, 5)).toEqual({ kind: 'created' });
      expect(await store.create(second, 5)).toEqual({ kind: 'created' });
      expect(await store.get(account, first.id)).toEqual(first);
      expect(await store.get(account, second.id)).toEqual(second);
      expect((await store.list(account)).map((k) => k.id)).toEqual([second.id, first.id]);
      expect(await store.delete(account, first.id)).toEqual(first);
      expect(await store.get(account, first.id)).toBeUndefined();
      expect(await store.delete(account, first.id)).toBeUndefined();
      expect((await store.list(account)).map((k) => k.id)).toEqual([second.id]);
    });

    it('never finds another account’s key, nor deletes it', async () => {
      const store = backend.create();
      const owner = unique('acct');
      const other = unique('acct');
      const mine = key(owner);
      await store.create(mine, 5);
      expect(await store.get(other, mine.id)).toBeUndefined();
      expect(await store.delete(other, mine.id)).toBeUndefined();
      expect(await store.list(other)).toEqual([]);
      expect(await store.get(owner, mine.id)).toEqual(mine);
    });

    it('refuses a key past the limit, exactly, under concurrent creations; a delete frees a slot', async () => {
      const store = backend.create();
      const account = unique('acct');
      const keys = Array.from({ length: 6 }, () => key(account));
      const outcomes = await Promise.all(keys.map((k) => store.create(k, 3)));
      expect(outcomes.filter((o) => o.kind === 'created')).toHaveLength(3);
      expect(outcomes.filter((o) => o.kind === 'limitReached')).toHaveLength(3);
      const listed = await store.list(account);
      expect(listed).toHaveLength(3);
      await store.delete(account, listed[0]?.id ?? '');
      expect(await store.create(key(account), 3)).toEqual({ kind: 'created' });
    });
  });
};
