/**
 * X-Ray tracing (Powertools Tracer): the AWS SDK clients the API functions use are captured, so
 * each DynamoDB, S3 and Lambda call is a subsegment of the request's trace. Outside Lambda (the
 * local stack, tests) tracing is off and the clients are used as they are.
 */
import { Tracer } from '@aws-lambda-powertools/tracer';
import { SERVICE_NAME } from './logger.js';

export const tracer = new Tracer({ serviceName: SERVICE_NAME });

export const traced = <C>(client: C): C => tracer.captureAWSv3Client(client);
