/**
 * The pdf resource's Lambda: its routes (routes.ts) bound to one call each into the PDF job use
 * cases, with what only this resource needs: the bucket's presigner and the renderer.
 */

import type { Environment } from '../core/config.js';
import { readResourceConfig } from '../core/config.js';
import { createResourceHandler, type LambdaHandler, Reply } from '../core/http.js';
import { createLambdaRenderer } from '../core/renderer-client.js';
import { REPLAYED } from '../core/responses.js';
import { createApiRuntime, createS3Client, logFault } from '../core/runtime.js';
import { createS3PdfStorage } from '../core/storage.js';
import { checkIdempotencyKey, createIdempotencyStore } from '../domain/idempotency.js';
import { createJobStore } from '../domain/jobs.js';
import { createPdfJobs } from '../domain/pdf-jobs.js';
import type { Renderer } from '../domain/ports.js';
import { createTemplateStore } from '../domain/templates.js';
import { createUsageStore } from '../domain/usage.js';
import { wiringOf } from '../route-declaration.js';
import { DEFAULT_PLAN } from '../settings.js';
import { pdfResource } from './routes.js';

export interface PdfParts {
  /** The local stack's in-process renderer; in the cloud the renderer Lambda is invoked. */
  readonly renderer?: Renderer;
}

export const createHandler = (env: Environment, parts: PdfParts = {}): LambdaHandler => {
  const config = readResourceConfig(wiringOf(pdfResource), env);
  const { db, tableName, clock, http } = createApiRuntime(config);
  const { settings } = config;
  const renderer =
    parts.renderer ??
    (config.rendererFunctionName ? createLambdaRenderer(config.rendererFunctionName, config.aws) : undefined);
  if (!renderer) throw new Error('the pdf resource needs RENDERER_FUNCTION_NAME, or a renderer handed in');

  const pdfJobs = createPdfJobs({
    jobs: createJobStore(db, tableName, clock),
    usage: createUsageStore(db, tableName, clock),
    templates: createTemplateStore(db, tableName, clock, { onFault: logFault }),
    // A claim outlives the longest render it can wait for.
    idempotency: createIdempotencyStore(db, tableName, clock, settings.renderBudgetMs + 30_000),
    storage: createS3PdfStorage(createS3Client(config.aws), config.bucketName as string, {
      downloadUrlTtlSeconds: settings.downloadUrlTtlSeconds,
      uploadUrlTtlSeconds: Math.ceil(settings.renderBudgetMs / 1000) + 300,
    }),
    renderer,
    clock,
    plans: settings.plans,
    defaultPlan: DEFAULT_PLAN,
    limits: settings,
    onFault: logFault,
  });

  return createResourceHandler(
    pdfResource,
    http((principal, { headers, body }) => pdfJobs.countRequest(principal, headers['idempotency-key'], body)),
    {
      createPdf: async ({ principal, body, headers }) => {
        const { job, replayed } = await pdfJobs.create(
          principal,
          body,
          checkIdempotencyKey(headers['idempotency-key']),
        );
        return replayed ? new Reply(job, REPLAYED) : job;
      },
      listPdfs: ({ principal, query }) => pdfJobs.list(principal, query),
      getPdf: ({ principal, pathParameters }) => pdfJobs.get(principal, pathParameters.job_id ?? ''),
    },
  );
};
