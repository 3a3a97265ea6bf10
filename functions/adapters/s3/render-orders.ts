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
import { type KeptOrder, keptOrderObjectKey } from '../../domain/renders/kept-orders.js';

type KeyOf = (accountId: string, jobId: string) => string;

export const putOrderParams = (
  bucket: string,
  accountId: string,
  jobId: string,
  order: AnyStoredOrder | KeptOrder,
  keyOf: KeyOf = orderObjectKey,
): PutObjectCommandInput => ({
  Bucket: bucket,
  Key: keyOf(accountId, jobId),
  Body: JSON.stringify(order),
  ContentType: 'application/json',
});

export const getOrderParams = (
  bucket: string,
  accountId: string,
  jobId: string,
  keyOf: KeyOf = orderObjectKey,
): GetObjectCommandInput => ({
  Bucket: bucket,
  Key: keyOf(accountId, jobId),
});

export const deleteOrderParams = (
  bucket: string,
  accountId: string,
  jobId: string,
  keyOf: KeyOf = orderObjectKey,
): DeleteObjectCommandInput => ({
  Bucket: bucket,
  Key: keyOf(accountId, jobId),
});

const isMissing = (e: unknown) => {
  const name = (e as Error | undefined)?.name;
  return name === 'NoSuchKey' || name === 'NotFound';
};

const read = async <T>(s3: S3Client, params: GetObjectCommandInput): Promise<T | undefined> => {
  try {
    const out = await s3.send(new GetObjectCommand(params));
    const text = (await out.Body?.transformToString('utf8')) ?? '';
    return JSON.parse(text) as T;
  } catch (e) {
    if (isMissing(e)) return undefined;
    throw e;
  }
};

/** Pending orders under `orders/`; kept ones beside their job's PDF under `pdf/` (kept-orders.ts). */
export const createS3RenderOrders = (s3: S3Client, bucket: string): RenderOrders => ({
  async put(accountId, jobId, order) {
    await s3.send(new PutObjectCommand(putOrderParams(bucket, accountId, jobId, order)));
  },
  get: (accountId, jobId) => read<AnyStoredOrder>(s3, getOrderParams(bucket, accountId, jobId)),
  async delete(accountId, jobId) {
    await s3.send(new DeleteObjectCommand(deleteOrderParams(bucket, accountId, jobId)));
  },
  async keep(accountId, jobId, order) {
    await s3.send(new PutObjectCommand(putOrderParams(bucket, accountId, jobId, order, keptOrderObjectKey)));
  },
  kept: (accountId, jobId) =>
    read<KeptOrder>(s3, getOrderParams(bucket, accountId, jobId, keptOrderObjectKey)),
  async discardKept(accountId, jobId) {
    await s3.send(new DeleteObjectCommand(deleteOrderParams(bucket, accountId, jobId, keptOrderObjectKey)));
  },
});
