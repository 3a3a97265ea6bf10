/**
 * The webhook stores (domain/webhooks.ts) in memory, as the DynamoDB adapters behave: an account
 * has at most `limit` endpoints (exact under concurrency), endpoints and deliveries list newest
 * first (by id, as their sort keys order them); a delivery is recorded once per id; an attempt is
 * appended only while the delivery is pending with exactly the attempts before it (a message
 * delivered twice records once); a pending delivery is found overdue by when its next attempt is
 * due, and `postpone` moves that only from where a sweeper saw it. The contract
 * (test/contract/webhooks.contract.ts) runs the same cases against both.
 */
import { isoNow } from '../../domain/common/clock.js';
import type { Page } from '../../domain/common/pagination.js';
import type { Clock } from '../../domain/common/ports.js';
import type {
  PendingDeliveryRef,
  StoredWebhookDelivery,
  StoredWebhookEndpoint,
  WebhookDeliveryStore,
  WebhookStore,
} from '../../domain/webhooks/webhooks.js';

const byIdNewestFirst = <T extends { readonly id: string }>(a: T, b: T) =>
  a.id < b.id ? 1 : a.id > b.id ? -1 : 0;

export const createMemoryWebhookStore = (): WebhookStore => {
  const endpoints = new Map<string, Map<string, StoredWebhookEndpoint>>();
  /** By account and endpoint: each send slot's holder and until when (the adapter's slot attributes). */
  const slots = new Map<string, Map<number, { holder: string; untilMs: number }>>();
  const of = (accountId: string) => {
    let found = endpoints.get(accountId);
    if (!found) {
      found = new Map();
      endpoints.set(accountId, found);
    }
    return found;
  };
  return {
    async create(endpoint, limit) {
      const account = of(endpoint.account_id);
      if (account.size >= limit) return { kind: 'limitReached' };
      account.set(endpoint.id, structuredClone(endpoint));
      return { kind: 'created', endpoint };
    },
    async get(accountId, webhookId) {
      const found = endpoints.get(accountId)?.get(webhookId);
      return found ? structuredClone(found) : undefined;
    },
    async list(accountId) {
      return [...of(accountId).values()].sort(byIdNewestFirst).map((e) => structuredClone(e));
    },
    async delete(accountId, webhookId) {
      const account = endpoints.get(accountId);
      const found = account?.get(webhookId);
      if (!found) return undefined;
      account?.delete(webhookId);
      slots.delete(`${accountId}\n${webhookId}`);
      return found;
    },
    async takeSendSlot(accountId, webhookId, { holder, cap, nowMs, untilMs }) {
      if (webhookId !== null && !endpoints.get(accountId)?.has(webhookId)) return { freeAtMs: nowMs };
      const key = `${accountId}\n${webhookId ?? '*'}`;
      const held = slots.get(key) ?? new Map<number, { holder: string; untilMs: number }>();
      slots.set(key, held);
      for (let slot = 0; slot < cap; slot++) {
        const taken = held.get(slot);
        if (taken && taken.untilMs >= nowMs) continue;
        held.set(slot, { holder, untilMs });
        return { slot };
      }
      return { freeAtMs: Math.min(...[...held.values()].map((h) => h.untilMs)) };
    },
    async releaseSendSlot(accountId, webhookId, slot, holder) {
      const held = slots.get(`${accountId}\n${webhookId ?? '*'}`);
      if (held?.get(slot)?.holder === holder) held.delete(slot);
    },
  };
};

interface Stored {
  delivery: StoredWebhookDelivery;
  /** The pending index entry: when its next attempt is due (epoch ms); undefined once it ended. */
  dueAt: number | undefined;
}

/** When a pending delivery's next attempt is due: its next_attempt_at, else its window's start. */
const dueOf = (d: Pick<StoredWebhookDelivery, 'next_attempt_at' | 'window_started_at'>): number => {
  const due = d.next_attempt_at === null ? Number.NaN : Date.parse(d.next_attempt_at);
  return Number.isFinite(due) ? due : d.window_started_at;
};

export const createMemoryWebhookDeliveryStore = (clock: Clock): WebhookDeliveryStore => {
  const deliveries = new Map<string, Stored>();
  const id = (accountId: string, webhookId: string, deliveryId: string) =>
    JSON.stringify([accountId, webhookId, deliveryId]);
  const of = (d: Pick<StoredWebhookDelivery, 'account_id' | 'webhook_id' | 'id'>) =>
    deliveries.get(id(d.account_id, d.webhook_id, d.id));

  return {
    async create(delivery) {
      const key = id(delivery.account_id, delivery.webhook_id, delivery.id);
      if (deliveries.has(key)) return false;
      deliveries.set(key, {
        delivery: structuredClone(delivery),
        dueAt: delivery.status === 'pending' ? dueOf(delivery) : undefined,
      });
      return true;
    },
    async get(accountId, webhookId, deliveryId) {
      const found = deliveries.get(id(accountId, webhookId, deliveryId));
      return found ? structuredClone(found.delivery) : undefined;
    },
    async list(accountId, webhookId, { limit, offset }: Page) {
      return [...deliveries.values()]
        .map((s) => s.delivery)
        .filter((d) => d.account_id === accountId && d.webhook_id === webhookId)
        .sort(byIdNewestFirst)
        .slice(offset, offset + limit)
        .map((d) => structuredClone(d));
    },
    async recordAttempt(delivery, attempt, next) {
      const found = of(delivery);
      if (found?.delivery.status !== 'pending' || found.delivery.attempts.length !== attempt.attempt - 1) {
        return false;
      }
      const now = clock.now();
      found.delivery = {
        ...found.delivery,
        attempts: [...found.delivery.attempts, structuredClone(attempt)],
        status: next.status,
        next_attempt_at: next.nextAttemptAt,
        updated_at: isoNow(now),
      };
      found.dueAt =
        next.status === 'pending'
          ? next.nextAttemptAt === null
            ? now.getTime()
            : Date.parse(next.nextAttemptAt)
          : undefined;
      return true;
    },
    async restart(delivery, now) {
      const found = of(delivery);
      if (!found) throw new Error(`no delivery ${delivery.id} to restart`);
      const made = found.delivery.attempts.length;
      found.delivery = {
        ...found.delivery,
        status: 'pending',
        next_attempt_at: isoNow(now),
        updated_at: isoNow(now),
        window_started_at: now.getTime(),
        window_first_attempt: made + 1,
      };
      found.dueAt = now.getTime();
      return structuredClone(found.delivery);
    },
    async overdue(before, limit): Promise<PendingDeliveryRef[]> {
      return [...deliveries.values()]
        .filter((s) => s.dueAt !== undefined && s.dueAt < before)
        .sort((a, b) => (a.dueAt ?? 0) - (b.dueAt ?? 0))
        .slice(0, limit)
        .map((s) => ({
          accountId: s.delivery.account_id,
          webhookId: s.delivery.webhook_id,
          deliveryId: s.delivery.id,
          dueAt: s.dueAt as number,
        }));
    },
    async postpone(delivery, seenDueAt, dueAt) {
      const found = of(delivery);
      if (
        found?.delivery.status !== 'pending' ||
        found.delivery.attempts.length !== delivery.attempts.length ||
        found.dueAt !== seenDueAt
      ) {
        return false;
      }
      found.dueAt = dueAt;
      return true;
    },
  };
};
