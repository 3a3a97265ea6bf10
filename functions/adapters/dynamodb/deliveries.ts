/**
 * A job's delivery into its destination (domain/destinations/deliveries.ts), kept on the job's own
 * item (keys.ts: ACCOUNT#<a> / JOB#<id>) as its `delivery` attribute, so that it is read with the
 * job and goes when the job's record does (its TTL). Each write is conditional: the first on the
 * job existing with no delivery yet, the next ones on the delivery being pending with exactly the
 * attempts before it (the fence that drops a duplicate message).
 */
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DeliveryRecords, JobDelivery } from '../../domain/destinations/deliveries.js';
import { ENTITY, jobKey } from './keys.js';

const isConditionFailure = (e: unknown) => (e as Error).name === 'ConditionalCheckFailedException';

export const createDeliveryRecords = (db: DynamoDBDocumentClient, tableName: string): DeliveryRecords => ({
  async get(accountId, jobId) {
    const out = await db.send(
      new GetCommand({
        TableName: tableName,
        Key: jobKey(accountId, jobId),
        ProjectionExpression: '#type, delivery',
        ExpressionAttributeNames: { '#type': 'type' },
        ConsistentRead: true,
      }),
    );
    return out.Item?.type === ENTITY.job && out.Item.delivery
      ? (out.Item.delivery as JobDelivery)
      : undefined;
  },

  async put(accountId, jobId, next, afterAttempts) {
    try {
      await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: jobKey(accountId, jobId),
          UpdateExpression: 'SET delivery = :next',
          ConditionExpression:
            afterAttempts === null
              ? '#type = :job AND attribute_not_exists(delivery)'
              : '#type = :job AND delivery.#status = :pending AND delivery.attempts = :after',
          ExpressionAttributeNames: {
            '#type': 'type',
            ...(afterAttempts === null ? {} : { '#status': 'status' }),
          },
          ExpressionAttributeValues: {
            ':next': next,
            ':job': ENTITY.job,
            ...(afterAttempts === null ? {} : { ':pending': 'pending', ':after': afterAttempts }),
          },
        }),
      );
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  },
});
