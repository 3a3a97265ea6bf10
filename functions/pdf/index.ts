/**
 * The pdf resource's Lambda: its routes (routes.ts) bound to one call each into the PDF job use
 * cases, with what only this resource needs: the bucket's presigner and the renderer.
 */
import type { Environment } from '../core/config.js';
import { readResourceConfig } from '../core/config.js';
import { eInvoiceChecker } from '../core/e-invoice/check.js';
import { createResourceHandler, type LambdaHandler, Reply } from '../core/http.js';
import { REPLAYED } from '../core/responses.js';
import type { Renderer } from '../domain/common/ports.js';
import { pollAfterSeconds } from '../domain/jobs/jobs.js';
import { wiringOf } from '../route-declaration.js';
import * as build from '../services.js';
import { VARIABLE_CHECKS_PER_MINUTE } from '../settings.js';
import { webhookPayloads } from '../webhook-payloads.js';
import type { WebhookParts } from '../webhooks/queue.js';
import { previewResponse, variablesResponse } from './preview-schemas.js';
import { pdfResource } from './routes.js';
import { acceptedJobReply, jobResponse } from './schemas.js';

export interface PdfParts extends WebhookParts {
  /** The local stack's in-process renderer; in the cloud the renderer Lambda is invoked. */
  readonly renderer?: Renderer;
}

export const createHandler = (env: Environment, parts: PdfParts = {}): LambdaHandler => {
  const services = build.createServices(
    readResourceConfig(wiringOf(pdfResource), env),
    { eInvoices: eInvoiceChecker, ...parts },
    webhookPayloads,
  );
  const pdfJobs = services.get(build.pdfJobs);
  const asyncRenders = services.get(build.asyncRenders);
  const previews = services.get(build.previews);

  return createResourceHandler(pdfResource, services.get(build.http)(pdfJobs.countRequest), {
    createPdf: async ({ principal, body, headers }) => {
      if (body.mode === 'async') {
        const { job, replayed } = await asyncRenders.create(principal, body);
        return acceptedJobReply(job, headers.prefer, replayed ? REPLAYED : {});
      }
      const { job, replayed } = await pdfJobs.create(principal, body);
      return replayed ? new Reply(jobResponse(job), REPLAYED) : jobResponse(job);
    },
    createPreview: async ({ principal, body }) => previewResponse(await previews.create(principal, body)),
    checkPreviewVariables: async ({ principal, body }) =>
      variablesResponse(await previews.variables(principal, body, VARIABLE_CHECKS_PER_MINUTE)),
    listPdfs: async ({ principal, query }) => (await pdfJobs.list(principal, query)).map(jobResponse),
    getPdf: async ({ principal, pathParameters }) => {
      const job = await pdfJobs.get(principal, pathParameters.job_id ?? '');
      const retry = pollAfterSeconds(job.job);
      return retry === undefined
        ? jobResponse(job)
        : new Reply(jobResponse(job), { 'Retry-After': String(retry) });
    },
    cancelPdf: async ({ principal, pathParameters }) =>
      jobResponse(await pdfJobs.cancel(principal, pathParameters.job_id ?? '')),
  });
};
