/**
 * The single table's data layer in one place: entity names, item keys and the expressions
 * shared by the stores, built by small pure functions (tested without AWS). Every item carries
 * `type` naming its entity.
 *
 *   account        PK ACCOUNT#<account>  SK ACCOUNT
 *   job            PK ACCOUNT#<account>  SK JOB#<job id>           (ULID ids: SK order = creation order; expires_at set)
 *   usage (month)  PK ACCOUNT#<account>  SK USAGE#<yyyy-mm>
 *   rate window    PK ACCOUNT#<account>  SK RATE#<epoch minute>    (expires_at set)
 *   template-write window  PK ACCOUNT#<account>  SK RATE#TEMPLATE_WRITES#<epoch minute>  (expires_at set)
 *   counted window PK ACCOUNT#<account> or IP#<address>  SK RATE#<WINDOW>#<epoch minute or day>  (expires_at set)
 *   idempotency    PK ACCOUNT#<account>  SK IDEMPOTENCY#<sha256 of the key>  (expires_at set)
 *   batch          PK ACCOUNT#<account>  SK BATCH#<batch id>        (ULID ids; expires_at set)
 *   template       PK TEMPLATE#<id>      SK TEMPLATE               (GSI1: its owner's listing; GSI2 while public)
 *   template version PK TEMPLATE#<id>    SK VERSION#<10-digit version>        (immutable; chunk 0 of its html)
 *   version chunk  PK TEMPLATE#<id>      SK VERSION#<10-digit version>#<4-digit chunk>  (chunks 1..n-1)
 *   API key        PK APIKEY#<HMAC digest of the key>  SK APIKEY   (the key itself is never stored)
 *   API key ref    PK ACCOUNT#<account>  SK APIKEY#<key id>       (id → digest; SK order = creation order)
 *   key slots      PK ACCOUNT#<account>  SK APIKEY_SLOTS          (the ids of the active keys, a string set)
 *   webhook endpoint PK ACCOUNT#<account> SK WEBHOOK#<webhook id> (its secret sealed, never in clear)
 *   webhook slots  PK ACCOUNT#<account>  SK WEBHOOK_SLOTS         (the ids of the endpoints, a string set)
 *   signing key    PK ACCOUNT#<account>  SK SIGNKEY#<key id>      (an uploaded private key sealed, never in clear)
 *   signing key slots PK ACCOUNT#<account> SK SIGNKEY_SLOTS      (the ids of the keys, a string set)
 *   asset          PK ACCOUNT#<account>  SK ASSET#<name>           (what is known of an uploaded image or font)
 *   asset usage    PK ACCOUNT#<account>  SK ASSET_USAGE            (the assets' bytes together, and their names)
 *   webhook delivery PK ACCOUNT#<account> SK WEBHOOK_DELIVERY#<webhook id>#<delivery id>  (attempts inside; expires_at set)
 *   usage entry    PK ACCOUNT#<account>  SK USAGE_ENTRY#<yyyy-mm>#<job id>  (the ledger; expires_at set)
 *
 * An account item carries GSI1PK EMAIL#<lower-cased email>, GSI1SK ACCOUNT#<account> (lookup by email).
 * A job whose unit is unsettled (pending, rendering, or failed with its refund not yet done) carries
 * GSI1PK OPEN_JOBS#<shard 0-7>, GSI1SK <lease_until, 15 digits>#<account>#<job>: the sweeper reads
 * the expired ones in lease order (openJobIndexKey). A pending webhook delivery carries GSI1PK
 * PENDING_DELIVERIES#<shard 0-7>, GSI1SK <next attempt, 15 digits>#<account>#<webhook>#<delivery>:
 * the sweeper re-queues those long overdue (pendingDeliveryIndexKey). A batch's job carries GSI2PK
 * BATCH#<account>#<batch>, GSI2SK JOB#<job id>: the batch's jobs in item order (batchJobIndexKey).
 * A usage entry carries GSI2PK USAGE_MONTH#<yyyy-mm>#<shard 0-7>, GSI2SK <account>#<job>: a month's
 * entries of every account in eight queries (usageMonthIndexKey), and, until its event is
 * published, GSI1PK USAGE_OUTBOX#<shard 0-7>, GSI1SK <completed_at>#<account>#<yyyy-mm>#<job>
 * (usageOutboxIndexKey).
 */
