/**
 * The webhook use cases (session only, like API keys): create an endpoint (its signing secret
 * shown this once), list, read and delete endpoints, send a test event, list an endpoint's
 * deliveries with every attempt, and redeliver one. Events reach an endpoint through `emit`:
 * a delivery record, then a message on the webhook queue for the sender (webhook-sender.ts).
 */
import { randomBytes } from 'node:crypto';
import { isoNow } from '../common/clock.js';
import { ServiceError } from '../common/errors.js';
import { newWebhookDeliveryId, newWebhookId, WEBHOOK_DELIVERY_ID, WEBHOOK_ID } from '../common/ids.js';
import type { Page } from '../common/pagination.js';
import type { Clock, MessageQueue } from '../common/ports.js';
import type { Principal } from '../common/principal.js';
import type {
  SecretBox,
  StoredWebhookDelivery,
  StoredWebhookEndpoint,
  SubscribableEventType,
  WebhookDeliveryStore,
  WebhookDeliveryView,
  WebhookEndpoint,
  WebhookEventType,
  WebhookMessage,
  WebhookPayload,
  WebhookStore,
} from './webhooks.js';
import { WEBHOOK_EVENT_TYPES } from './webhooks.js';

/** Endpoints per account (contract). */
export const MAX_WEBHOOK_ENDPOINTS = 10;
export const MAX_WEBHOOK_DESCRIPTION_CHARACTERS = 200;
export const MAX_WEBHOOK_URL_CHARACTERS = 2048;

/** A new endpoint, as the edge parsed it (functions/webhooks/request.ts). */
export interface CreateWebhookCommand {
  readonly url: string;
  readonly description: string | null;
  /** @default every subscribable event */
  readonly events: readonly SubscribableEventType[] | null;
}

/** The creation answer: the endpoint and, this once, its secret. */
export type CreatedWebhook = WebhookEndpoint & { readonly secret: string };

/**
 * Why a URL cannot receive webhooks, in words safe to show; undefined when it can. Checks the
 * scheme and every address the host resolves to now (the sender checks again at each connection).
 */
export type WebhookUrlCheck = (url: URL) => Promise<string | undefined>;

export interface WebhookManagementDeps {
  readonly endpoints: WebhookStore;
  readonly deliveries: WebhookDeliveryStore;
  readonly secrets: SecretBox;
  readonly queue: MessageQueue<WebhookMessage>;
  readonly checkUrl: WebhookUrlCheck;
  readonly clock: Clock;
  /** Counts a send on request (a test event, a redelivery) to an endpoint; throws 429 past the limits. */
  readonly countSend?: (accountId: string, webhookId: string) => Promise<void>;
  /** @default MAX_WEBHOOK_ENDPOINTS */
  readonly maxEndpoints?: number;
}

const endpointNotFound = (webhookId: string) =>
  new ServiceError('WEBHOOK_ENDPOINT_NOT_FOUND', `Webhook endpoint ${webhookId} was not found`);

const deliveryNotFound = (deliveryId: string) =>
  new ServiceError('WEBHOOK_DELIVERY_NOT_FOUND', `Webhook delivery ${deliveryId} was not found`);

/** Standard Webhooks' secret format: `whsec_` and base64 of 24-64 random bytes (32 here). */
export const generateWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/** What a sealed secret is bound to: copied onto another endpoint's item, it does not open. */
export const secretContext = (accountId: string, webhookId: string): string => `${accountId}/${webhookId}`;

export const endpointView = ({
  id,
  url,
  description,
  events,
  created_at,
}: WebhookEndpoint): WebhookEndpoint => ({
  id,
  url,
  description,
  events,
  created_at,
});

export const deliveryView = (d: StoredWebhookDelivery): WebhookDeliveryView => ({
  id: d.id,
  webhook_id: d.webhook_id,
  event_type: d.event_type,
  status: d.status,
  created_at: d.created_at,
  updated_at: d.updated_at,
  next_attempt_at: d.next_attempt_at,
  payload: JSON.parse(d.payload) as Record<string, unknown>,
  attempts: d.attempts,
});

/**
 * Sends events to endpoints: records the delivery, then queues its first attempt. Shared by the
 * test event, the job events (webhook-events.ts) and batches.
 */
export const createWebhookEmitter = (deps: {
  readonly deliveries: WebhookDeliveryStore;
  readonly queue: MessageQueue<WebhookMessage>;
  readonly clock: Clock;
}) => {
  /** The delivery recorded, or undefined when one with its id was recorded before. */
  const record = async (
    endpoint: StoredWebhookEndpoint,
    type: WebhookEventType,
    data: unknown,
    id: string,
  ): Promise<StoredWebhookDelivery | undefined> => {
    const now = deps.clock.now();
    const payload: WebhookPayload = { type, timestamp: isoNow(now), data };
    const delivery: StoredWebhookDelivery = {
      id,
      webhook_id: endpoint.id,
      account_id: endpoint.account_id,
      event_type: type,
      status: 'pending',
      created_at: isoNow(now),
      updated_at: isoNow(now),
      next_attempt_at: isoNow(now),
      attempts: [],
      payload: JSON.stringify(payload),
      window_started_at: now.getTime(),
      window_first_attempt: 1,
    };
    return (await deps.deliveries.create(delivery)) ? delivery : undefined;
  };

  /** Queues a recorded delivery's first attempt. */
  const queueFirst = async (delivery: StoredWebhookDelivery): Promise<void> => {
    await deps.queue.send(firstMessage(delivery), { groupId: delivery.account_id });
  };

  return {
    record,
    queueFirst,

    /**
     * Records the delivery, then queues its first attempt. Given an `id` recorded before (an
     * earlier telling of the same event), nothing is recorded or sent: only the telling that
     * recorded it queues it, so that two messages never race for one attempt. Should that one
     * die before queueing, the sweeper sends it once it is overdue (webhook-sender.ts).
     */
    async emit(
      endpoint: StoredWebhookEndpoint,
      type: WebhookEventType,
      data: unknown,
      id: string = newWebhookDeliveryId(),
    ): Promise<StoredWebhookDelivery | undefined> {
      const delivery = await record(endpoint, type, data, id);
      if (delivery) await queueFirst(delivery);
      return delivery;
    },
  };
};

