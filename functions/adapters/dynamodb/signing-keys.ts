/**
 * Signing keys (domain/signing/signing-keys.ts), in the account's partition (keys.ts):
 *
 *   key    ACCOUNT#<a> / SIGNKEY#<id>     name, chain, an uploaded private key sealed (never in clear)
 *   slots  ACCOUNT#<a> / SIGNKEY_SLOTS    the keys' ids, a string set: a key is created only by
 *                                         adding its id while the set has fewer than the limit
 *
 * As webhook endpoints are: take a slot, then write the key (a failure gives the slot back);
 * delete the key, then its slot. Another account's key is never found: its items are in its own
 * partition, and every read names the caller's.
 */
import {
  DeleteCommand,
  type DeleteCommandInput,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  type PutCommandInput,
  type QueryCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { SigningKeyStore, StoredSigningKey } from '../../domain/signing/signing-keys.js';
import {
  accountPartition,
  ENTITY,
  ITEM_ABSENT,
  ITEM_EXISTS,
  PK,
  SIGNING_KEY_SK_PREFIX,
  SK,
  signingKeyKey,
  signingKeySlotsKey,
} from './keys.js';
import { queryAll } from './pagination.js';

const isConditionFailure = (e: unknown) => (e as Error).name === 'ConditionalCheckFailedException';

const toKey = (item: Record<string, unknown>): StoredSigningKey => ({
  id: String(item.id),
  name: String(item.name),
  kind: item.kind === 'kms' ? 'kms' : 'uploaded',
  algorithm: item.algorithm === 'ECDSA' ? 'ECDSA' : 'RSA',
  certificate_pem: String(item.certificate_pem),
  certificate_subject: String(item.certificate_subject),
  certificate_expires_at: String(item.certificate_expires_at),
  kms_key_arn: typeof item.kms_key_arn === 'string' ? item.kms_key_arn : null,
  created_at: String(item.created_at),
  account_id: String(item.account_id),
  sealed_private_key: typeof item.sealed_private_key === 'string' ? item.sealed_private_key : null,
});

export const takeSigningKeySlotParams = (
  tableName: string,
  accountId: string,
  keyId: string,
  limit: number,
): UpdateCommandInput => ({
  TableName: tableName,
  Key: signingKeySlotsKey(accountId),
  UpdateExpression: 'ADD key_ids :id SET #type = :type',
  ConditionExpression: 'attribute_not_exists(key_ids) OR size(key_ids) < :limit',
  ExpressionAttributeNames: { '#type': 'type' },
  ExpressionAttributeValues: { ':id': new Set([keyId]), ':limit': limit, ':type': ENTITY.signingKeySlots },
});

const releaseSlotParams = (tableName: string, accountId: string, keyId: string): UpdateCommandInput => ({
  TableName: tableName,
  Key: signingKeySlotsKey(accountId),
  UpdateExpression: 'DELETE key_ids :ids',
  ExpressionAttributeValues: { ':ids': new Set([keyId]) },
});

export const createSigningKeyParams = (tableName: string, key: StoredSigningKey): PutCommandInput => ({
  TableName: tableName,
  Item: { ...signingKeyKey(key.account_id, key.id), type: ENTITY.signingKey, ...key },
  ConditionExpression: ITEM_ABSENT,
});

export const listSigningKeysParams = (tableName: string, accountId: string): QueryCommandInput => ({
  TableName: tableName,
  KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
  ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
  ExpressionAttributeValues: { ':pk': accountPartition(accountId), ':prefix': SIGNING_KEY_SK_PREFIX },
  ScanIndexForward: false,
  ConsistentRead: true,
});

export const deleteSigningKeyParams = (
  tableName: string,
  accountId: string,
  keyId: string,
): DeleteCommandInput => ({
  TableName: tableName,
  Key: signingKeyKey(accountId, keyId),
  ConditionExpression: ITEM_EXISTS,
  ReturnValues: 'ALL_OLD',
});

export const createSigningKeyStore = (
  db: DynamoDBDocumentClient,
  tableName: string,
  onFault: (message: string, error: unknown) => void,
): SigningKeyStore => ({
  async create(key, limit) {
    try {
      await db.send(new UpdateCommand(takeSigningKeySlotParams(tableName, key.account_id, key.id, limit)));
    } catch (e) {
      if (isConditionFailure(e)) return { kind: 'limitReached' };
      throw e;
    }
    try {
      await db.send(new PutCommand(createSigningKeyParams(tableName, key)));
    } catch (e) {
      await db
        .send(new UpdateCommand(releaseSlotParams(tableName, key.account_id, key.id)))
        .catch((f: unknown) => onFault('signing key slot not given back after a failed creation', f));
      throw e;
    }
    return { kind: 'created' };
  },

  async get(accountId, keyId) {
    const out = await db.send(
      new GetCommand({ TableName: tableName, Key: signingKeyKey(accountId, keyId), ConsistentRead: true }),
    );
    return out.Item?.type === ENTITY.signingKey ? toKey(out.Item) : undefined;
  },

  async list(accountId) {
    const items = await queryAll(db, listSigningKeysParams(tableName, accountId));
    return items.filter((item) => item.type === ENTITY.signingKey).map(toKey);
  },

  async delete(accountId, keyId) {
    let deleted: StoredSigningKey;
    try {
      const out = await db.send(new DeleteCommand(deleteSigningKeyParams(tableName, accountId, keyId)));
      deleted = toKey(out.Attributes ?? {});
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
    await db
      .send(new UpdateCommand(releaseSlotParams(tableName, accountId, keyId)))
      .catch((f: unknown) => onFault('signing key slot not given back after deletion', f));
    return deleted;
  },
});
