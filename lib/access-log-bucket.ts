/**
 * A bucket for a CloudFront distribution's standard logs, kept 30 days (as long as the API's own
 * access logs): private, encrypted, TLS only. CloudFront writes its logs with an ACL granted to
 * its log delivery account, so the bucket keeps ACLs enabled (BUCKET_OWNER_PREFERRED).
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';

export interface AccessLogBucketProps {
  /** Whose logs, for the cdk-nag acknowledgement: e.g. "the dashboard distribution's". */
  readonly of: string;
  /** @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
}

export const createAccessLogBucket = (scope: Construct, id: string, props: AccessLogBucketProps): Bucket => {
  const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
  const bucket = new Bucket(scope, id, {
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED,
    encryption: BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    minimumTLSVersion: 1.2,
    lifecycleRules: [{ id: 'expire-logs', expiration: Duration.days(30) }],
    removalPolicy,
    autoDeleteObjects: removalPolicy === RemovalPolicy.DESTROY,
  });
  Validations.of(bucket).acknowledge({
    id: 'AwsSolutions-S1',
    reason:
      `This bucket holds ${props.of} access logs; logging access to it would need yet another bucket. ` +
      'Nothing but CloudFront writes here, and readers are the account’s operators.',
  });
  return bucket;
};