export type WebhookEmitter = ReturnType<typeof createWebhookEmitter>;

const firstMessage = (d: StoredWebhookDelivery): WebhookMessage => ({
  v: 1,
  account_id: d.account_id,
  webhook_id: d.webhook_id,
  delivery_id: d.id,
  attempt: d.attempts.length + 1,
});

export const createWebhookManagement = (deps: WebhookManagementDeps) => {
  const { endpoints, deliveries, clock } = deps;
  const maxEndpoints = deps.maxEndpoints ?? MAX_WEBHOOK_ENDPOINTS;
  const emitter = createWebhookEmitter(deps);

  const endpointOf = async (principal: Principal, webhookId: string): Promise<StoredWebhookEndpoint> => {
    if (!WEBHOOK_ID.test(webhookId)) throw endpointNotFound(webhookId);
    const endpoint = await endpoints.get(principal.accountId, webhookId);
    if (!endpoint) throw endpointNotFound(webhookId);
    return endpoint;
  };

  return {
    async create(principal: Principal, command: CreateWebhookCommand): Promise<CreatedWebhook> {
      const url = new URL(command.url);
      const refused = await deps.checkUrl(url);
      if (refused) {
        throw new ServiceError('WEBHOOK_URL_NOT_ALLOWED', `The URL cannot receive webhooks: ${refused}`, {
          details: [{ field: 'url', issue: refused }],
        });
      }
      const id = newWebhookId();
      const secret = generateWebhookSecret();
      const endpoint: StoredWebhookEndpoint = {
        id,
        url: url.href,
        description: command.description,
        events: command.events ?? [...WEBHOOK_EVENT_TYPES],
        created_at: isoNow(clock.now()),
        account_id: principal.accountId,
        sealed_secret: await deps.secrets.seal(secret, secretContext(principal.accountId, id)),
      };
      const outcome = await endpoints.create(endpoint, maxEndpoints);
      if (outcome.kind === 'limitReached') {
        throw new ServiceError(
          'WEBHOOK_LIMIT_REACHED',
          `The account has ${maxEndpoints} webhook endpoints, the most it can have; delete one first`,
        );
      }
      const { id: _id, url: href, description, events, created_at } = outcome.endpoint;
      return { id, url: href, description, events, secret, created_at };
    },

    list: async (principal: Principal): Promise<WebhookEndpoint[]> =>
      (await endpoints.list(principal.accountId)).map(endpointView),

    get: async (principal: Principal, webhookId: string): Promise<WebhookEndpoint> =>
      endpointView(await endpointOf(principal, webhookId)),

    /** Deleted at once; its pending deliveries fail at their next attempt. */
    async delete(principal: Principal, webhookId: string): Promise<WebhookEndpoint> {
      if (!WEBHOOK_ID.test(webhookId)) throw endpointNotFound(webhookId);
      const deleted = await endpoints.delete(principal.accountId, webhookId);
      if (!deleted) throw endpointNotFound(webhookId);
      return endpointView(deleted);
    },

    /** A `webhook.test` event, whatever the endpoint subscribes to. */
    async test(principal: Principal, webhookId: string): Promise<WebhookDeliveryView> {
      const endpoint = await endpointOf(principal, webhookId);
      await deps.countSend?.(principal.accountId, endpoint.id);
      const data = { webhook_id: endpoint.id, message: 'A test event sent on request.' };
      // A new id: always recorded.
      const delivery = await emitter.record(endpoint, 'webhook.test', data, newWebhookDeliveryId());
      if (!delivery) throw new Error('a new webhook delivery id was taken');
      await emitter.queueFirst(delivery);
      return deliveryView(delivery);
    },

    async deliveries(principal: Principal, webhookId: string, page: Page): Promise<WebhookDeliveryView[]> {
      await endpointOf(principal, webhookId);
      return (await deliveries.list(principal.accountId, webhookId, page)).map(deliveryView);
    },

    /** Sends the same event (same id, same payload) again, with a new retry window. */
    async redeliver(
      principal: Principal,
      webhookId: string,
      deliveryId: string,
    ): Promise<WebhookDeliveryView> {
      await endpointOf(principal, webhookId);
      if (!WEBHOOK_DELIVERY_ID.test(deliveryId)) throw deliveryNotFound(deliveryId);
      const found = await deliveries.get(principal.accountId, webhookId, deliveryId);
      if (!found) throw deliveryNotFound(deliveryId);
      await deps.countSend?.(principal.accountId, webhookId);
      const restarted = await deliveries.restart(found, clock.now());
      await deps.queue.send(firstMessage(restarted), { groupId: principal.accountId });
      return deliveryView(restarted);
    },
  };
};

export type WebhookManagement = ReturnType<typeof createWebhookManagement>;