import { createHash } from 'node:crypto';
import { PARTITION_PREFIXES, tableSchema } from '../../table.js';

export { minuteOf, monthOf } from '../../domain/common/clock.js';
export { pdfObjectKey } from '../../domain/jobs/jobs.js';

/** The key attributes' names, as functions/table.ts defines them. */
export const PK = tableSchema.partitionKey;
export const SK = tableSchema.sortKey;
export const TTL = tableSchema.ttlAttribute;

/** The `type` attribute of each entity's items. */
export const ENTITY = {
  account: 'account',
  job: 'job',
  usage: 'usage',
  rateWindow: 'rate_window',
  idempotency: 'idempotency',
  template: 'template',
  templateVersion: 'template_version',
  templateChunk: 'template_chunk',
  apiKey: 'api_key',
  apiKeyRef: 'api_key_ref',
  apiKeySlots: 'api_key_slots',
  webhook: 'webhook',
  webhookSlots: 'webhook_slots',
  webhookDelivery: 'webhook_delivery',
  signingKey: 'signing_key',
  signingKeySlots: 'signing_key_slots',
  destination: 'destination',
  destinationSlots: 'destination_slots',
  asset: 'asset',
  assetUsage: 'asset_usage',
  batch: 'batch',
  batchItemKey: 'batch_item_key',
  usageEntry: 'usage_entry',
} as const;

export type Entity = (typeof ENTITY)[keyof typeof ENTITY];

export type ItemKey = Readonly<Record<typeof PK | typeof SK, string>>;

/** Conditions on an item's existence, by its partition key. */
export const ITEM_EXISTS = `attribute_exists(${PK})`;
export const ITEM_ABSENT = `attribute_not_exists(${PK})`;

/** An item as the stores hand it on: without its key attributes and entity tag. */
export const withoutKeys = (item: Record<string, unknown>): Record<string, unknown> => {
  const { [PK]: _pk, [SK]: _sk, type: _type, ...rest } = item;
  return rest;
};

const accountPk = (accountId: string) => `${PARTITION_PREFIXES.account}${accountId}`;

/** The partition of an account's own items (all but its API key items and templates). */
export const accountPartition = (accountId: string): string => accountPk(accountId);

export const accountKey = (accountId: string): ItemKey => ({ [PK]: accountPk(accountId), [SK]: 'ACCOUNT' });
export const jobKey = (accountId: string, jobId: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: `JOB#${jobId}`,
});
export const JOB_SK_PREFIX = 'JOB#';
export const jobsPartition = (accountId: string): string => accountPk(accountId);

export const usageKey = (accountId: string, month: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: `USAGE#${month}`,
});

export const USAGE_ENTRY_SK_PREFIX = 'USAGE_ENTRY#';
export const usageEntryKey = (accountId: string, month: string, jobId: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: `${USAGE_ENTRY_SK_PREFIX}${month}#${jobId}`,
});

/**
 * The ledger's month index and outbox are sharded as the open jobs are: a month's entries of
 * every account spread over eight partitions, so no partition takes every completion's write.
 */
export const USAGE_SHARDS = 8;
const usageShard = (jobId: string): number =>
  createHash('sha256').update(jobId).digest().readUInt8(0) % USAGE_SHARDS;
export const usageMonthPartition = (month: string, shard: number): string => `USAGE_MONTH#${month}#${shard}`;
export const usageMonthIndexKey = (month: string, accountId: string, jobId: string) => ({
  [GSI2.partitionKey]: usageMonthPartition(month, usageShard(jobId)),
  [GSI2.sortKey]: `${accountId}#${jobId}`,
});
export const usageOutboxPartition = (shard: number): string => `USAGE_OUTBOX#${shard}`;
export const usageOutboxIndexKey = (entry: {
  account_id: string;
  job_id: string;
  month: string;
  completed_at: string;
}) => ({
  [GSI1.partitionKey]: usageOutboxPartition(usageShard(entry.job_id)),
  [GSI1.sortKey]: `${entry.completed_at}#${entry.account_id}#${entry.month}#${entry.job_id}`,
});

