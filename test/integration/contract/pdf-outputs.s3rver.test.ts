/**
 * The assembler and archiver contracts (test/contract/pdf-assembler.contract.ts,
 * batch-archiver.contract.ts) on the S3 adapters (functions/adapters/s3) against s3rver.
 */
import { GetObjectCommand, NoSuchKey, PutObjectCommand } from '@aws-sdk/client-s3';
import { createS3BatchArchiver } from '../../../functions/adapters/s3/batch-archive.js';
import { createS3PdfAssembler } from '../../../functions/adapters/s3/pdf-assembly.js';
import { batchArchiverContract } from '../../contract/batch-archiver.contract.js';
import { type ObjectsUnderTest, pdfAssemblerContract } from '../../contract/pdf-assembler.contract.js';
import { useBucket } from '../../helpers/s3rver.js';

const bucket = useBucket();

const on = async <P>(port: P): Promise<ObjectsUnderTest<P>> => ({
  port,
  async put(key, body) {
    await bucket.s3.send(new PutObjectCommand({ Bucket: bucket.name, Key: key, Body: body }));
  },
  async get(key) {
    try {
      const out = await bucket.s3.send(new GetObjectCommand({ Bucket: bucket.name, Key: key }));
      return await out.Body?.transformToByteArray();
    } catch (e) {
      if (e instanceof NoSuchKey) return undefined;
      throw e;
    }
  },
});

pdfAssemblerContract({
  name: 's3rver',
  create: (onFault) => on(createS3PdfAssembler(bucket.s3, bucket.name, onFault)),
});
batchArchiverContract({
  name: 's3rver',
  create: async () => on(createS3BatchArchiver(bucket.s3, bucket.name)),
});
