/**
 * Webhook endpoints and their deliveries, as the domain sees them: records, the stores' ports,
 * the events, and the retry schedule. An endpoint is an account's URL with a signing secret
 * (Standard Webhooks, `whsec_…`) that is shown once and kept only sealed (`SecretBox`). A
 * delivery is one event for one endpoint; each attempt to send it is appended to it, so every
 * attempt stays readable. The DynamoDB adapter (functions/adapters/dynamodb/webhooks.ts) explains
 * the item layout.
 */
import type { Page } from '../common/pagination.js';

/** The events an endpoint can subscribe to (`webhook.test` is sent on request only). */
export const WEBHOOK_EVENT_TYPES = [
  'job.completed',
  'job.failed',
  'batch.completed',
  'job.cancelled',
  'job.delivered',
  'job.delivery_failed',
] as const;
export type SubscribableEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
export type WebhookEventType = SubscribableEventType | 'webhook.test';

/** An endpoint as the API shows it: never its secret. */
export interface WebhookEndpoint {
  readonly id: string;
  readonly url: string;
  readonly description: string | null;
  readonly events: readonly SubscribableEventType[];
  readonly created_at: string;
}

/** An endpoint with its sealed secret, as the store keeps it. */
export interface StoredWebhookEndpoint extends WebhookEndpoint {
  readonly account_id: string;
  readonly sealed_secret: string;
}

export type WebhookCreateOutcome =
  | { readonly kind: 'created'; readonly endpoint: StoredWebhookEndpoint }
  | { readonly kind: 'limitReached' };

export interface WebhookStore {
  /** Creates the endpoint unless the account has `limit` of them. */
  create(endpoint: StoredWebhookEndpoint, limit: number): Promise<WebhookCreateOutcome>;
  get(accountId: string, webhookId: string): Promise<StoredWebhookEndpoint | undefined>;
  /** Newest first. */
  list(accountId: string): Promise<StoredWebhookEndpoint[]>;
  /** Deletes it; the endpoint as it was, or undefined when the account has none such. */
  delete(accountId: string, webhookId: string): Promise<StoredWebhookEndpoint | undefined>;
  /**
   * The endpoint's concurrency cap, shared by every sender (webhook-sender.ts): takes one of its
   * `cap` send slots for `holder` until `untilMs` (a slot whose time ran out, its sender dead, is
   * free again): the slot taken, or when the first one frees (epoch ms) when all are held.
   * `webhookId` null: the account's own slots, shared by all its endpoints (the account's cap).
   */
  takeSendSlot(
    accountId: string,
    webhookId: string | null,
    o: { readonly holder: string; readonly cap: number; readonly nowMs: number; readonly untilMs: number },
  ): Promise<SendSlot>;
  /** Gives slot `slot` back if `holder` still holds it. */
  releaseSendSlot(accountId: string, webhookId: string | null, slot: number, holder: string): Promise<void>;
}

/** A send slot of an endpoint: taken (its number), or all held until `freeAtMs` at the soonest. */
export type SendSlot = { readonly slot: number } | { readonly freeAtMs: number };

/** Seals secrets at rest (AES-256-GCM), bound to what they belong to (`context`). */
export interface SecretBox {
  seal(secret: string, context: string): Promise<string>;
  open(sealed: string, context: string): Promise<string>;
}

/** One try to send a delivery, as it is recorded. */
export interface DeliveryAttempt {
  readonly attempt: number;
  readonly attempted_at: string;
  readonly outcome: 'succeeded' | 'failed';
  /** The receiver's HTTP status; null when none came (refused, unreachable, timed out). */
  readonly response_status: number | null;
  readonly duration_ms: number;
  /** Why it failed, in words safe to show (no internal addresses). Null when it succeeded. */
  readonly error: string | null;
}

/**
 * pending: an attempt is due (`next_attempt_at`); succeeded: a receiver answered 2xx; failed:
 * the retry window closed (or the endpoint is gone) without one.
 */
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDelivery {
  readonly id: string;
  readonly webhook_id: string;
  readonly event_type: WebhookEventType;
  readonly status: DeliveryStatus;
  readonly created_at: string;
  readonly updated_at: string;
  readonly next_attempt_at: string | null;
  readonly attempts: readonly DeliveryAttempt[];
}