export const rateWindowKey = (accountId: string, minute: number): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: `RATE#${minute}`,
});

/** Template writes are counted apart from renders: a window of their own. */
export const templateWriteWindowKey = (accountId: string, minute: number): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: `RATE#TEMPLATE_WRITES#${minute}`,
});

/** Webhook sends on request (test events, redeliveries): the account's window, or one endpoint's. */
export const webhookSendWindowKey = (accountId: string, minute: number, webhookId?: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: `RATE#WEBHOOK_SENDS#${webhookId === undefined ? '' : `${webhookId}#`}${minute}`,
});

/** A window counted apart from renders (COUNTED_WINDOWS): an account's, or a client address's. */
export const countedWindowKey = (
  subject: { readonly accountId: string } | { readonly ip: string },
  window: string,
  index: number,
): ItemKey => ({
  [PK]: 'ip' in subject ? `${PARTITION_PREFIXES.ip}${subject.ip}` : accountPk(subject.accountId),
  [SK]: `RATE#${window.toUpperCase()}#${index}`,
});

/** Idempotency keys are caller-chosen text: store a digest, so any key fits the sort key. */
export const idempotencyKey = (accountId: string, key: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: `IDEMPOTENCY#${createHash('sha256').update(key).digest('hex')}`,
});

/** A batch item's idempotency key (its own space, apart from POST /v1/pdf's Idempotency-Key). */
export const batchItemKeyKey = (accountId: string, key: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: `BATCH_ITEM_KEY#${createHash('sha256').update(key).digest('hex')}`,
});

const templatePk = (templateId: string) => `${PARTITION_PREFIXES.template}${templateId}`;

export const templateKey = (templateId: string): ItemKey => ({
  [PK]: templatePk(templateId),
  [SK]: 'TEMPLATE',
});

/** Fixed width, so one version's sort keys are never a prefix of another's and sort in order. */
const VERSION_DIGITS = 10;
export const MAX_TEMPLATE_VERSION = 10 ** VERSION_DIGITS - 1;
export const TEMPLATE_VERSION_SK_PREFIX = 'VERSION#';

/** The sort key every item of one version begins with (its header, then its chunks). */
export const templateVersionSk = (version: number): string =>
  `${TEMPLATE_VERSION_SK_PREFIX}${String(version).padStart(VERSION_DIGITS, '0')}`;
export const templateVersionPartition = (templateId: string): string => templatePk(templateId);

/** Chunk 0 lives in the version's header item; chunks 1..n-1 are items of their own. */
export const templateChunkKey = (templateId: string, version: number, chunk: number): ItemKey => ({
  [PK]: templatePk(templateId),
  [SK]:
    chunk === 0
      ? templateVersionSk(version)
      : `${templateVersionSk(version)}#${String(chunk).padStart(4, '0')}`,
});

export const apiKeyItemKey = (digest: string): ItemKey => ({
  [PK]: `${PARTITION_PREFIXES.apiKey}${digest}`,
  [SK]: 'APIKEY',
});

/** An account's pointer from a key's id to its digest: listing and revoking by id read these. */
export const API_KEY_REF_SK_PREFIX = 'APIKEY#';
export const apiKeyRefKey = (accountId: string, keyId: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: `${API_KEY_REF_SK_PREFIX}${keyId}`,
});
export const apiKeyRefsPartition = (accountId: string): string => accountPk(accountId);

/** The set of an account's active key ids, whose size caps the active keys. */
export const apiKeySlotsKey = (accountId: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: 'APIKEY_SLOTS',
});

/** An account's webhook endpoints; ULID ids, so SK order = creation order. */
export const WEBHOOK_SK_PREFIX = 'WEBHOOK#';
export const webhookKey = (accountId: string, webhookId: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: `${WEBHOOK_SK_PREFIX}${webhookId}`,
});
export const webhooksPartition = (accountId: string): string => accountPk(accountId);

