/**
 * Batches' orders (domain/batch-queue.ts, BatchOrders) in the PDF bucket, under
 * `orders/{account}/batches/`: private, written by the API, read by the render queue's consumer,
 * deleted when the batch completes.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  type PutObjectCommandInput,
  type S3Client,
} from '@aws-sdk/client-s3';
import { type BatchOrder, type BatchOrders, batchOrderObjectKey } from '../../domain/batches/batch-queue.js';

export const putBatchOrderParams = (
  bucket: string,
  accountId: string,
  batchId: string,
  order: BatchOrder,
): PutObjectCommandInput => ({
  Bucket: bucket,
  Key: batchOrderObjectKey(accountId, batchId),
  Body: JSON.stringify(order),
  ContentType: 'application/json',
});

const isMissing = (e: unknown) => {
  const name = (e as Error | undefined)?.name;
  return name === 'NoSuchKey' || name === 'NotFound';
};

export const createS3BatchOrders = (s3: S3Client, bucket: string): BatchOrders => ({
  async put(accountId, batchId, order) {
    await s3.send(new PutObjectCommand(putBatchOrderParams(bucket, accountId, batchId, order)));
  },
  async get(accountId, batchId) {
    try {
      const out = await s3.send(
        new GetObjectCommand({ Bucket: bucket, Key: batchOrderObjectKey(accountId, batchId) }),
      );
      return JSON.parse((await out.Body?.transformToString('utf8')) ?? '') as BatchOrder;
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
  },
  async delete(accountId, batchId) {
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: batchOrderObjectKey(accountId, batchId) }));
  },
});
