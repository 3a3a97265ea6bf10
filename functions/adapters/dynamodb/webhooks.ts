/**
 * Webhook endpoints and deliveries, in the account's partition (keys.ts):
 *
 *   endpoint  ACCOUNT#<a> / WEBHOOK#<id>                        url, events, the secret sealed
 *   slots     ACCOUNT#<a> / WEBHOOK_SLOTS                       the endpoints' ids, a string set: an
 *                                                               endpoint is created only by adding its
 *                                                               id while the set has fewer than the
 *                                                               limit (one conditional write); and
 *                                                               the account's send slots
 *                                                               (send_slot_<n>_until/_holder)
 *   delivery  ACCOUNT#<a> / WEBHOOK_DELIVERY#<webhook>#<msg id> one event for one endpoint, its
 *                                                               attempts a list appended to by a
 *                                                               write conditional on its length
 *
 * Creating takes a slot, then writes the endpoint; a failure gives the slot back. Deleting removes
 * the endpoint, then its slot. A pending delivery is on GSI1 by when its next attempt is due
 * (keys.ts, pendingDeliveryIndexKey), so that the sweeper finds one whose message never came. Deliveries expire (TTL) DELIVERY_RETENTION_DAYS after their last
 * run of attempts began.
 */
import {
  DeleteCommand,
  type DeleteCommandInput,
  type DynamoDBDocumentClient,
  GetCommand,
  type GetCommandInput,
  PutCommand,
  type PutCommandInput,
  type QueryCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { epochSeconds, isoNow } from '../../domain/common/clock.js';
import type { Page } from '../../domain/common/pagination.js';
import type { Clock } from '../../domain/common/ports.js';
import type {
  DeliveryAttempt,
  DeliveryStatus,
  StoredWebhookDelivery,
  StoredWebhookEndpoint,
  SubscribableEventType,
  WebhookCreateOutcome,
  WebhookDeliveryStore,
  WebhookEventType,
  WebhookStore,
} from '../../domain/webhooks/webhooks.js';
import {
  ENTITY,
  GSI1,
  ITEM_ABSENT,
  ITEM_EXISTS,
  leaseSortKey,
  OPEN_JOB_SHARDS,
  PK,
  parsePendingDeliverySortKey,
  pendingDeliveriesPartition,
  pendingDeliveryIndexKey,
  SK,
  TTL,
  WEBHOOK_SK_PREFIX,
  webhookDeliveriesPrefix,
  webhookDeliveryKey,
  webhookKey,
  webhookSlotsKey,
  webhooksPartition,
} from './keys.js';
import { queryAll, queryPage, queryShards } from './pagination.js';

/** How long a delivery and its attempts stay readable after its last run of attempts began. */
export const DELIVERY_RETENTION_DAYS = 30;

const isConditionFailure = (e: unknown) => (e as Error).name === 'ConditionalCheckFailedException';

const toEndpoint = (item: Record<string, unknown>): StoredWebhookEndpoint => ({
  id: String(item.id),
  url: String(item.url),
  description: typeof item.description === 'string' ? item.description : null,
  events: (Array.isArray(item.events) ? item.events : []) as SubscribableEventType[],
  created_at: String(item.created_at),
  account_id: String(item.account_id),
  sealed_secret: String(item.sealed_secret),
});

/** Send slot `slot`'s attributes on the endpoint's item: until when it is held, and by whom. */
const slotNames = (slot: number) => ({
  '#until': `send_slot_${slot}_until`,
  '#holder': `send_slot_${slot}_holder`,
});

/**
 * Where send slots are held: on the endpoint's item, or (webhookId null) on the account's
 * WEBHOOK_SLOTS item, for the cap on all of the account's endpoints together.
 */
const sendSlotsKey = (accountId: string, webhookId: string | null) =>
  webhookId === null ? webhookSlotsKey(accountId) : webhookKey(accountId, webhookId);

/**
 * Takes send slot `slot` of an existing endpoint (or of its account) when it is free or its
 * holder's time ran out.
 */
export const takeSendSlotParams = (
  tableName: string,
  accountId: string,
  webhookId: string | null,
  slot: number,
  o: { readonly holder: string; readonly nowMs: number; readonly untilMs: number },
): UpdateCommandInput => ({
  TableName: tableName,
  Key: sendSlotsKey(accountId, webhookId),
  ...(webhookId === null
    ? {
        // The account's item may not be there yet (its endpoints' ids come with the first one).
        UpdateExpression: 'SET #until = :until, #holder = :holder, #type = :type',
        ConditionExpression: 'attribute_not_exists(#until) OR #until < :now',
        ExpressionAttributeNames: { ...slotNames(slot), '#type': 'type' },
        ExpressionAttributeValues: {
          ':until': o.untilMs,
          ':holder': o.holder,
          ':now': o.nowMs,
          ':type': ENTITY.webhookSlots,
        },
      }
    : {
        UpdateExpression: 'SET #until = :until, #holder = :holder',
        ConditionExpression: `${ITEM_EXISTS} AND (attribute_not_exists(#until) OR #until < :now)`,
        ExpressionAttributeNames: slotNames(slot),
        ExpressionAttributeValues: { ':until': o.untilMs, ':holder': o.holder, ':now': o.nowMs },
      }),
});

/** Gives send slot `slot` back, if `holder` still holds it. */
export const releaseSendSlotParams = (
  tableName: string,
  accountId: string,
  webhookId: string | null,
  slot: number,
  holder: string,
): UpdateCommandInput => ({
  TableName: tableName,
  Key: sendSlotsKey(accountId, webhookId),
  UpdateExpression: 'REMOVE #until, #holder',
  ConditionExpression: '#holder = :holder',
  ExpressionAttributeNames: slotNames(slot),
  ExpressionAttributeValues: { ':holder': holder },
});

const toDelivery = (item: Record<string, unknown>): StoredWebhookDelivery => ({
  id: String(item.id),
  webhook_id: String(item.webhook_id),
  event_type: String(item.event_type) as WebhookEventType,
  status: String(item.status) as DeliveryStatus,
  created_at: String(item.created_at),
  updated_at: String(item.updated_at),
  next_attempt_at: typeof item.next_attempt_at === 'string' ? item.next_attempt_at : null,
  attempts: (Array.isArray(item.attempts) ? item.attempts : []) as DeliveryAttempt[],
  account_id: String(item.account_id),
  payload: String(item.payload),
  window_started_at: Number(item.window_started_at),
  window_first_attempt: Number(item.window_first_attempt ?? 1),
});

const deliveryExpiresAt = (windowStartedAt: number): number =>
  epochSeconds(new Date(windowStartedAt)) + DELIVERY_RETENTION_DAYS * 86_400;

type DeliveryRef = Pick<StoredWebhookDelivery, 'account_id' | 'webhook_id' | 'id'>;

const indexOf = (d: DeliveryRef, dueAt: number) =>
  pendingDeliveryIndexKey(d.account_id, d.webhook_id, d.id, dueAt);

/** When a pending delivery's next attempt is due (epoch ms): its next_attempt_at, else its window's start. */
const dueOf = (d: Pick<StoredWebhookDelivery, 'next_attempt_at' | 'window_started_at'>): number => {
  const due = d.next_attempt_at === null ? Number.NaN : Date.parse(d.next_attempt_at);
  return Number.isFinite(due) ? due : d.window_started_at;
};

export const takeWebhookSlotParams = (
  tableName: string,
  accountId: string,
  webhookId: string,
  limit: number,
): UpdateCommandInput => ({
  TableName: tableName,
  Key: webhookSlotsKey(accountId),
  UpdateExpression: 'ADD webhook_ids :id SET #type = :type',
  ConditionExpression: 'attribute_not_exists(webhook_ids) OR size(webhook_ids) < :limit',
  ExpressionAttributeNames: { '#type': 'type' },
  ExpressionAttributeValues: { ':id': new Set([webhookId]), ':limit': limit, ':type': ENTITY.webhookSlots },
});

export const releaseWebhookSlotParams = (
  tableName: string,
  accountId: string,
  webhookId: string,
): UpdateCommandInput => ({
  TableName: tableName,
  Key: webhookSlotsKey(accountId),
  UpdateExpression: 'DELETE webhook_ids :ids',
  ExpressionAttributeValues: { ':ids': new Set([webhookId]) },
});

export const createWebhookParams = (tableName: string, endpoint: StoredWebhookEndpoint): PutCommandInput => ({
  TableName: tableName,
  Item: { ...webhookKey(endpoint.account_id, endpoint.id), type: ENTITY.webhook, ...endpoint },
  ConditionExpression: ITEM_ABSENT,
});

export const getWebhookParams = (
  tableName: string,
  accountId: string,
  webhookId: string,
): GetCommandInput => ({
  TableName: tableName,
  Key: webhookKey(accountId, webhookId),
  ConsistentRead: true,
});

export const listWebhooksParams = (tableName: string, accountId: string): QueryCommandInput => ({
  TableName: tableName,
  KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
  ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
  ExpressionAttributeValues: { ':pk': webhooksPartition(accountId), ':prefix': WEBHOOK_SK_PREFIX },
  ScanIndexForward: false,
  ConsistentRead: true,
});

export const deleteWebhookParams = (
  tableName: string,
  accountId: string,
  webhookId: string,
): DeleteCommandInput => ({
  TableName: tableName,
  Key: webhookKey(accountId, webhookId),
  ConditionExpression: ITEM_EXISTS,
  ReturnValues: 'ALL_OLD',
});

export const createDeliveryParams = (
  tableName: string,
  delivery: StoredWebhookDelivery,
): PutCommandInput => ({
  TableName: tableName,
  Item: {
    ...webhookDeliveryKey(delivery.account_id, delivery.webhook_id, delivery.id),
    type: ENTITY.webhookDelivery,
    ...delivery,
    [TTL]: deliveryExpiresAt(delivery.window_started_at),
    ...(delivery.status === 'pending' ? indexOf(delivery, dueOf(delivery)) : {}),
  },
  ConditionExpression: ITEM_ABSENT,
});

export const getDeliveryParams = (
  tableName: string,
  accountId: string,
  webhookId: string,
  deliveryId: string,
): GetCommandInput => ({
  TableName: tableName,
  Key: webhookDeliveryKey(accountId, webhookId, deliveryId),
  ConsistentRead: true,
});

export const listDeliveriesParams = (
  tableName: string,
  accountId: string,
  webhookId: string,
): QueryCommandInput => ({
  TableName: tableName,
  KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
  ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
  ExpressionAttributeValues: {
    ':pk': webhooksPartition(accountId),
    ':prefix': webhookDeliveriesPrefix(webhookId),
  },
  ScanIndexForward: false,
  ConsistentRead: true,
});

/**
 * Appends an attempt while the delivery is pending with exactly the attempts before it: the fence
 * that makes a message delivered twice record once.
 */
export const recordAttemptParams = (
  tableName: string,
  delivery: DeliveryRef,
  attempt: DeliveryAttempt,
  next: { readonly status: DeliveryStatus; readonly nextAttemptAt: string | null },
  now: Date,
): UpdateCommandInput => {
  const pending = next.status === 'pending';
  // Still pending: its index entry moves to the next attempt's time; ended: it leaves the index.
  const index = pending
    ? indexOf(delivery, next.nextAttemptAt === null ? now.getTime() : Date.parse(next.nextAttemptAt))
    : undefined;
  return {
    TableName: tableName,
    Key: webhookDeliveryKey(delivery.account_id, delivery.webhook_id, delivery.id),
    UpdateExpression: `SET attempts = list_append(attempts, :attempt), #status = :status, next_attempt_at = :next, updated_at = :now${
      index ? ', #gpk = :gpk, #gsk = :gsk' : ' REMOVE #gpk, #gsk'
    }`,
    ConditionExpression: `${ITEM_EXISTS} AND #status = :pending AND size(attempts) = :before`,
    ExpressionAttributeNames: { '#status': 'status', '#gpk': GSI1.partitionKey, '#gsk': GSI1.sortKey },
    ExpressionAttributeValues: {
      ':attempt': [attempt],
      ':status': next.status,
      ':next': next.nextAttemptAt,
      ':now': isoNow(now),
      ':pending': 'pending',
      ':before': attempt.attempt - 1,
      ...(index ? { ':gpk': index[GSI1.partitionKey], ':gsk': index[GSI1.sortKey] } : {}),
    },
  };
};

/** The pending deliveries of index shard `shard` whose next attempt was due before `before`. */
export const overdueDeliveriesParams = (
  tableName: string,
  shard: number,
  before: number,
): QueryCommandInput => ({
  TableName: tableName,
  IndexName: GSI1.indexName,
  KeyConditionExpression: '#pk = :pk AND #sk < :before',
  ExpressionAttributeNames: { '#pk': GSI1.partitionKey, '#sk': GSI1.sortKey },
  ExpressionAttributeValues: { ':pk': pendingDeliveriesPartition(shard), ':before': leaseSortKey(before) },
  ProjectionExpression: '#pk, #sk',
});

/**
 * A pending delivery's index entry moved from `seenDueAt` to `dueAt`, if it is still where the
 * sweeper read it and the delivery still has the attempts read: of sweepers racing, one moves it
 * (and sends its message again); the next pass leaves it to that message until it is overdue again.
 */
export const postponeDeliveryParams = (
  tableName: string,
  delivery: DeliveryRef & Pick<StoredWebhookDelivery, 'attempts'>,
  seenDueAt: number,
  dueAt: number,
): UpdateCommandInput => {
  const index = indexOf(delivery, dueAt);
  return {
    TableName: tableName,
    Key: webhookDeliveryKey(delivery.account_id, delivery.webhook_id, delivery.id),
    UpdateExpression: 'SET #gpk = :gpk, #gsk = :gsk',
    ConditionExpression: `${ITEM_EXISTS} AND #status = :pending AND size(attempts) = :made AND #gsk = :seen`,
    ExpressionAttributeNames: { '#status': 'status', '#gpk': GSI1.partitionKey, '#gsk': GSI1.sortKey },
    ExpressionAttributeValues: {
      ':pending': 'pending',
      ':made': delivery.attempts.length,
      ':seen': indexOf(delivery, seenDueAt)[GSI1.sortKey],
      ':gpk': index[GSI1.partitionKey],
      ':gsk': index[GSI1.sortKey],
    },
  };
};

/** Pending again with a new retry window from `now`: its next attempt is the one after those made. */
export const restartDeliveryParams = (
  tableName: string,
  delivery: Pick<StoredWebhookDelivery, 'account_id' | 'webhook_id' | 'id' | 'attempts'>,
  now: Date,
): UpdateCommandInput => ({
  TableName: tableName,
  Key: webhookDeliveryKey(delivery.account_id, delivery.webhook_id, delivery.id),
  UpdateExpression:
    'SET #status = :pending, next_attempt_at = :now, updated_at = :now, window_started_at = :started, window_first_attempt = :first, #ttl = :ttl, #gpk = :gpk, #gsk = :gsk',
  // An attempt recorded meanwhile would number the window wrongly: read again and retry.
  ConditionExpression: `${ITEM_EXISTS} AND size(attempts) = :made`,
  ExpressionAttributeNames: {
    '#status': 'status',
    '#ttl': TTL,
    '#gpk': GSI1.partitionKey,
    '#gsk': GSI1.sortKey,
  },
  ExpressionAttributeValues: {
    ':gpk': indexOf(delivery, now.getTime())[GSI1.partitionKey],
    ':gsk': indexOf(delivery, now.getTime())[GSI1.sortKey],
    ':pending': 'pending',
    ':now': isoNow(now),
    ':started': now.getTime(),
    ':made': delivery.attempts.length,
    ':first': delivery.attempts.length + 1,
    ':ttl': deliveryExpiresAt(now.getTime()),
  },
  ReturnValues: 'ALL_NEW',
});

export const createWebhookStore = (
  db: DynamoDBDocumentClient,
  tableName: string,
  onFault: (message: string, error: unknown) => void,
): WebhookStore => ({
  async create(endpoint, limit): Promise<WebhookCreateOutcome> {
    try {
      await db.send(
        new UpdateCommand(takeWebhookSlotParams(tableName, endpoint.account_id, endpoint.id, limit)),
      );
    } catch (e) {
      if (isConditionFailure(e)) return { kind: 'limitReached' };
      throw e;
    }
    try {
      await db.send(new PutCommand(createWebhookParams(tableName, endpoint)));
    } catch (e) {
      await db
        .send(new UpdateCommand(releaseWebhookSlotParams(tableName, endpoint.account_id, endpoint.id)))
        .catch((f: unknown) => onFault('webhook slot not given back after a failed creation', f));
      throw e;
    }
    return { kind: 'created', endpoint };
  },

  async get(accountId, webhookId) {
    const out = await db.send(new GetCommand(getWebhookParams(tableName, accountId, webhookId)));
    return out.Item?.type === ENTITY.webhook ? toEndpoint(out.Item) : undefined;
  },

  async takeSendSlot(accountId, webhookId, { holder, cap, nowMs, untilMs }) {
    for (let slot = 0; slot < cap; slot++) {
      try {
        await db.send(
          new UpdateCommand(
            takeSendSlotParams(tableName, accountId, webhookId, slot, { holder, nowMs, untilMs }),
          ),
        );
        return { slot };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
      }
    }
    // All held (or the endpoint is gone): when the first frees.
    const out = await db.send(
      new GetCommand({ TableName: tableName, Key: sendSlotsKey(accountId, webhookId) }),
    );
    const untils = Array.from({ length: cap }, (_, slot) =>
      Number(out.Item?.[`send_slot_${slot}_until`]),
    ).filter((until) => Number.isFinite(until));
    return { freeAtMs: out.Item && untils.length > 0 ? Math.min(...untils) : nowMs };
  },

  async releaseSendSlot(accountId, webhookId, slot, holder) {
    try {
      await db.send(new UpdateCommand(releaseSendSlotParams(tableName, accountId, webhookId, slot, holder)));
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
  },

  async list(accountId) {
    const items = await queryAll(db, listWebhooksParams(tableName, accountId));
    return items.filter((item) => item.type === ENTITY.webhook).map(toEndpoint);
  },

  async delete(accountId, webhookId) {
    let deleted: StoredWebhookEndpoint;
    try {
      const out = await db.send(new DeleteCommand(deleteWebhookParams(tableName, accountId, webhookId)));
      deleted = toEndpoint(out.Attributes ?? {});
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
    await db
      .send(new UpdateCommand(releaseWebhookSlotParams(tableName, accountId, webhookId)))
      .catch((f: unknown) => onFault('webhook slot not given back after deletion', f));
    return deleted;
  },
});

export const createWebhookDeliveryStore = (
  db: DynamoDBDocumentClient,
  tableName: string,
  clock: Clock,
): WebhookDeliveryStore => ({
  async create(delivery) {
    try {
      await db.send(new PutCommand(createDeliveryParams(tableName, delivery)));
      return true;
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      return false; // recorded by an earlier try, or an earlier telling of the same event
    }
  },

  async get(accountId, webhookId, deliveryId) {
    const out = await db.send(new GetCommand(getDeliveryParams(tableName, accountId, webhookId, deliveryId)));
    return out.Item?.type === ENTITY.webhookDelivery ? toDelivery(out.Item) : undefined;
  },

  async list(accountId, webhookId, { limit, offset }: Page): Promise<StoredWebhookDelivery[]> {
    const query = listDeliveriesParams(tableName, accountId, webhookId);
    const items = await queryPage(db, query, { limit, offset }, { ProjectionExpression: '#pk, #sk' });
    return items.map(toDelivery);
  },

  async recordAttempt(delivery, attempt, next) {
    try {
      await db.send(new UpdateCommand(recordAttemptParams(tableName, delivery, attempt, next, clock.now())));
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  },

  async overdue(before, limit) {
    return queryShards(
      db,
      OPEN_JOB_SHARDS,
      (shard) => overdueDeliveriesParams(tableName, shard, before),
      limit,
      (item) => parsePendingDeliverySortKey(String(item[GSI1.sortKey])),
    );
  },

  async postpone(delivery, seenDueAt, dueAt) {
    try {
      await db.send(new UpdateCommand(postponeDeliveryParams(tableName, delivery, seenDueAt, dueAt)));
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  },

  async restart(delivery, now) {
    let current = delivery;
    for (let tries = 0; ; tries++) {
      try {
        const out = await db.send(new UpdateCommand(restartDeliveryParams(tableName, current, now)));
        return toDelivery(out.Attributes ?? {});
      } catch (e) {
        if (!isConditionFailure(e) || tries >= 2) throw e;
        const out = await db.send(
          new GetCommand(getDeliveryParams(tableName, delivery.account_id, delivery.webhook_id, delivery.id)),
        );
        if (!out.Item) throw e;
        current = toDelivery(out.Item);
      }
    }
  },
});
