/**
 * The destination contracts (test/contract/destinations.contract.ts) on the real adapters: the
 * store on DynamoDB (dynalite), the writer's STS AssumeRole and S3 calls against the local STS
 * stand-in (lib/local/sts.ts) and s3rver.
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll } from 'vitest';
import { createDeliveryRecords } from '../../../functions/adapters/dynamodb/deliveries.js';
import { createDestinationStore } from '../../../functions/adapters/dynamodb/destinations.js';
import { createJobStore } from '../../../functions/adapters/dynamodb/jobs.js';
import { createStsDestinationWriter } from '../../../functions/adapters/sts/destination-writer.js';
import type {
  DestinationTarget,
  DestinationWriter,
} from '../../../functions/domain/destinations/destinations.js';
import { LOCAL_CREDENTIALS } from '../../../lib/local/credentials.js';
import { type LocalSts, startLocalSts } from '../../../lib/local/sts.js';
import {
  deliveryRecordsContract,
  destinationStoreContract,
  destinationWriterContract,
} from '../../contract/destinations.contract.js';
import { testClock, useTable } from '../../helpers/dynalite.js';
import { useBucket } from '../../helpers/s3rver.js';

const table = useTable();
destinationStoreContract({
  name: 'dynalite',
  create: () =>
    createDestinationStore(table.db, table.name, (message, error) => {
      throw new Error(`${message}: ${String(error)}`);
    }),
});

deliveryRecordsContract({
  name: 'dynalite (on the job item)',
  create: () => ({
    records: createDeliveryRecords(table.db, table.name),
    job: async (accountId, jobId) => {
      const jobs = createJobStore(table.db, table.name, testClock('2026-11-28T10:00:00.000Z'), {
        recordRetentionSeconds: 86_400,
      });
      await jobs.create({
        id: jobId,
        account_id: accountId,
        template_id: null,
        template_version: null,
        object_key: `pdf/${accountId}/${jobId}.pdf`,
      });
    },
  }),
});

const bucket = useBucket('customer-bucket');
let sts: LocalSts | undefined;
let writer: DestinationWriter | undefined;
const target: DestinationTarget = {
  bucket: bucket.name,
  region: 'us-east-1',
  roleArn: 'arn:aws:iam::123456789012:role/pdf-delivery',
  externalId: 'pdf-service-contract',
};

beforeAll(async () => {
  sts = await startLocalSts();
  sts.putRole(target.roleArn, { externalId: target.externalId });
  const endpoint = await bucket.s3.config.endpoint?.();
  if (!endpoint) throw new Error('the test bucket has no endpoint');
  writer = createStsDestinationWriter({
    stsEndpoint: sts.endpoint,
    s3Endpoint: `${endpoint.protocol}//${endpoint.hostname}:${endpoint.port}`,
    credentials: LOCAL_CREDENTIALS,
  });
});
afterAll(async () => {
  await sts?.close();
});

destinationWriterContract({
  name: 'STS and S3 (local STS stand-in, s3rver)',
  world: () => {
    if (!writer) throw new Error('not started');
    return {
      writer,
      target,
      async read(key) {
        try {
          const out = await bucket.s3.send(new GetObjectCommand({ Bucket: bucket.name, Key: key }));
          return new Uint8Array(
            await (out.Body?.transformToByteArray() ?? Promise.resolve(new Uint8Array())),
          );
        } catch (e) {
          if ((e as Error).name === 'NoSuchKey') return undefined;
          throw e;
        }
      },
    };
  },
});
