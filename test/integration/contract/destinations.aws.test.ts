/**
 * The destination contracts (test/contract/destinations.contract.ts) on the real adapters: the
 * store on DynamoDB (dynalite), the writer's STS AssumeRole and S3 calls against the local STS
 * stand-in (lib/local/sts.ts) and s3rver.
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll } from 'vitest';
import { createDestinationStore } from '../../../functions/adapters/dynamodb/destinations.js';
import { createStsDestinationWriter } from '../../../functions/adapters/sts/destination-writer.js';
import type {
  DestinationTarget,
  DestinationWriter,
} from '../../../functions/domain/destinations/destinations.js';
import { LOCAL_CREDENTIALS } from '../../../lib/local/credentials.js';
import { type LocalSts, startLocalSts } from '../../../lib/local/sts.js';
import { destinationStoreContract, destinationWriterContract } from '../../contract/destinations.contract.js';
import { useTable } from '../../helpers/dynalite.js';
import { useBucket } from '../../helpers/s3rver.js';

const table = useTable();
destinationStoreContract({
  name: 'dynalite',
  create: () =>
    createDestinationStore(table.db, table.name, (message, error) => {
      throw new Error(`${message}: ${String(error)}`);
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