/** The set of an account's endpoint ids, whose size caps the endpoints. */
export const webhookSlotsKey = (accountId: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: 'WEBHOOK_SLOTS',
});

/** An endpoint's deliveries share a prefix (no other SK starts with `WEBHOOK_DELIVERY#`). */
export const webhookDeliveriesPrefix = (webhookId: string): string => `WEBHOOK_DELIVERY#${webhookId}#`;
export const webhookDeliveryKey = (accountId: string, webhookId: string, deliveryId: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: `${webhookDeliveriesPrefix(webhookId)}${deliveryId}`,
});

/** An account's signing keys (issue 34); ULID ids, so SK order = creation order. */
export const SIGNING_KEY_SK_PREFIX = 'SIGNKEY#';
export const signingKeyKey = (accountId: string, keyId: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: `${SIGNING_KEY_SK_PREFIX}${keyId}`,
});
/** The set of an account's signing key ids, whose size caps them. */
export const signingKeySlotsKey = (accountId: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: 'SIGNKEY_SLOTS',
});

/** An account's destinations (issue 36); ULID ids, so SK order = creation order. */
export const DESTINATION_SK_PREFIX = 'DEST#';
export const destinationKey = (accountId: string, id: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: `${DESTINATION_SK_PREFIX}${id}`,
});
/** The set of an account's destination ids, whose size caps them. */
export const destinationSlotsKey = (accountId: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: 'DEST_SLOTS',
});

/** An account's assets (issue 40), by name. */
export const ASSET_SK_PREFIX = 'ASSET#';
export const assetKey = (accountId: string, name: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: `${ASSET_SK_PREFIX}${name}`,
});
/** The account's assets' bytes together and their names, whose limits a write is held to. */
export const assetUsageKey = (accountId: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: 'ASSET_USAGE',
});

/** GSI1, the secondary listings index (functions/table.ts). */
export const GSI1 = tableSchema.globalSecondaryIndexes[0];
/** GSI2, the public listings index (functions/table.ts). */
export const GSI2 = tableSchema.globalSecondaryIndexes[1];

/** Emails are looked up case-insensitively. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();
export const accountEmailPartition = (email: string): string => `EMAIL#${normalizeEmail(email)}`;
/** An account item's GSI1 attributes: findable by its email. */
export const accountEmailIndexKey = (email: string, accountId: string): Readonly<Record<string, string>> => ({
  [GSI1.partitionKey]: accountEmailPartition(email),
  [GSI1.sortKey]: accountPk(accountId),
});

/**
 * A template record's index attributes: GSI1 lists its owner's templates, GSI2 (set only while it
 * is public) every public template. Ids are ULIDs, so both sort by creation.
 */
export const TEMPLATE_INDEX_SK_PREFIX = 'TEMPLATE#';
export const ownedTemplatesPartition = (accountId: string): string => accountPk(accountId);
export const PUBLIC_TEMPLATES_PARTITION = 'PUBLIC_TEMPLATES';
const templateIndexSk = (templateId: string): string => `${TEMPLATE_INDEX_SK_PREFIX}${templateId}`;
export const ownedTemplateIndexKey = (
  accountId: string,
  templateId: string,
): Readonly<Record<string, string>> => ({
  [GSI1.partitionKey]: ownedTemplatesPartition(accountId),
  [GSI1.sortKey]: templateIndexSk(templateId),
});
export const publicTemplateIndexKey = (templateId: string): Readonly<Record<string, string>> => ({
  [GSI2.partitionKey]: PUBLIC_TEMPLATES_PARTITION,
  [GSI2.sortKey]: templateIndexSk(templateId),
});

/**
 * The open jobs' index entries: on GSI1 (not an index of their own) so that adding them needed no
 * table change; their partitions share no prefix with GSI1's other entries. Sharded by a hash of
 * the job id, so that a burst of renders does not write one index partition.
 */