/** A delivery as the API shows it: with the event it sent (its payload, parsed). */
export interface WebhookDeliveryView extends WebhookDelivery {
  readonly payload: Readonly<Record<string, unknown>>;
}

/** A delivery with what the sender needs: the payload it signs, and when its retry window opened. */
export interface StoredWebhookDelivery extends WebhookDelivery {
  readonly account_id: string;
  /** The Standard Webhooks payload, as JSON text: the same bytes on every attempt. */
  readonly payload: string;
  /** Epoch ms: when the current run of attempts began (creation, or the last redelivery). */
  readonly window_started_at: number;
  /** The number of the run's first attempt (1, or one past the attempts before a redelivery). */
  readonly window_first_attempt: number;
}

export interface WebhookDeliveryStore {
  /** Records a new delivery; one whose id exists already is left as it is (false). */
  create(delivery: StoredWebhookDelivery): Promise<boolean>;
  get(accountId: string, webhookId: string, deliveryId: string): Promise<StoredWebhookDelivery | undefined>;
  /** Newest first. */
  list(accountId: string, webhookId: string, page: Page): Promise<StoredWebhookDelivery[]>;
  /**
   * Appends `attempt` and moves the delivery to `status`, only if it still has
   * `attempt.attempt - 1` attempts and is pending (a message delivered twice records once).
   * False when another consumer got there first.
   */
  recordAttempt(
    delivery: StoredWebhookDelivery,
    attempt: DeliveryAttempt,
    next: { readonly status: DeliveryStatus; readonly nextAttemptAt: string | null },
  ): Promise<boolean>;
  /** Pending again, a new retry window from `now`; attempts kept. The delivery as it became. */
  restart(delivery: StoredWebhookDelivery, now: Date): Promise<StoredWebhookDelivery>;
  /** Up to `limit` pending deliveries whose next attempt was due before `before` (epoch ms), oldest first per shard. */
  overdue(before: number, limit: number): Promise<PendingDeliveryRef[]>;
  /**
   * Moves a pending delivery's index entry from `seenDueAt` (as `overdue` found it) to `dueAt`
   * (epoch ms): the claim that lets one sweeper of several send it again. False when another
   * moved it first, an attempt was recorded meanwhile, or it ended.
   */
  postpone(delivery: StoredWebhookDelivery, seenDueAt: number, dueAt: number): Promise<boolean>;
}

/** A pending delivery as the sweeper finds it overdue. */
export interface PendingDeliveryRef {
  readonly accountId: string;
  readonly webhookId: string;
  readonly deliveryId: string;
  /** When its index entry says its next attempt was due (epoch ms). */
  readonly dueAt: number;
}

/** The webhook queue's message: ids only. `not_before`: epoch ms (SQS delays at most 15 min). */
export interface WebhookMessage {
  readonly v: 1;
  readonly account_id: string;
  readonly webhook_id: string;
  readonly delivery_id: string;
  /** The attempt this message is for; a message for one already made is a duplicate. */
  readonly attempt: number;
  readonly not_before?: number;
}

export interface RetrySchedule {
  /** The wait before the first retry; each later wait doubles it. */
  readonly firstRetrySeconds: number;
  /** No attempt starts later than this after the window opened. */
  readonly windowSeconds: number;
}

/**
 * When the attempt after `attemptsMade` is due (epoch ms), or undefined when the window is
 * closed: exponential backoff (first, 2×, 4×, …) bounded by the window's total time.
 */
export const nextAttemptAt = (
  schedule: RetrySchedule,
  windowStartedAt: number,
  attemptsMade: number,
): number | undefined => {
  // Attempt n+1 is due first × (2^n − 1) after the window opened: the waits so far, summed.
  const due = windowStartedAt + schedule.firstRetrySeconds * 1000 * (2 ** attemptsMade - 1);
  return due <= windowStartedAt + schedule.windowSeconds * 1000 ? due : undefined;
};

/** Standard Webhooks' payload: `{ type, timestamp, data }`. */
export interface WebhookPayload {
  readonly type: WebhookEventType;
  readonly timestamp: string;
  readonly data: unknown;
}
