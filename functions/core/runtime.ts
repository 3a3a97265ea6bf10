/**
 * What an API Lambda builds once per cold start: configuration, AWS clients, stores, the token
 * verifier and the route factory. Route files import from here; tests use the real parts.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createAccountStore } from '../domain/accounts.js';
import { createIdempotencyStore } from '../domain/idempotency.js';
import { createJobStore } from '../domain/jobs.js';
import { createPdfJobs } from '../domain/pdf-jobs.js';
import { createTemplateStore } from '../domain/templates.js';
import { createUsageStore } from '../domain/usage.js';
import { createApiKeyResolver } from './api-keys.js';
import { createAuthenticator } from './auth.js';
import { readApiConfig, readAuthConfig } from './config.js';
import { createRoute } from './http.js';
import { logger } from './logger.js';
import { resolveRenderer } from './renderer-client.js';
import { createS3PdfStorage } from './storage.js';

export const config = readApiConfig();
const { aws, limits, tableName } = config;

const db = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    region: aws.region,
    ...(aws.dynamoDbEndpoint ? { endpoint: aws.dynamoDbEndpoint } : {}),
  }),
  { marshallOptions: { removeUndefinedValues: true } },
);
const s3 = new S3Client({
  region: aws.region,
  ...(aws.s3Endpoint ? { endpoint: aws.s3Endpoint, forcePathStyle: true } : {}),
});

export const accounts = createAccountStore(db, tableName);

const apiKeys = createApiKeyResolver(db, tableName, config.apiKeySecret, aws);

export const authenticate = createAuthenticator(readAuthConfig(), apiKeys, (principal) =>
  accounts.ensure(principal.accountId, principal.email),
);

export const route = createRoute({ authenticate, maxRequestBodyBytes: limits.maxRequestBodyBytes });

export const pdfJobs = createPdfJobs({
  accounts,
  jobs: createJobStore(db, tableName),
  usage: createUsageStore(db, tableName),
  templates: createTemplateStore(db, tableName),
  // A claim outlives the longest render it can wait for.
  idempotency: createIdempotencyStore(db, tableName, limits.renderBudgetMs + 30_000),
  storage: createS3PdfStorage(s3, config.bucketName, {
    downloadUrlTtlSeconds: limits.downloadUrlTtlSeconds,
    uploadUrlTtlSeconds: Math.ceil(limits.renderBudgetMs / 1000) + 300,
  }),
  renderer: resolveRenderer(config.rendererFunctionName, aws),
  plans: config.plans,
  limits,
  onFault: (message, error) => logger.error(message, { error: error as Error }),
});
