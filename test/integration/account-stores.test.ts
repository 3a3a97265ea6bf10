/**
 * The account-side data layer against a real DynamoDB API (dynalite), without Chromium: API key
 * records, their active-key slots under concurrency and under injected faults, accounts (no
 * cache, email lookup, plan changes) and the usage report's reads.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { describe, expect, it } from 'vitest';
import { createAccountStore } from '../../functions/adapters/dynamodb/accounts.js';
import { createApiKeyStore } from '../../functions/adapters/dynamodb/api-keys.js';
import { createUsageStore } from '../../functions/adapters/dynamodb/usage.js';
import type { NewApiKey } from '../../functions/domain/accounts/api-keys.js';
import { createUsageReport } from '../../functions/domain/accounts/usage-report.js';
import { newApiKeyId } from '../../functions/domain/common/ids.js';
import { testClock, useTable } from '../helpers/dynalite.js';

const table = useTable('account-stores-test');
const clock = testClock('2026-11-25T10:00:30.000Z');
let accounts = 0;
const newAccount = () => `acct-${++accounts}`;
const faults: { message: string }[] = [];
const onFault = (message: string) => {
  faults.push({ message });
};

/** The table's client, with the writes that `fails` picks failing as a broken network would. */
const faulty = (
  fails: (command: { constructor: { name: string }; input: Record<string, unknown> }) => boolean,
): DynamoDBDocumentClient =>
  new Proxy(table.db, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return async (command: never) => {
        if (fails(command)) throw Object.assign(new Error('injected fault'), { name: 'InjectedFault' });
        return target.send(command);
      };
    },
  });

const store = (db: DynamoDBDocumentClient = table.db) => createApiKeyStore(db, table.name, clock, onFault);

let digests = 0;
/** Ids made at the test clock's time, as the service makes them at its clock's. */
const newKey = (name = 'ci'): NewApiKey => ({
  id: `key_${ulid(clock.now().getTime())}`,
  digest: `digest-${++digests}`,
  prefix: 'pdf_live_abcdefg',
  name,
});

const created = async (accountId: string, limit = 25, db?: DynamoDBDocumentClient) => {
  const key = newKey();
  const outcome = await store(db).create(accountId, key, limit);
  if (outcome.kind !== 'created') throw new Error('expected a created key');
  return { key, record: outcome.record };
};

const isPutOf =
  (type: string) => (command: { constructor: { name: string }; input: Record<string, unknown> }) =>
    command.constructor.name === 'PutCommand' && (command.input.Item as { type?: string }).type === type;
const isSlotRelease = (command: { constructor: { name: string }; input: Record<string, unknown> }) =>
  command.constructor.name === 'UpdateCommand' &&
  String(command.input.UpdateExpression).startsWith('DELETE key_ids');

describe('API key store', () => {
  it('creates, lists newest first with revoked keys, and revokes once', async () => {
    const account = newAccount();
    clock.set('2026-11-25T10:00:30.000Z');
    const first = await created(account);
    clock.advance(1); // ids sort by their millisecond; within one, by chance
    const second = await created(account);
    expect(first.record).toEqual({
      id: first.key.id,
      prefix: 'pdf_live_abcdefg',
      name: 'ci',
      created_at: '2026-11-25T10:00:30.000Z',
      last_used_at: null,
      revoked_at: null,
    });
    expect(await store().useByDigest(first.key.digest)).toEqual({ id: first.key.id, accountId: account });

    clock.set('2026-11-25T10:05:00.000Z');
    const revoked = await store().revoke(account, first.key.id);
    expect(revoked?.revoked_at).toBe('2026-11-25T10:05:00.000Z');
    clock.set('2026-11-25T10:06:00.000Z');
    expect(await store().revoke(account, first.key.id)).toEqual(revoked);
    expect(await store().useByDigest(first.key.digest)).toBeUndefined();

    const listed = await store().list(account);
    expect(listed.map((k) => k.id)).toEqual([second.key.id, first.key.id]);
    expect(listed[1]).toEqual(revoked);
    expect(revoked?.last_used_at).toBe('2026-11-25T10:00:30.001Z');
    expect(await store().revoke(newAccount(), second.key.id)).toBeUndefined();
    expect(await store().revoke(account, newApiKeyId())).toBeUndefined();
  });

  it('creates exactly up to the limit under concurrent creations, and frees a slot on revocation', async () => {
    const account = newAccount();
    for (let i = 0; i < 20; i++) await created(account);
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, () => store().create(account, newKey(), 25)),
    );
    expect(outcomes.filter((o) => o.kind === 'created')).toHaveLength(5);
    expect(outcomes.filter((o) => o.kind === 'limitReached')).toHaveLength(35);
    const listed = await store().list(account);
    expect(listed).toHaveLength(25);

    expect((await store().create(account, newKey(), 25)).kind).toBe('limitReached');
    await store().revoke(account, listed[3]?.id as string);
    expect((await store().create(account, newKey(), 25)).kind).toBe('created');
    expect((await store().create(account, newKey(), 25)).kind).toBe('limitReached');
  });

  it('leaves nothing behind when the record cannot be written, and gives the slot back', async () => {
    const account = newAccount();
    await created(account, 2);
    const broken = faulty(isPutOf('api_key'));
    await expect(store(broken).create(account, newKey(), 2)).rejects.toThrow('injected fault');
    expect(await store().list(account)).toHaveLength(1);
    await created(account, 2);
    expect((await store().create(account, newKey(), 2)).kind).toBe('limitReached');
  });

  it('reclaims a slot whose give-back failed, once it cannot be a creation in flight', async () => {
    const account = newAccount();
    clock.set('2026-11-25T10:00:00.000Z');
    await created(account, 2);
    const veryBroken = faulty((c) => isPutOf('api_key')(c) || isSlotRelease(c));
    faults.length = 0;
    const lost = newKey();
    await expect(store(veryBroken).create(account, lost, 2)).rejects.toThrow('injected fault');
    expect(faults.map((f) => f.message)).toEqual([
      'API key slot not given back after a failed creation (reclaimed at the limit)',
    ]);
    // The slot is held by an id without a record: a creation still running looks the same.
    expect((await store().create(account, newKey(), 2)).kind).toBe('limitReached');
    clock.set('2026-11-25T10:06:00.000Z');
    const fresh = await created(account, 2).catch(() => undefined);
    expect(fresh?.record.name).toBe('ci');
    expect((await store().list(account)).map((k) => k.id)).not.toContain(lost.id);
  });

  it('reclaims the slot of a revoked key whose give-back failed', async () => {
    const account = newAccount();
    const { key } = await created(account, 1);
    const revoked = await store(faulty(isSlotRelease)).revoke(account, key.id);
    expect(revoked?.revoked_at).not.toBeNull();
    expect((await created(account, 1)).record.revoked_at).toBeNull();
  });
});

