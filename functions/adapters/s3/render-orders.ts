/**
 * Async renders' orders (domain/async-renders.ts, RenderOrders) in the PDF bucket, under
 * `orders/`: private, written by the API, read and deleted by the render queue's consumer.
 * Requests are built by the pure `*Params()` functions below.
 */
import {
  DeleteObjectCommand,
  type DeleteObjectCommandInput,
  GetObjectCommand,
  type GetObjectCommandInput,
  PutObjectCommand,
  type PutObjectCommandInput,
  type S3Client,
} from '@aws-sdk/client-s3';
import {
  type AnyStoredOrder,
  orderObjectKey,
  type RenderOrders,
} from '../../domain/renders/async-renders.js';

export const putOrderParams = (
  bucket: string,
  accountId: string,
  jobId: string,
  order: AnyStoredOrder,
): PutObjectCommandInput => ({
  Bucket: bucket,
  Key: orderObjectKey(accountId, jobId),
  Body: JSON.stringify(order),
  ContentType: 'application/json',
});

export const getOrderParams = (bucket: string, accountId: string, jobId: string): GetObjectCommandInput => ({
  Bucket: bucket,
  Key: orderObjectKey(accountId, jobId),
});

export const deleteOrderParams = (
  bucket: string,
  accountId: string,
  jobId: string,
): DeleteObjectCommandInput => ({
  Bucket: bucket,
  Key: orderObjectKey(accountId, jobId),
});

const isMissing = (e: unknown) => {
  const name = (e as Error | undefined)?.name;
  return name === 'NoSuchKey' || name === 'NotFound';
};

export const createS3RenderOrders = (s3: S3Client, bucket: string): RenderOrders => ({
  async put(accountId, jobId, order) {
    await s3.send(new PutObjectCommand(putOrderParams(bucket, accountId, jobId, order)));
  },
  async get(accountId, jobId) {
    try {
      const out = await s3.send(new GetObjectCommand(getOrderParams(bucket, accountId, jobId)));
      const text = (await out.Body?.transformToString('utf8')) ?? '';
      return JSON.parse(text) as AnyStoredOrder;
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
  },
  async delete(accountId, jobId) {
    await s3.send(new DeleteObjectCommand(deleteOrderParams(bucket, accountId, jobId)));
  },
});
