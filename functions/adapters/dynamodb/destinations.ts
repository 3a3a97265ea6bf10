/**
 * Destinations (domain/destinations/destinations.ts), in the account's partition (keys.ts):
 *
 *   destination  ACCOUNT#<a> / DEST#<id>     bucket, region, role, external id, key template
 *   slots        ACCOUNT#<a> / DEST_SLOTS    the destinations' ids, a string set: one is created
 *                                            only by adding its id while the set is below the limit
 *
 * As signing keys are: take a slot, then write the item (a failure gives the slot back); delete
 * the item, then its slot. Another account's destination is never found: every read names the
 * caller's partition.
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { DestinationStore, StoredDestination } from '../../domain/destinations/destinations.js';
import {
  accountPartition,
  DESTINATION_SK_PREFIX,
  destinationKey,
  destinationSlotsKey,
  ENTITY,
  ITEM_ABSENT,
  ITEM_EXISTS,
  PK,
  SK,
} from './keys.js';

const isConditionFailure = (e: unknown) => (e as Error).name === 'ConditionalCheckFailedException';

const toDestination = (item: Record<string, unknown>): StoredDestination => ({
  id: String(item.id),
  name: String(item.name),
  bucket: String(item.bucket),
  region: String(item.region),
  role_arn: String(item.role_arn),
  external_id: String(item.external_id),
  key_template: String(item.key_template),
  prefix: typeof item.prefix === 'string' ? item.prefix : '',
  created_at: String(item.created_at),
  account_id: String(item.account_id),
});

const releaseSlotParams = (tableName: string, accountId: string, id: string): UpdateCommandInput => ({
  TableName: tableName,
  Key: destinationSlotsKey(accountId),
  UpdateExpression: 'DELETE destination_ids :ids',
  ExpressionAttributeValues: { ':ids': new Set([id]) },
});

export const createDestinationStore = (
  db: DynamoDBDocumentClient,
  tableName: string,
  onFault: (message: string, error: unknown) => void,
): DestinationStore => ({
  async create(destination, limit) {
    try {
      await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: destinationSlotsKey(destination.account_id),
          UpdateExpression: 'ADD destination_ids :id SET #type = :type',
          ConditionExpression: 'attribute_not_exists(destination_ids) OR size(destination_ids) < :limit',
          ExpressionAttributeNames: { '#type': 'type' },
          ExpressionAttributeValues: {
            ':id': new Set([destination.id]),
            ':limit': limit,
            ':type': ENTITY.destinationSlots,
          },
        }),
      );
    } catch (e) {
      if (isConditionFailure(e)) return { kind: 'limitReached' };
      throw e;
    }
    try {
      await db.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...destinationKey(destination.account_id, destination.id),
            type: ENTITY.destination,
            ...destination,
          },
          ConditionExpression: ITEM_ABSENT,
        }),
      );
    } catch (e) {
      await db
        .send(new UpdateCommand(releaseSlotParams(tableName, destination.account_id, destination.id)))
        .catch((f: unknown) => onFault('destination slot not given back after a failed creation', f));
      throw e;
    }
    return { kind: 'created' };
  },

  async get(accountId, id) {
    const out = await db.send(
      new GetCommand({ TableName: tableName, Key: destinationKey(accountId, id), ConsistentRead: true }),
    );
    return out.Item?.type === ENTITY.destination ? toDestination(out.Item) : undefined;
  },

  async list(accountId) {
    const found: StoredDestination[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const out = await db.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
          ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
          ExpressionAttributeValues: { ':pk': accountPartition(accountId), ':prefix': DESTINATION_SK_PREFIX },
          ScanIndexForward: false,
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of out.Items ?? [])
        if (item.type === ENTITY.destination) found.push(toDestination(item));
      startKey = out.LastEvaluatedKey;
    } while (startKey);
    return found;
  },

  async delete(accountId, id) {
    let deleted: StoredDestination;
    try {
      const out = await db.send(
        new DeleteCommand({
          TableName: tableName,
          Key: destinationKey(accountId, id),
          ConditionExpression: ITEM_EXISTS,
          ReturnValues: 'ALL_OLD',
        }),
      );
      deleted = toDestination(out.Attributes ?? {});
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
    await db
      .send(new UpdateCommand(releaseSlotParams(tableName, accountId, id)))
      .catch((f: unknown) => onFault('destination slot not given back after deletion', f));
    return deleted;
  },
});
