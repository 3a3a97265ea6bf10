/**
 * The PDF job use cases: render (POST /v1/pdf), get one, list. Each route file is one call here.
 *
 * Order of checks for a render (contract precedence, after credentials and body parsing):
 * rate limit → validation → idempotency → template lookup → template parsing → quota → job + render.
 * Every render that passes the quota creates a job; a job that fails gives its quota unit back.
 *
 * Templates are only parsed here (syntax, variables the template cannot do without): executing
 * one is running a stranger's code, and this function holds the table, the presigner and the
 * API-key secret. The renderer executes it (functions/renderer/templating-pool.ts); what only
 * execution reveals (an undefined attribute, a runtime error, the time or output limit) fails
 * the job there, like any render failure.
 */
import type { Renderer, RenderRequest, RenderResult } from '../renderer/contract.js';
import { parseTemplate, TemplateError } from '../templating/index.js';
import type { AccountStore } from './accounts.js';
import { type ErrorDetail, ServiceError } from './errors.js';
import { bodyHash, type IdempotencyStore, type StoredAnswer } from './idempotency.js';
import { newJobId } from './ids.js';
import { hasFile, type Job, type JobResponse, type JobStore, jobResponse } from './jobs.js';
import { pdfObjectKey } from './keys.js';
import { type CreatePdfBody, type RenderOptions, renderOptionsFrom } from './pdf-request.js';
import type { Principal } from './principal.js';
import type { PdfStorage } from './storage.js';
import type { TemplateStore } from './templates.js';
import type { PlanLimits as Plan, RateLimitState, UsageStore } from './usage.js';

export interface PdfJobLimits {
  readonly renderBudgetMs: number;
  readonly maxRenderedHtmlBytes: number;
  readonly maxPdfBytes: number;
  readonly maxPdfPages: number;
  readonly pdfRetentionDays: number;
}

export interface PdfJobDeps {
  readonly accounts: AccountStore;
  readonly jobs: JobStore;
  readonly usage: UsageStore;
  readonly templates: TemplateStore;
  readonly idempotency: IdempotencyStore;
  readonly storage: PdfStorage;
  readonly renderer: Renderer;
  readonly plans: Readonly<Record<string, Plan>>;
  readonly limits: PdfJobLimits;
  /** Told about faults that are answered as a failed job rather than thrown. */
  readonly onFault?: (message: string, error: unknown) => void;
}

const JOB_ID = /^job_[0-9A-HJKMNP-TV-Z]{26}$/;

const jobNotFound = (jobId: string) =>
  new ServiceError('PDF_JOB_NOT_FOUND', `PDF job ${jobId} was not found`);

type TemplateField = 'html' | 'template_id';

const templateDetail = (
  field: TemplateField,
  issue: string,
  where: { readonly line?: number; readonly name?: string } = {},
): ErrorDetail => ({
  field,
  issue,
  ...(where.line !== undefined ? { line: where.line } : {}),
  ...(where.name !== undefined ? { name: where.name } : {}),
});

/**
 * Parses the template (never executes it): a syntax error, or a variable the template cannot do
 * without that `variables` lacks, answers 422 INVALID_HTML_TEMPLATE before the quota, with no job.
 */
const checkTemplate = (source: string, variables: Record<string, unknown>, field: TemplateField): void => {
  let required: readonly { readonly name: string; readonly line: number }[];
  try {
    required = parseTemplate(source).required;
  } catch (e) {
    if (!(e instanceof TemplateError)) throw e;
    throw new ServiceError('INVALID_HTML_TEMPLATE', e.message, {
      details: [templateDetail(field, e.message, { line: e.line })],
    });
  }
  let missing: { readonly name: string; readonly line: number } | undefined;
  for (const variable of required) {
    if (Object.hasOwn(variables, variable.name)) continue;
    if (!missing || variable.line < missing.line) missing = variable;
  }
  if (missing) {
    const message = `Variable '${missing.name}' is undefined (line ${missing.line})`;
    throw new ServiceError('INVALID_HTML_TEMPLATE', message, {
      details: [templateDetail(field, message, missing)],
    });
  }
};

