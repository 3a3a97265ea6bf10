/**
 * The webhook sender: a queue consumer that makes one attempt per message. It signs the
 * delivery's payload per Standard Webhooks (the reference package: `webhook-id` is the delivery
 * id, the same on every attempt; `webhook-timestamp` and `webhook-signature` are the attempt's),
 * posts it through `post` (which connects to public addresses only, follows no redirect and gives
 * up after a short timeout), appends the attempt to the delivery, and queues the next attempt with
 * exponential backoff while the retry window is open.
 *
 * Isolated per endpoint (issue 38): one endpoint's slowness or silence costs only its own
 * deliveries. Each message is its own consumer run (batch size 1, functions/consumers.ts): an
 * attempt completes when its own POST does, not its group's slowest. And an endpoint has at most
 * `sendSlots.cap` attempts in flight across every sender (send slots on its record, each held
 * until its POST's timeout and a margin, so that a dead sender's slot frees itself): an attempt
 * past the cap is not made now but queued again for when the first slot frees (`deferred`; not an
 * attempt, nothing recorded), so a slow endpoint's backlog holds at most `cap` consumers while
 * every other endpoint's messages go on.
 *
 * At least once: messages may come twice. Each carries the attempt it is for, and an attempt is
 * recorded only on a delivery that has exactly the attempts before it (a conditional write), so a
 * duplicate is dropped; one whose attempt was recorded but whose next message may not have been
 * queued queues it again (duplicates of that are dropped the same way).
 */
import { Webhook } from 'standardwebhooks';
import { isoNow } from '../common/clock.js';
import type { Clock, MessageQueue } from '../common/ports.js';
import { secretContext } from './webhook-management.js';
import {
  type DeliveryAttempt,
  nextAttemptAt,
  type RetrySchedule,
  type SecretBox,
  type StoredWebhookDelivery,
  type WebhookDeliveryStore,
  type WebhookMessage,
  type WebhookStore,
} from './webhooks.js';

/** SQS delays a message at most 15 minutes; a longer wait is made of several. */
export const MAX_DELAY_SECONDS = 900;

export interface WebhookRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What came of one POST: the status when a response came, else why none did (safe to show). */
export interface WebhookResponse {
  readonly status: number | null;
  readonly error: string | null;
  readonly durationMs: number;
}

/**
 * What a message came to: an attempt that succeeded, failed with another due (retrying) or failed
 * for good; a wait passed on (waiting); or nothing, its attempt already made (duplicate).
 */
export type AttemptOutcome = 'succeeded' | 'retrying' | 'failed' | 'waiting' | 'duplicate' | 'deferred';

/** Posts a webhook; never throws. */
export type WebhookPost = (request: WebhookRequest) => Promise<WebhookResponse>;

export interface WebhookSenderDeps {
  readonly endpoints: WebhookStore;
  readonly deliveries: WebhookDeliveryStore;
  readonly secrets: SecretBox;
  readonly queue: MessageQueue<WebhookMessage>;
  readonly post: WebhookPost;
  readonly clock: Clock;
  readonly schedule: RetrySchedule;
  /**
   * The per-endpoint concurrency cap: `cap` attempts at once, a slot held `holdMs` at most (its
   * sender died); an attempt refused a slot is tried again after `retryMs` (the POST's timeout:
   * by then a slot was given back) or when the first slot's time runs out, if sooner.
   */
  readonly sendSlots: {
    readonly cap: number;
    /** The same for all of an account's endpoints together. */
    readonly accountCap: number;
    readonly holdMs: number;
    readonly retryMs: number;
  };
}

/** Attempts in flight to one endpoint at most, across every sender. */
export const ENDPOINT_CONCURRENCY = 2;
/**
 * Attempts in flight to all of one account's endpoints at most, across every sender: an account
 * with many silent endpoints holds at most this many of the senders (10 in the cloud, 8 locally:
 * consumers.ts), whatever the number of its endpoints.
 */
export const ACCOUNT_CONCURRENCY = 4;

const delayUntil = (dueMs: number, nowMs: number): number =>
  Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((dueMs - nowMs) / 1000)));

