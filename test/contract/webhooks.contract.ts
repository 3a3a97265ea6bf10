/**
 * The webhook stores' contract (domain/webhooks.ts: WebhookStore, WebhookDeliveryStore): the same
 * cases for the memory stores and the DynamoDB adapters on dynalite.
 */
import { monotonicFactory } from 'ulid';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../functions/domain/common/ports.js';
import type {
  DeliveryAttempt,
  StoredWebhookDelivery,
  StoredWebhookEndpoint,
  WebhookDeliveryStore,
  WebhookStore,
} from '../../functions/domain/webhooks/webhooks.js';
import { clockAt, type TestClock, unique } from './stores.js';

export interface WebhookStoresBackend {
  readonly name: string;
  create(clock: Clock): { endpoints: WebhookStore; deliveries: WebhookDeliveryStore };
}

const nextUlid = monotonicFactory();

const t0 = Date.parse('2026-11-28T10:00:00.000Z');

const endpoint = (accountId: string): StoredWebhookEndpoint => ({
  id: `wh_${nextUlid()}`,
  url: 'https://example.com/hook',
  description: null,
  events: ['job.completed'],
  created_at: '2026-11-28T10:00:00.000Z',
  account_id: accountId,
  sealed_secret: 'sealed',
});

const delivery = (accountId: string, webhookId: string, clock: TestClock): StoredWebhookDelivery => ({
  id: `msg_${nextUlid()}`,
  webhook_id: webhookId,
  event_type: 'job.completed',
  status: 'pending',
  created_at: clock.now().toISOString(),
  updated_at: clock.now().toISOString(),
  next_attempt_at: clock.now().toISOString(),
  attempts: [],
  account_id: accountId,
  payload: '{"type":"job.completed"}',
  window_started_at: clock.now().getTime(),
  window_first_attempt: 1,
});

const attempt = (n: number, outcome: DeliveryAttempt['outcome'] = 'failed'): DeliveryAttempt => ({
  attempt: n,
  attempted_at: '2026-11-28T10:00:00.000Z',
  outcome,
  response_status: outcome === 'failed' ? 500 : 200,
  duration_ms: 12,
  error: outcome === 'failed' ? 'HTTP 500' : null,
});