export const OPEN_JOB_SHARDS = 8;
const OPEN_JOBS_PREFIX = 'OPEN_JOBS#';
export const openJobsPartition = (shard: number): string => `${OPEN_JOBS_PREFIX}${shard}`;
export const openJobShard = (jobId: string): number =>
  createHash('sha256').update(jobId).digest().readUInt8(0) % OPEN_JOB_SHARDS;
/** Epoch milliseconds fit 15 digits until the year 33658: fixed width keeps string order = time order. */
export const leaseSortKey = (leaseUntil: number): string => String(Math.max(0, leaseUntil)).padStart(15, '0');
export const openJobIndexKey = (
  accountId: string,
  jobId: string,
  leaseUntil: number,
): Readonly<Record<string, string>> => ({
  [GSI1.partitionKey]: openJobsPartition(openJobShard(jobId)),
  [GSI1.sortKey]: `${leaseSortKey(leaseUntil)}#${accountId}#${jobId}`,
});
/** The account and job an open-job index entry names (the lease and job id hold no '#'). */
export const parseOpenJobSortKey = (sk: string): { accountId: string; jobId: string } | undefined => {
  const first = sk.indexOf('#');
  const last = sk.lastIndexOf('#');
  if (first < 0 || last <= first + 1 || last === sk.length - 1) return undefined;
  return { accountId: sk.slice(first + 1, last), jobId: sk.slice(last + 1) };
};

/**
 * Pending webhook deliveries' index entries, on GSI1 as the open jobs' are and sharded the same
 * way: set while a delivery is pending, keyed by when its next attempt is due, removed when it
 * succeeded or failed. The sweeper reads those long past due: a delivery whose message was never
 * sent (a crash between recording it and queueing it) or was lost (dead-lettered).
 */
const PENDING_DELIVERIES_PREFIX = 'PENDING_DELIVERIES#';
export const pendingDeliveriesPartition = (shard: number): string => `${PENDING_DELIVERIES_PREFIX}${shard}`;
export const pendingDeliveryIndexKey = (
  accountId: string,
  webhookId: string,
  deliveryId: string,
  dueAt: number,
): Readonly<Record<string, string>> => ({
  [GSI1.partitionKey]: pendingDeliveriesPartition(openJobShard(deliveryId)),
  [GSI1.sortKey]: `${leaseSortKey(dueAt)}#${accountId}#${webhookId}#${deliveryId}`,
});
/** The delivery a pending-delivery index entry names (the time, webhook and delivery ids hold no '#'). */
export const parsePendingDeliverySortKey = (
  sk: string,
): { accountId: string; webhookId: string; deliveryId: string; dueAt: number } | undefined => {
  const first = sk.indexOf('#');
  const last = sk.lastIndexOf('#');
  const middle = sk.lastIndexOf('#', last - 1);
  if (first < 0 || middle <= first + 1 || last <= middle + 1 || last === sk.length - 1) return undefined;
  return {
    dueAt: Number(sk.slice(0, first)),
    accountId: sk.slice(first + 1, middle),
    webhookId: sk.slice(middle + 1, last),
    deliveryId: sk.slice(last + 1),
  };
};

export const BATCH_SK_PREFIX = 'BATCH#';
export const batchKey = (accountId: string, batchId: string): ItemKey => ({
  [PK]: accountPk(accountId),
  [SK]: `${BATCH_SK_PREFIX}${batchId}`,
});
export const batchesPartition = (accountId: string): string => accountPk(accountId);

/**
 * A batch's jobs, on GSI2 (its other entries are public templates, under another partition):
 * job ids are monotonic ULIDs made in item order, so the sort key lists them in item order.
 */
export const batchJobsPartition = (accountId: string, batchId: string): string =>
  `${BATCH_SK_PREFIX}${accountId}#${batchId}`;
export const batchJobIndexKey = (
  accountId: string,
  batchId: string,
  jobId: string,
): Readonly<Record<string, string>> => ({
  [GSI2.partitionKey]: batchJobsPartition(accountId, batchId),
  [GSI2.sortKey]: `${JOB_SK_PREFIX}${jobId}`,
});
