/** The SQS client the queues send with (AWS_ENDPOINT_URL_SQS: the local stack's server). */
import { SQSClient } from '@aws-sdk/client-sqs';
import type { AwsConfig } from '../../core/config.js';
import { traced } from '../../core/tracing.js';
import { clientOptions } from '../client-options.js';

export const createSqsClient = (aws: AwsConfig): SQSClient =>
  traced(new SQSClient(clientOptions(aws, aws.sqsEndpoint)));