describe('account store', () => {
  const accountsStore = () => createAccountStore(table.db, table.name, clock);

  it('creates on first use, then reads the record on every call: a plan change shows at once', async () => {
    const id = newAccount();
    clock.set('2026-11-25T10:00:00.000Z');
    const account = await accountsStore().ensure(id, 'Ada@Example.com');
    expect(account).toEqual({
      id,
      email: 'Ada@Example.com',
      plan: 'free',
      created_at: '2026-11-25T10:00:00.000Z',
    });
    const same = accountsStore();
    expect((await same.ensure(id, 'Ada@Example.com')).plan).toBe('free');
    expect(await accountsStore().setPlan(id, 'pro')).toEqual({
      before: account,
      after: { ...account, plan: 'pro' },
    });
    expect((await same.ensure(id, undefined)).plan).toBe('pro');
    expect(await accountsStore().setPlan('acct-never-seen', 'pro')).toBeUndefined();
  });

  it('finds accounts by email through the index, case-insensitively, following email changes', async () => {
    const id = newAccount();
    await accountsStore().ensure(id, 'grace@example.com');
    expect((await accountsStore().findByEmail('  GRACE@example.COM ')).map((a) => a.id)).toEqual([id]);
    await accountsStore().ensure(id, 'grace.hopper@example.com');
    expect(await accountsStore().findByEmail('grace@example.com')).toEqual([]);
    expect(await accountsStore().findByEmail('grace.hopper@example.com')).toMatchObject([
      { id, email: 'grace.hopper@example.com' },
    ]);
    expect(await accountsStore().get(id)).toMatchObject({ email: 'grace.hopper@example.com' });
    expect(await accountsStore().get('acct-never-seen')).toBeUndefined();
  });
});

describe('usage report', () => {
  it('reads the month and the rate window without counting a request', async () => {
    const account = newAccount();
    clock.set('2026-11-25T10:00:30.000Z');
    const usage = createUsageStore(table.db, table.name, clock);
    const plans = { free: { monthlyRenders: 3, rendersPerMinute: 2 } };
    const report = createUsageReport({ usage, clock, plans, defaultPlan: 'free' });
    const principal = { accountId: account, email: undefined, credential: 'session' as const, plan: 'gone' };

    const empty = await report(principal);
    expect(empty).toEqual({
      plan: 'free',
      period_start: '2026-11-01T00:00:00.000Z',
      period_end: '2026-12-01T00:00:00.000Z',
      renders_used: 0,
      renders_limit: 3,
      renders_remaining: 3,
      rate_limit: { limit: 2, window_seconds: 60, remaining: 2 },
      pdf_bytes: 0,
      render_ms: 0,
      included_units: 0,
      overage_units: 0,
      overage_limit: 0,
      estimated_charge: null,
    });
    await usage.hitRateLimit(account, plans.free);
    const month = await usage.reserveRender(account, plans.free, undefined, 'job_1');
    await usage.recordRender(account, month, 1000, 40, 'job_1');
    await report(principal);
    const after = await report(principal);
    expect(after).toMatchObject({
      renders_used: 1,
      renders_remaining: 2,
      rate_limit: { remaining: 1 },
      pdf_bytes: 1000,
      render_ms: 40,
    });
    clock.set('2026-12-01T00:00:00.000Z');
    expect(await report(principal)).toMatchObject({
      renders_used: 0,
      period_start: '2026-12-01T00:00:00.000Z',
    });
  });
});