const succeeded = (status: number | null): boolean => status !== null && status >= 200 && status < 300;

/** Why an answer is not a success, in the attempt's `error`. */
const answerError = (status: number): string =>
  status >= 300 && status < 400
    ? `HTTP ${status}: redirects are not followed`
    : `HTTP ${status}: the receiver did not answer 2xx`;

/** Queues attempt `attempt` of `delivery`, due at `dueMs` (epoch ms). */
const queueAttempt = async (
  queue: MessageQueue<WebhookMessage>,
  clock: Clock,
  delivery: StoredWebhookDelivery,
  attempt: number,
  dueMs: number,
): Promise<void> => {
  const message: WebhookMessage = {
    v: 1,
    account_id: delivery.account_id,
    webhook_id: delivery.webhook_id,
    delivery_id: delivery.id,
    attempt,
    not_before: dueMs,
  };
  await queue.send(message, {
    delaySeconds: delayUntil(dueMs, clock.now().getTime()),
    groupId: delivery.account_id,
  });
};

export const createWebhookSender = (deps: WebhookSenderDeps) => {
  const { deliveries, clock, schedule } = deps;

  const queueNext = (delivery: StoredWebhookDelivery, attempt: number, dueMs: number): Promise<void> =>
    queueAttempt(deps.queue, clock, delivery, attempt, dueMs);

  /** When the attempt after the first `made` ones is due, or undefined when the window is closed. */
  const dueAfter = (delivery: StoredWebhookDelivery, made: number): number | undefined =>
    nextAttemptAt(schedule, delivery.window_started_at, made - (delivery.window_first_attempt - 1));

  /** Gives a send slot back; one that cannot be frees itself once its time ran out. */
  const releaseQuietly = (accountId: string, webhookId: string | null, slot: number, holder: string) =>
    deps.endpoints.releaseSendSlot(accountId, webhookId, slot, holder).catch(() => undefined);

  const attempt = async (delivery: StoredWebhookDelivery, number: number): Promise<AttemptOutcome> => {
    const startedAt = clock.now();
    const endpoint = await deps.endpoints.get(delivery.account_id, delivery.webhook_id);
    let response: WebhookResponse;
    if (!endpoint) {
      response = { status: null, error: 'the endpoint was deleted', durationMs: 0 };
    } else {
      const secret = await deps.secrets.open(
        endpoint.sealed_secret,
        secretContext(endpoint.account_id, endpoint.id),
      );
      const signature = new Webhook(secret).sign(delivery.id, startedAt, delivery.payload);
      const holder = `${delivery.id}#${number}`;
      const nowMs = startedAt.getTime();
      const hold = { holder, nowMs, untilMs: nowMs + deps.sendSlots.holdMs };
      const accountSlot = await deps.endpoints.takeSendSlot(endpoint.account_id, null, {
        ...hold,
        cap: deps.sendSlots.accountCap,
      });
      const slot =
        'freeAtMs' in accountSlot
          ? accountSlot
          : await deps.endpoints.takeSendSlot(endpoint.account_id, endpoint.id, {
              ...hold,
              cap: deps.sendSlots.cap,
            });
      if ('freeAtMs' in slot) {
        // The account or the endpoint has its share in flight: this attempt waits for a slot, in
        // the queue.
        if ('slot' in accountSlot) await releaseQuietly(endpoint.account_id, null, accountSlot.slot, holder);
        const retryAt = Math.min(slot.freeAtMs, nowMs + deps.sendSlots.retryMs);
        await queueNext(delivery, number, Math.max(retryAt, nowMs + 1000));
        return 'deferred';
      }
      try {
        response = await deps.post({
          url: endpoint.url,
          headers: {
            'content-type': 'application/json',
            'webhook-id': delivery.id,
            'webhook-timestamp': String(Math.floor(nowMs / 1000)),
            'webhook-signature': signature,
          },
          body: delivery.payload,
        });
      } finally {
        await releaseQuietly(endpoint.account_id, endpoint.id, slot.slot, holder);
        if ('slot' in accountSlot) await releaseQuietly(endpoint.account_id, null, accountSlot.slot, holder);
      }
    }
    const ok = succeeded(response.status);
    const record: DeliveryAttempt = {
      attempt: number,
      attempted_at: isoNow(startedAt),
      outcome: ok ? 'succeeded' : 'failed',
      response_status: response.status,
      duration_ms: Math.round(response.durationMs),
      error: ok ? null : (response.error ?? answerError(response.status as number)),
    };
    const due = ok || !endpoint ? undefined : dueAfter(delivery, number);
    const recorded = await deliveries.recordAttempt(delivery, record, {
      status: ok ? 'succeeded' : due === undefined ? 'failed' : 'pending',
      nextAttemptAt: due === undefined ? null : isoNow(new Date(due)),
    });
    if (!recorded) return 'duplicate';
    if (due !== undefined) await queueNext(delivery, number + 1, due);
    return ok ? 'succeeded' : due === undefined ? 'failed' : 'retrying';
  };

  return {
    /** One message: an attempt, a wait passed on, or a duplicate dropped. Throws on our faults (retried). */
    async handle(message: WebhookMessage): Promise<AttemptOutcome> {
      const delivery = await deliveries.get(message.account_id, message.webhook_id, message.delivery_id);
      if (delivery?.status !== 'pending') return 'duplicate';
      const made = delivery.attempts.length;
      if (message.attempt === made) {
        // This attempt is recorded; its successor may not have been queued (we failed between).
        const due = dueAfter(delivery, made);
        if (due !== undefined) await queueNext(delivery, made + 1, due);
        return 'duplicate';
      }
      if (message.attempt !== made + 1) return 'duplicate'; // an older attempt's message
      const now = clock.now().getTime();
      if (message.not_before !== undefined && message.not_before > now + 1000) {
        await queueNext(delivery, message.attempt, message.not_before); // longer than SQS's 15 min
        return 'waiting';
      }
      return attempt(delivery, message.attempt);
    },
  };
};