export const webhookStoresContract = (backend: WebhookStoresBackend): void => {
  describe(`the webhook endpoint store on ${backend.name}`, () => {
    it('creates, lists newest first, gets and deletes an account’s endpoints', async () => {
      const { endpoints } = backend.create(clockAt());
      const account = unique('acct');
      const a = endpoint(account);
      const b = endpoint(account);
      expect(await endpoints.create(a, 10)).toEqual({ kind: 'created', endpoint: a });
      await endpoints.create(b, 10);
      expect(await endpoints.list(account)).toEqual([b, a]);
      expect(await endpoints.get(account, a.id)).toEqual(a);
      expect(await endpoints.get(unique('acct'), a.id)).toBeUndefined();
      expect(await endpoints.delete(account, a.id)).toEqual(a);
      expect(await endpoints.delete(account, a.id)).toBeUndefined();
      expect(await endpoints.get(account, a.id)).toBeUndefined();
      expect(await endpoints.list(account)).toEqual([b]);
    });

    it('holds an account to its limit of endpoints, exactly under concurrency; a deleted one frees its place', async () => {
      const { endpoints } = backend.create(clockAt());
      const account = unique('acct');
      const outcomes = await Promise.all(
        Array.from({ length: 5 }, () => endpoints.create(endpoint(account), 2)),
      );
      expect(outcomes.filter((o) => o.kind === 'created')).toHaveLength(2);
      const [first] = await endpoints.list(account);
      expect((await endpoints.create(endpoint(account), 2)).kind).toBe('limitReached');
      await endpoints.delete(account, first?.id as string);
      expect((await endpoints.create(endpoint(account), 2)).kind).toBe('created');
    });

    it('holds an endpoint to its cap of send slots, exactly under concurrency; a slot frees when given back or when its time ran out', async () => {
      const { endpoints } = backend.create(clockAt());
      const account = unique('acct');
      const a = endpoint(account);
      await endpoints.create(a, 10);
      const at = { cap: 2, nowMs: t0, untilMs: t0 + 30_000 };
      const taken = await Promise.all(
        ['h1', 'h2', 'h3', 'h4'].map((holder) => endpoints.takeSendSlot(account, a.id, { ...at, holder })),
      );
      expect(taken.filter((t) => 'slot' in t)).toHaveLength(2);
      expect(taken.filter((t) => 'freeAtMs' in t)).toEqual([
        { freeAtMs: t0 + 30_000 },
        { freeAtMs: t0 + 30_000 },
      ]);
      const holders = ['h1', 'h2', 'h3', 'h4'].filter((_, i) => 'slot' in (taken[i] as object));
      const first = taken.find((t) => 'slot' in t) as { slot: number };
      // Given back by another holder: nothing happens; by its own: free.
      await endpoints.releaseSendSlot(account, a.id, first.slot, 'someone else');
      expect(await endpoints.takeSendSlot(account, a.id, { ...at, holder: 'h5' })).toHaveProperty('freeAtMs');
      await endpoints.releaseSendSlot(account, a.id, first.slot, holders[0] as string);
      expect(await endpoints.takeSendSlot(account, a.id, { ...at, holder: 'h5' })).toEqual({
        slot: first.slot,
      });
      // Its holder died: free once its time ran out. Another endpoint's slots are its own.
      expect(
        await endpoints.takeSendSlot(account, a.id, {
          ...at,
          holder: 'h6',
          nowMs: t0 + 30_001,
          untilMs: t0 + 60_000,
        }),
      ).toHaveProperty('slot');
      const b = endpoint(account);
      await endpoints.create(b, 10);
      expect(await endpoints.takeSendSlot(account, b.id, { ...at, holder: 'h7' })).toEqual({ slot: 0 });
    });

    it("holds an account to its cap of send slots across its endpoints, before it has any and after; another account's are its own", async () => {
      const { endpoints } = backend.create(clockAt());
      const account = unique('acct');
      const at = { cap: 3, nowMs: t0, untilMs: t0 + 30_000 };
      // Before the account has an endpoint: its slots are there all the same.
      const taken = await Promise.all(
        ['h1', 'h2', 'h3', 'h4', 'h5'].map((holder) =>
          endpoints.takeSendSlot(account, null, { ...at, holder }),
        ),
      );
      expect(taken.filter((t) => 'slot' in t)).toHaveLength(3);
      expect(taken.filter((t) => 'freeAtMs' in t)).toEqual([
        { freeAtMs: t0 + 30_000 },
        { freeAtMs: t0 + 30_000 },
      ]);
      // Creating an endpoint afterwards keeps the account's slots; its own slots are apart.
      const a = endpoint(account);
      expect((await endpoints.create(a, 10)).kind).toBe('created');
      expect(await endpoints.takeSendSlot(account, null, { ...at, holder: 'h6' })).toHaveProperty('freeAtMs');
      expect(await endpoints.takeSendSlot(account, a.id, { ...at, holder: 'h6' })).toEqual({ slot: 0 });
      const holderOf = (slot: number) =>
        ['h1', 'h2', 'h3', 'h4', 'h5'][taken.findIndex((t) => 'slot' in t && t.slot === slot)];
      await endpoints.releaseSendSlot(account, null, 1, holderOf(1) as string);
      expect(await endpoints.takeSendSlot(account, null, { ...at, holder: 'h7' })).toEqual({ slot: 1 });
      expect(await endpoints.takeSendSlot(unique('acct'), null, { ...at, holder: 'h8' })).toEqual({
        slot: 0,
      });
      // Listing the account's endpoints shows the endpoint alone.
      expect((await endpoints.list(account)).map((e) => e.id)).toEqual([a.id]);
    });
  });

  describe(`the webhook delivery store on ${backend.name}`, () => {
    it('records a delivery once per id, and lists an endpoint’s deliveries newest first, a page at a time', async () => {
      const clock = clockAt();
      const { deliveries } = backend.create(clock);
      const account = unique('acct');
      const made = [
        delivery(account, 'wh_1', clock),
        delivery(account, 'wh_1', clock),
        delivery(account, 'wh_1', clock),
      ];
      for (const d of made) expect(await deliveries.create(d)).toBe(true);
      await deliveries.create(delivery(account, 'wh_2', clock));
      expect(await deliveries.create({ ...(made[0] as StoredWebhookDelivery), payload: 'other' })).toBe(
        false,
      );
      expect(await deliveries.get(account, 'wh_1', made[0]?.id as string)).toEqual(made[0]);
      const ids = made.map((d) => d.id).reverse();
      expect((await deliveries.list(account, 'wh_1', { limit: 2, offset: 0 })).map((d) => d.id)).toEqual(
        ids.slice(0, 2),
      );
      expect((await deliveries.list(account, 'wh_1', { limit: 2, offset: 2 })).map((d) => d.id)).toEqual(
        ids.slice(2),
      );
    });

    it('appends an attempt only while pending with exactly the attempts before it', async () => {
      const clock = clockAt();
      const { deliveries } = backend.create(clock);
      const d = delivery(unique('acct'), 'wh_1', clock);
      await deliveries.create(d);
      clock.advance(5000);
      const next = { status: 'pending' as const, nextAttemptAt: '2026-11-28T10:01:00.000Z' };
      expect(await deliveries.recordAttempt(d, attempt(1), next)).toBe(true);
      expect(await deliveries.recordAttempt(d, attempt(1), next)).toBe(false);
      expect(await deliveries.recordAttempt(d, attempt(3), next)).toBe(false);
      expect(
        await deliveries.recordAttempt(d, attempt(2, 'succeeded'), {
          status: 'succeeded',
          nextAttemptAt: null,
        }),
      ).toBe(true);
      expect(await deliveries.recordAttempt(d, attempt(3), next)).toBe(false);
      expect(await deliveries.get(d.account_id, d.webhook_id, d.id)).toEqual({
        ...d,
        status: 'succeeded',
        next_attempt_at: null,
        updated_at: '2026-11-28T10:00:05.000Z',
        attempts: [attempt(1), attempt(2, 'succeeded')],
      });
    });

    it('finds pending deliveries overdue by their next attempt, and lets one sweeper postpone each', async () => {
      const clock = clockAt();
      const { deliveries } = backend.create(clock);
      const account = unique('acct');
      const start = clock.now().getTime();
      const due = delivery(account, 'wh_1', clock);
      const later = {
        ...delivery(account, 'wh_1', clock),
        next_attempt_at: new Date(start + 60_000).toISOString(),
      };
      const ended = {
        ...delivery(account, 'wh_1', clock),
        status: 'succeeded' as const,
        next_attempt_at: null,
      };
      for (const d of [due, later, ended]) await deliveries.create(d);
      const mine = async (before: number) =>
        (await deliveries.overdue(before, 1000)).filter((r) => r.accountId === account);
      expect(await mine(start + 1)).toEqual([
        { accountId: account, webhookId: 'wh_1', deliveryId: due.id, dueAt: start },
      ]);
      expect((await mine(start + 60_001)).map((r) => r.deliveryId).sort()).toEqual([due.id, later.id].sort());

      expect(await deliveries.postpone(due, start, start + 30_000)).toBe(true);
      expect(await deliveries.postpone(due, start, start + 30_000)).toBe(false); // another sweeper was first
      expect((await mine(start + 1)).map((r) => r.deliveryId)).toEqual([]);
      // An attempt recorded meanwhile: the sweeper's view is stale.
      await deliveries.recordAttempt(due, attempt(1), {
        status: 'pending',
        nextAttemptAt: new Date(start + 90_000).toISOString(),
      });
      expect(await deliveries.postpone(due, start + 30_000, start + 40_000)).toBe(false);
      expect((await mine(start + 90_001)).find((r) => r.deliveryId === due.id)?.dueAt).toBe(start + 90_000);
      // Ended: out of the index.
      await deliveries.recordAttempt(due, attempt(2), { status: 'failed', nextAttemptAt: null });
      expect((await mine(start + 10_000_000)).map((r) => r.deliveryId)).toEqual([later.id]);
    });

    it('restarts an ended delivery: pending again, a new window from now, its attempts kept', async () => {
      const clock = clockAt();
      const { deliveries } = backend.create(clock);
      const d = delivery(unique('acct'), 'wh_1', clock);
      await deliveries.create(d);
      await deliveries.recordAttempt(d, attempt(1), { status: 'failed', nextAttemptAt: null });
      clock.advance(3_600_000);
      const now = clock.now();
      const restarted = await deliveries.restart(d, now);
      expect(restarted).toMatchObject({
        status: 'pending',
        next_attempt_at: now.toISOString(),
        window_started_at: now.getTime(),
        window_first_attempt: 2,
        attempts: [attempt(1)],
      });
      expect(await deliveries.get(d.account_id, d.webhook_id, d.id)).toEqual(restarted);
      const overdue = (await deliveries.overdue(now.getTime() + 1, 1000)).filter(
        (r) => r.deliveryId === d.id,
      );
      expect(overdue.map((r) => r.dueAt)).toEqual([now.getTime()]);
      expect(
        await deliveries.recordAttempt(restarted, attempt(2, 'succeeded'), {
          status: 'succeeded',
          nextAttemptAt: null,
        }),
      ).toBe(true);
    });
  });
};
