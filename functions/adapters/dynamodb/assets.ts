/**
 * Assets (domain/assets/assets.ts), in the account's partition (keys.ts):
 *
 *   asset  ACCOUNT#<a> / ASSET#<name>    what is known of the file (its bytes are in the bucket)
 *   usage  ACCOUNT#<a> / ASSET_USAGE     `bytes`, the assets' sizes together, and `names`, a string set
 *
 * A write first takes room on the usage item (ADD, on condition that the bytes stay under the
 * account's limit and the names under their count), then writes the asset; a replaced asset's
 * bytes are given back after (so a replacement needs room for both for a moment), as are a
 * failed write's. Another account's asset is never found: every key names the caller's partition.
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { AssetStore, StoredAsset } from '../../domain/assets/assets.js';
import { ASSET_SK_PREFIX, accountPartition, assetKey, assetUsageKey, ENTITY, PK, SK } from './keys.js';
import { queryAll } from './pagination.js';

const isConditionFailure = (e: unknown) => (e as Error).name === 'ConditionalCheckFailedException';

const toAsset = (item: Record<string, unknown>): StoredAsset => ({
  name: String(item.name),
  kind: item.kind === 'font' ? 'font' : 'image',
  content_type: String(item.content_type) as StoredAsset['content_type'],
  size_bytes: Number(item.size_bytes),
  sha256: String(item.sha256),
  created_at: String(item.created_at),
  account_id: String(item.account_id),
  object_key: String(item.object_key),
});

export const takeAssetRoomParams = (
  tableName: string,
  asset: StoredAsset,
  limits: { maxAccountBytes: number; maxAssets: number },
): UpdateCommandInput => ({
  TableName: tableName,
  Key: assetUsageKey(asset.account_id),
  UpdateExpression: 'ADD #bytes :size, #names :names SET #type = :type',
  ConditionExpression:
    '(attribute_not_exists(#bytes) OR #bytes <= :room) AND (attribute_not_exists(#names) OR size(#names) < :limit OR contains(#names, :name))',
  ExpressionAttributeNames: { '#bytes': 'bytes', '#names': 'names', '#type': 'type' },
  ExpressionAttributeValues: {
    ':size': asset.size_bytes,
    ':names': new Set([asset.name]),
    ':name': asset.name,
    ':room': limits.maxAccountBytes - asset.size_bytes,
    ':limit': limits.maxAssets,
    ':type': ENTITY.assetUsage,
  },
});

const giveBackParams = (
  tableName: string,
  accountId: string,
  bytes: number,
  name?: string,
): UpdateCommandInput => ({
  TableName: tableName,
  Key: assetUsageKey(accountId),
  UpdateExpression: name === undefined ? 'ADD #bytes :less' : 'ADD #bytes :less DELETE #names :names',
  ExpressionAttributeNames:
    name === undefined ? { '#bytes': 'bytes' } : { '#bytes': 'bytes', '#names': 'names' },
  ExpressionAttributeValues:
    name === undefined ? { ':less': -bytes } : { ':less': -bytes, ':names': new Set([name]) },
});

export const createAssetStore = (
  db: DynamoDBDocumentClient,
  tableName: string,
  onFault: (message: string, error: unknown) => void,
): AssetStore => {
  const giveBack = (accountId: string, bytes: number, name: string | undefined, why: string) =>
    db
      .send(new UpdateCommand(giveBackParams(tableName, accountId, bytes, name)))
      .then(() => undefined)
      .catch((e: unknown) => onFault(why, e));
  const get = async (accountId: string, name: string) => {
    const out = await db.send(
      new GetCommand({ TableName: tableName, Key: assetKey(accountId, name), ConsistentRead: true }),
    );
    return out.Item?.type === ENTITY.asset ? toAsset(out.Item) : undefined;
  };
  return {
    async put(asset, limits) {
      try {
        await db.send(new UpdateCommand(takeAssetRoomParams(tableName, asset, limits)));
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        const usage = await db.send(
          new GetCommand({
            TableName: tableName,
            Key: assetUsageKey(asset.account_id),
            ConsistentRead: true,
          }),
        );
        const usedBytes = Number(usage.Item?.bytes ?? 0);
        const names =
          usage.Item?.names instanceof Set ? (usage.Item.names as Set<string>) : new Set<string>();
        if (usedBytes + asset.size_bytes > limits.maxAccountBytes)
          return { kind: 'quotaExceeded', usedBytes };
        if (!names.has(asset.name) && names.size >= limits.maxAssets) return { kind: 'limitReached' };
        return { kind: 'quotaExceeded', usedBytes };
      }
      let replaced: StoredAsset | undefined;
      try {
        const out = await db.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...assetKey(asset.account_id, asset.name), type: ENTITY.asset, ...asset },
            ReturnValues: 'ALL_OLD',
          }),
        );
        replaced = out.Attributes?.type === ENTITY.asset ? toAsset(out.Attributes) : undefined;
      } catch (e) {
        const existing = await get(asset.account_id, asset.name).catch(() => undefined);
        await giveBack(
          asset.account_id,
          asset.size_bytes,
          existing ? undefined : asset.name,
          'asset room not given back after a failed write',
        );
        throw e;
      }
      if (replaced) {
        await giveBack(
          asset.account_id,
          replaced.size_bytes,
          undefined,
          "a replaced asset's room not given back",
        );
      }
      return { kind: 'stored', replaced };
    },

    get,

    async list(accountId) {
      const items = await queryAll(db, {
        TableName: tableName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
        ExpressionAttributeValues: { ':pk': accountPartition(accountId), ':prefix': ASSET_SK_PREFIX },
        ConsistentRead: true,
      });
      return items.filter((item) => item.type === ENTITY.asset).map(toAsset);
    },

    async delete(accountId, name) {
      let deleted: StoredAsset;
      try {
        const out = await db.send(
          new DeleteCommand({
            TableName: tableName,
            Key: assetKey(accountId, name),
            ConditionExpression: `attribute_exists(${PK})`,
            ReturnValues: 'ALL_OLD',
          }),
        );
        deleted = toAsset(out.Attributes ?? {});
      } catch (e) {
        if (isConditionFailure(e)) return undefined;
        throw e;
      }
      await giveBack(accountId, deleted.size_bytes, name, "a deleted asset's room not given back");
      return deleted;
    },
  };
};
