/**
 * The batches resource's Lambda: its routes (routes.ts) bound to one call each into the batch use
 * cases, with the render queue its jobs go to and the bucket their orders and links live in.
 */
import { type Environment, readResourceConfig } from '../core/config.js';
import { eInvoiceChecker } from '../core/e-invoice/check.js';
import { createResourceHandler, type LambdaHandler, Reply } from '../core/http.js';
import { planAllowance } from '../domain/accounts/usage.js';
import { jobResponse } from '../pdf/schemas.js';
import { wiringOf } from '../route-declaration.js';
import * as build from '../services.js';
import { DEFAULT_PLAN } from '../settings.js';
import { webhookPayloads } from '../webhook-payloads.js';
import type { WebhookParts } from '../webhooks/queue.js';
import { batchesResource } from './routes.js';
import { batchResponse } from './schemas.js';

export const createHandler = (env: Environment, parts: WebhookParts = {}): LambdaHandler => {
  const services = build.createServices(
    readResourceConfig(wiringOf(batchesResource), env),
    // Items with an e-invoice are validated at acceptance (its validators load on the first).
    { eInvoices: eInvoiceChecker, ...parts },
    webhookPayloads,
  );
  const { settings } = services;
  const batches = services.get(build.batches);
  const usage = services.get(build.usage);

  // A batch is one request against the per-minute rate limit; its items count against the quota.
  return createResourceHandler(
    batchesResource,
    services.get(build.http)((principal) =>
      usage.hitRateLimit(principal.accountId, planAllowance(settings.plans, principal.plan, DEFAULT_PLAN)),
    ),
    {
      createBatch: async ({ principal, body }) => batchResponse(await batches.create(principal, body)),
      listBatches: async ({ principal, query }) => (await batches.list(principal, query)).map(batchResponse),
      getBatch: async ({ principal, pathParameters }) =>
        batchResponse(await batches.get(principal, pathParameters.batch_id ?? '')),
      listBatchJobs: async ({ principal, pathParameters, query }) => {
        const { status, ...page } = query;
        const { jobs, hasMore } = await batches.listJobsPage(
          principal,
          pathParameters.batch_id ?? '',
          page,
          status,
        );
        return new Reply(jobs.map(jobResponse), { 'Has-More': String(hasMore) });
      },
      cancelBatch: async ({ principal, pathParameters }) =>
        batchResponse(await batches.cancel(principal, pathParameters.batch_id ?? '')),
    },
  );
};
