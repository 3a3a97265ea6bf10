/** The S3 client the PDF storage presigns with. */
import { S3Client } from '@aws-sdk/client-s3';
import type { AwsConfig } from '../../core/config.js';
import { traced } from '../../core/tracing.js';
import { clientOptions } from '../client-options.js';

export const createS3Client = (aws: AwsConfig): S3Client =>
  traced(
    new S3Client({
      ...clientOptions(aws, aws.s3Endpoint),
      ...(aws.s3Endpoint ? { forcePathStyle: true } : {}),
    }),
  );
