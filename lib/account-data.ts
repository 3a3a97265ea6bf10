/**
 * Everything one account has in the table and the bucket, found through the single table's
 * layout (functions/adapters/dynamodb/keys.ts), never a scan: its own partition (account, jobs,
 * usage, rate windows, idempotency records, API key refs and slots), the API key items its refs
 * point to, its templates' partitions (record, versions, chunks) through GSI1, and its PDFs
 * under `pdf/<account>/` with the orders of its async renders under `orders/<account>/` and its
 * previews (kept a day) under `previews/<account>/`. The admin
 * command's `export` and `delete` (lib/admin.ts) read it.
 */
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  type S3Client,
} from '@aws-sdk/client-s3';
import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import {
  accountPartition,
  apiKeyItemKey,
  ENTITY,
  GSI1,
  ownedTemplatesPartition,
  PK,
  SK,
  TEMPLATE_INDEX_SK_PREFIX,
} from '../functions/adapters/dynamodb/keys.js';
import { pdfObjectKey } from '../functions/domain/jobs/jobs.js';
import { orderObjectKey } from '../functions/domain/renders/async-renders.js';
import { previewObjectKey } from '../functions/domain/renders/previews.js';

export type Item = Record<string, unknown>;

export interface StoredObject {
  readonly key: string;
  readonly sizeBytes: number;
  readonly lastModified: string | undefined;
}

export interface AccountData {
  /** In the order `delete` removes them: API key items first, so the keys stop working at once. */
  readonly items: readonly Item[];
  readonly objects: readonly StoredObject[];
}

export interface AccountDataTarget {
  readonly db: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly s3: S3Client;
  readonly bucketName: string;
}

/** The prefix of the account's objects in the PDF bucket (the slash keeps `acc_1` from matching `acc_10`). */
export const accountObjectPrefix = (accountId: string): string =>
  pdfObjectKey(accountId, '').replace(/\.pdf$/, '');

const queryAll = async (db: DynamoDBDocumentClient, input: QueryCommandInput): Promise<Item[]> => {
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
};

const partition = (db: DynamoDBDocumentClient, tableName: string, pk: string) =>
  queryAll(db, {
    TableName: tableName,
    KeyConditionExpression: '#pk = :pk',
    ExpressionAttributeNames: { '#pk': PK },
    ExpressionAttributeValues: { ':pk': pk },
    ConsistentRead: true,
  });

export const collectAccountItems = async (
  db: DynamoDBDocumentClient,
  tableName: string,
  accountId: string,
): Promise<Item[]> => {
  const own = await partition(db, tableName, accountPartition(accountId));
  const keyItems: Item[] = [];
  for (const ref of own.filter((i) => i.type === ENTITY.apiKeyRef)) {
    const out = await db.send(
      new GetCommand({ TableName: tableName, Key: apiKeyItemKey(String(ref.digest)), ConsistentRead: true }),
    );
    // The digest is the item's key: checked against the owner so a bad ref can never reach another's key.
    if (out.Item?.type === ENTITY.apiKey && out.Item.account_id === accountId) keyItems.push(out.Item);
  }
  const listed = await queryAll(db, {
    TableName: tableName,
    IndexName: GSI1.indexName,
    KeyConditionExpression: '#gpk = :gpk AND begins_with(#gsk, :prefix)',
    ExpressionAttributeNames: { '#gpk': GSI1.partitionKey, '#gsk': GSI1.sortKey },
    ExpressionAttributeValues: {
      ':gpk': ownedTemplatesPartition(accountId),
      ':prefix': TEMPLATE_INDEX_SK_PREFIX,
    },
  });
  const templateItems: Item[] = [];
  for (const record of listed) {
    if (record.type !== ENTITY.template || record.owner_user_id !== accountId) continue;
    templateItems.push(...(await partition(db, tableName, String(record[PK]))));
  }
  return [...keyItems, ...templateItems, ...own];
};

/** The prefix of the account's async render orders (template and variables of jobs not yet ended). */
export const accountOrderPrefix = (accountId: string): string =>
  orderObjectKey(accountId, '').replace(/\.json$/, '');

/** The prefix of the account's previews (issue 40; the bucket deletes them after a day). */
export const accountPreviewPrefix = (accountId: string): string =>
  previewObjectKey(accountId, '').replace(/\.pdf$/, '');

