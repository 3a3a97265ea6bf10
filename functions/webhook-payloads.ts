/**
 * What webhook events carry: a job as GET /v1/pdf/{id} shows it, a batch as GET /v1/batches/{id}
 * does. The composition root injects these presenters into the domain's events (services.ts), so
 * the domain never reaches into the HTTP resources' wire schemas; only the functions whose jobs
 * or batches end hand them in (pdf, render-worker, sweeper).
 */
import { batchResponse } from './batches/schemas.js';
import { jobResponse } from './pdf/schemas.js';
import type { WebhookPresenters } from './services.js';

export const webhookPayloads: WebhookPresenters = { job: jobResponse, batch: batchResponse };
