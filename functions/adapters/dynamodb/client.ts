/** The DynamoDB document client, made once per cold start; the stores in this folder send through it. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AwsConfig } from '../../core/config.js';
import { traced } from '../../core/tracing.js';
import { clientOptions } from '../client-options.js';

/**
 * DynamoDB calls take milliseconds; one that hangs is given up after 2 s (connecting: 1 s) and
 * retried, with throttling, by the SDK's standard retries (3 attempts), after which the request
 * answers 500 INTERNAL_ERROR instead of waiting for the function's timeout.
 */
const DYNAMODB_TIMEOUTS = { connectionTimeout: 1_000, requestTimeout: 2_000, throwOnRequestTimeout: true };

export const createDocumentClient = (aws: AwsConfig): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(
    traced(
      new DynamoDBClient({
        ...clientOptions(aws, aws.dynamoDbEndpoint),
        requestHandler: DYNAMODB_TIMEOUTS,
        maxAttempts: 3,
      }),
    ),
    { marshallOptions: { removeUndefinedValues: true } },
  );