export const createPdfJobs = (deps: PdfJobDeps) => {
  const { accounts, jobs, usage, templates, idempotency, storage, renderer, limits } = deps;

  const planOf = async (principal: Principal): Promise<Plan> => {
    const account = await accounts.ensure(principal.accountId, principal.email);
    return deps.plans[account.plan] ?? (deps.plans.free as Plan);
  };

  const present = async (job: Job): Promise<JobResponse> =>
    jobResponse(
      job,
      hasFile(job, limits.pdfRetentionDays)
        ? await storage.downloadUrl(job.object_key, `${job.id}.pdf`)
        : null,
    );

  const callRenderer = async (request: RenderRequest): Promise<RenderResult> => {
    try {
      return await renderer.render(request);
    } catch (e) {
      deps.onFault?.('renderer call failed', e);
      return {
        ok: false,
        code: 'PDF_RENDERING_FAILED',
        message: 'The renderer failed before producing a PDF.',
      };
    }
  };

  /** Template, quota, job, render: the part that an idempotent replay skips. */
  const renderNew = async (
    principal: Principal,
    plan: Plan,
    body: CreatePdfBody,
    options: RenderOptions,
  ): Promise<JobResponse> => {
    const templateId = body.template_id ?? null;
    const field: TemplateField = templateId ? 'template_id' : 'html';
    const source = body.html ?? (await templates.getReadable(templateId as string, principal.accountId)).html;
    const variables = body.variables ?? {};
    checkTemplate(source, variables, field);

    const month = await usage.reserveRender(principal.accountId, plan);
    const jobId = newJobId();
    const objectKey = pdfObjectKey(principal.accountId, jobId);
    let job: Job | undefined;
    try {
      const upload = await storage.uploadTarget(objectKey);
      // Chromium starts at once; the job is written (pending, then rendering) while it works. No
      // one can tell: the job's id, its state and its link reach the caller only after both, and
      // the outcome is written only then. A PDF stored for a job whose write failed is an orphan
      // that the retention rule removes.
      const rendered = callRenderer({
        template: { source, variables },
        ...options,
        upload,
        limits: {
          maxPdfBytes: limits.maxPdfBytes,
          maxPages: limits.maxPdfPages,
          maxHtmlBytes: limits.maxRenderedHtmlBytes,
        },
      });
      let rendering: Job;
      try {
        job = await jobs.create({
          id: jobId,
          account_id: principal.accountId,
          template_id: templateId,
          object_key: objectKey,
        });
        rendering = await jobs.markRendering(job);
        job = rendering;
      } catch (e) {
        await rendered; // never rejects; the fault is answered once Chromium is done
        throw e;
      }
      const result = await rendered;
      if (result.ok) {
        // The download link is signed (no I/O) while the outcome is written.
        const [completed, , link] = await Promise.all([
          jobs.complete(rendering, result),
          usage.recordRender(principal.accountId, month, result.fileSizeBytes, result.renderDurationMs),
          storage.downloadUrl(objectKey, `${jobId}.pdf`),
        ]);
        return jobResponse(completed, hasFile(completed, limits.pdfRetentionDays) ? link : null);
      }
      const error = { code: result.code, message: result.message };
      await Promise.all([jobs.fail(rendering, error), usage.releaseRender(principal.accountId, month)]);
      job = undefined;
      const templating = result.code === 'INVALID_HTML_TEMPLATE' || result.code === 'HTML_CONTENT_TOO_LARGE';
      throw new ServiceError(result.code, result.message, {
        jobId,
        ...(templating ? { details: [templateDetail(field, result.message, result.details)] } : {}),
      });
    } catch (e) {
      if (e instanceof ServiceError && e.jobId) throw e;
      // A fault of ours after the quota was held: give it back, and leave no job half-done.
      await usage
        .releaseRender(principal.accountId, month)
        .catch((f) => deps.onFault?.('quota release failed', f));
      if (job) {
        await jobs
          .fail(job, {
            code: 'INTERNAL_ERROR',
            message: 'The render was interrupted by a fault of the service.',
          })
          .catch((f) => deps.onFault?.('marking the job failed failed', f));
      }
      throw e;
    }
  };

  const replay = async (principal: Principal, answer: StoredAnswer): Promise<JobResponse> => {
    if (answer.error) {
      const { code, message, details } = answer.error;
      throw new ServiceError(code as ServiceError['code'], message, {
        ...(answer.job_id ? { jobId: answer.job_id } : {}),
        ...(Array.isArray(details) ? { details } : {}),
      });
    }
    const job = answer.job_id ? await jobs.get(principal.accountId, answer.job_id) : undefined;
    if (!job) throw new Error(`idempotent replay: job ${answer.job_id} is missing`);
    return present(job);
  };

  return {
    /** Count this render request against the caller's per-minute rate limit. */
    async hitRateLimit(principal: Principal): Promise<RateLimitState> {
      return usage.hitRateLimit(principal.accountId, await planOf(principal));
    },

    /** Render a PDF; answers the completed job, or throws the failure (with `jobId` when a job exists). */
    async create(principal: Principal, body: CreatePdfBody, idempotencyKey?: string): Promise<JobResponse> {
      const options = renderOptionsFrom(body, limits.renderBudgetMs);
      const plan = await planOf(principal);
      if (idempotencyKey === undefined) return renderNew(principal, plan, body, options);

      const claim = await idempotency.claim(principal.accountId, idempotencyKey, bodyHash(body));
      if (claim.kind === 'replay') return replay(principal, claim.answer);
      try {
        const job = await renderNew(principal, plan, body, options);
        await idempotency.finish(principal.accountId, idempotencyKey, {
          status: 201,
          job_id: job.id,
          error: null,
        });
        return job;
      } catch (e) {
        if (e instanceof ServiceError) {
          const error = { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) };
          await idempotency.finish(principal.accountId, idempotencyKey, {
            status: e.status,
            job_id: e.jobId ?? null,
            error,
          });
        } else {
          await idempotency
            .release(principal.accountId, idempotencyKey)
            .catch((f) => deps.onFault?.('idempotency release failed', f));
        }
        throw e;
      }
    },

    async get(principal: Principal, jobId: string): Promise<JobResponse> {
      if (!JOB_ID.test(jobId)) throw jobNotFound(jobId);
      const job = await jobs.get(principal.accountId, jobId);
      if (!job) throw jobNotFound(jobId);
      return present(job);
    },

    async list(principal: Principal, limit: number, offset: number): Promise<JobResponse[]> {
      const page = await jobs.list(principal.accountId, limit, offset);
      return Promise.all(page.map(present));
    },
  };
};

export type PdfJobs = ReturnType<typeof createPdfJobs>;