export type WebhookSender = ReturnType<typeof createWebhookSender>;

export interface OverdueDeliveriesDeps {
  readonly deliveries: WebhookDeliveryStore;
  readonly queue: MessageQueue<WebhookMessage>;
  readonly clock: Clock;
  /**
   * How long past its due time a pending delivery is left to its own message (in flight, held
   * back by the queue after a fault of ours) before the sweeper sends another.
   */
  readonly overdueSeconds: number;
  readonly onFault: (message: string, error: unknown) => void;
}

/**
 * Pending deliveries whose message never came: recorded, then the process died before queueing
 * the first attempt (or a redelivery); or a message dead-lettered after our own faults. The
 * sweeper finds those long past their due time and queues their next attempt again; the sender's
 * fence (an attempt is recorded once) makes a message that was only late harmless to the record
 * (its receiver may get that attempt twice, with the same webhook-id). Each one sent again counts
 * as due now, so the next pass leaves it to that message for as long again.
 */
export const createOverdueDeliveries = (deps: OverdueDeliveriesDeps) => ({
  /** One pass over at most `limit` overdue deliveries; answers how many were queued again. */
  async requeue(limit = 100): Promise<number> {
    const now = deps.clock.now().getTime();
    const refs = await deps.deliveries.overdue(now - deps.overdueSeconds * 1000, limit);
    let requeued = 0;
    for (const ref of refs) {
      try {
        const delivery = await deps.deliveries.get(ref.accountId, ref.webhookId, ref.deliveryId);
        if (delivery?.status !== 'pending') continue;
        // The claim first: of sweepers racing, one sends. Should it die before sending, the
        // delivery is overdue again after as long.
        if (!(await deps.deliveries.postpone(delivery, ref.dueAt, now))) continue;
        await queueAttempt(deps.queue, deps.clock, delivery, delivery.attempts.length + 1, now);
        requeued++;
      } catch (e) {
        deps.onFault(`re-queueing webhook delivery ${ref.deliveryId} failed`, e);
      }
    }
    return requeued;
  },
});

export type OverdueDeliveries = ReturnType<typeof createOverdueDeliveries>;