/** The account's PDFs, its previews, and the orders of its async renders still in flight (they hold its variables). */
export const listAccountObjects = async (
  s3: S3Client,
  bucketName: string,
  accountId: string,
): Promise<StoredObject[]> => {
  const objects: StoredObject[] = [];
  for (const prefix of [
    accountObjectPrefix(accountId),
    accountOrderPrefix(accountId),
    accountPreviewPrefix(accountId),
  ]) {
    let token: string | undefined;
    do {
      const out = await s3.send(
        new ListObjectsV2Command({ Bucket: bucketName, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of out.Contents ?? []) {
        if (o.Key === undefined) continue;
        objects.push({ key: o.Key, sizeBytes: o.Size ?? 0, lastModified: o.LastModified?.toISOString() });
      }
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
  }
  return objects;
};

export const collectAccountData = async (
  target: AccountDataTarget,
  accountId: string,
): Promise<AccountData> => ({
  items: await collectAccountItems(target.db, target.tableName, accountId),
  objects: await listAccountObjects(target.s3, target.bucketName, accountId),
});

export const readObject = async (target: AccountDataTarget, key: string): Promise<Uint8Array> => {
  const out = await target.s3.send(new GetObjectCommand({ Bucket: target.bucketName, Key: key }));
  if (!out.Body) throw new Error(`object ${key} has no body`);
  return out.Body.transformToByteArray();
};

/** Items by entity type, for what a command says it found or removed. */
export const countByType = (items: readonly Item[]): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const item of items) {
    const type = String(item.type ?? 'unknown');
    counts[type] = (counts[type] ?? 0) + 1;
  }
  return counts;
};

/** A line of the export: items as stored, sets as arrays, bytes (gzipped template content) as base64. */
export const exportLine = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Set) return [...v].sort();
    if (v instanceof Uint8Array) return { base64: Buffer.from(v).toString('base64') };
    return v;
  });

const BATCH_ITEMS = 25;
const BATCH_OBJECTS = 1000;

const deleteItems = async (target: AccountDataTarget, items: readonly Item[]): Promise<void> => {
  for (let i = 0; i < items.length; i += BATCH_ITEMS) {
    let requests: Record<string, unknown>[] | undefined = items.slice(i, i + BATCH_ITEMS).map((item) => ({
      DeleteRequest: { Key: { [PK]: item[PK], [SK]: item[SK] } },
    }));
    for (let attempt = 0; requests && requests.length > 0; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(2000, 50 * 2 ** attempt)));
      if (attempt > 10) throw new Error('DynamoDB kept items unprocessed: run the command again');
      const out = await target.db.send(
        new BatchWriteCommand({ RequestItems: { [target.tableName]: requests as never } }),
      );
      requests = out.UnprocessedItems?.[target.tableName] as Record<string, unknown>[] | undefined;
    }
  }
};

const deleteObjects = async (target: AccountDataTarget, objects: readonly StoredObject[]): Promise<void> => {
  for (let i = 0; i < objects.length; i += BATCH_OBJECTS) {
    const out = await target.s3.send(
      new DeleteObjectsCommand({
        Bucket: target.bucketName,
        Delete: { Objects: objects.slice(i, i + BATCH_OBJECTS).map((o) => ({ Key: o.key })), Quiet: true },
      }),
    );
    if (out.Errors && out.Errors.length > 0) {
      throw new Error(
        `S3 refused to delete ${out.Errors.length} objects (${out.Errors[0]?.Code}): run again`,
      );
    }
  }
};

/**
 * Deletes what `collectAccountData` found: the API key items first (the account's keys stop
 * working), then the PDFs, then the templates, then the account's partition, its account item
 * last of all. Every step is a delete by key, so running it again after a failure finishes the job.
 */
export const deleteAccountData = async (target: AccountDataTarget, data: AccountData): Promise<void> => {
  const keys = data.items.filter((i) => i.type === ENTITY.apiKey);
  const rest = data.items.filter((i) => i.type !== ENTITY.apiKey && i.type !== ENTITY.account);
  const account = data.items.filter((i) => i.type === ENTITY.account);
  await deleteItems(target, keys);
  await deleteObjects(target, data.objects);
  await deleteItems(target, rest);
  await deleteItems(target, account);
};
