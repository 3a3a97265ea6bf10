/** Region, endpoint (the local stack's) and credentials, as every AWS client of the service takes them. */
import type { AwsConfig } from '../core/config.js';

export const clientOptions = (aws: AwsConfig, endpoint: string | undefined) => ({
  region: aws.region,
  ...(endpoint ? { endpoint } : {}),
  ...(aws.credentials ? { credentials: aws.credentials } : {}),
});
