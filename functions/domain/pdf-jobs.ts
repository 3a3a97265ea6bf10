/**
 * The PDF job use cases: render (POST /v1/pdf), get one, list. Each route is one call here.
 *
 * Order of checks for a render (contract precedence, after credentials, body parsing and the
 * rate limit): validation → idempotency → template lookup → template parsing → job → quota and
 * concurrency → render. A render is two steps that an asynchronous worker can also run apart:
 * `accept` (template, a pending job, then its unit) and `execute` (render, store, complete; or
 * fail and give the quota unit back).
 *
 * Every job ends, and no unit is held without a job the sweeper can find (sweeper.ts): the job is
 * written (leased, unit `reserving`) before its unit is reserved, its request renews the lease
 * while it works, and a step that fails leaves the job in the sweeper's index rather than being
 * only logged. Every answer after the job was written names it (`job_id`).
 *
 * The render's round trips, and what a crash between any two of them leaves: render-order.ts.
 *
 * Templates are only parsed here (syntax, variables the template cannot do without): executing
 * one is running a stranger's code, and this function holds the table, the presigner and the
 * API-key secret. The renderer executes it (functions/renderer/templating-pool.ts); what only
 * execution reveals (an undefined attribute, a runtime error, the time or output limit) fails
 * the job there, like any render failure.
 */
import { INTEGER_SETTINGS, MAX_HEADER_FOOTER_BYTES, type Plan } from '../settings.js';
import { monthOf } from './clock.js';
import { createEarlyReads } from './early-reads.js';
import { isOverload, overloaded, ServiceError } from './errors.js';
import type { IdempotencyStore, StoredAnswer } from './idempotency.js';
import { newJobId } from './ids.js';
import { createJobPresenter } from './job-view.js';
import {
  INTERRUPTED,
  type Job,
  type JobError,
  type JobMode,
  type JobStore,
  type JobView,
  pdfObjectKey,
} from './jobs.js';
import type { Page } from './pagination.js';
import {
  type Clock,
  type Diagnostics,
  type JobEvents,
  NO_JOB_EVENTS,
  type PdfStorage,
  type Renderer,
  type RenderResult,
  type WebhookEndpoints,
} from './ports.js';
import type { Principal } from './principal.js';
import type { RenderCommand } from './render-command.js';
import {
  type AcceptedRender,
  type Placement,
  type Rendered,
  type RenderOrder,
  type RenderRun,
  SYNC,
} from './render-order.js';

export type { AcceptedRender, Placement, Rendered, RenderOrder, RenderRun } from './render-order.js';

import { renderOptionsFrom } from './render-options.js';
import { checkVariables, createTemplateResolver, type ResolvedTemplate } from './render-template.js';
import { named, PART_FIELD, templateDetail } from './template-check.js';
import type { TemplateStore } from './templates.js';
import { planAllowance, type RateLimitState, type UsageStore } from './usage.js';

export interface PdfJobLimits {
  readonly renderBudgetMs: number;
  /** An async render's budget (clamps page_load.timeout_ms). @default the setting's default */
  readonly asyncRenderBudgetMs?: number;
  /** A pending or rendering job's lease; renewed every third of it. @default the setting's default (30 s) */
  readonly jobLeaseSeconds?: number;
  readonly maxRenderedHtmlBytes: number;
  readonly maxPdfBytes: number;
  readonly maxPdfPages: number;
  readonly pdfRetentionDays: number;
}

export interface PdfJobDeps {
  readonly jobs: JobStore;
  readonly usage: UsageStore;
  readonly templates: TemplateStore;
  readonly idempotency: IdempotencyStore;
  readonly storage: PdfStorage;
  readonly renderer: Renderer;
  readonly clock: Clock;
  readonly plans: Readonly<Record<string, Plan>>;
  /** The plan of accounts whose plan the deployment no longer has. */
  readonly defaultPlan: string;
  readonly limits: PdfJobLimits;
  /** Told about faults that are answered as a failed job rather than thrown. */
  readonly onFault: (message: string, error: unknown) => void;
  /** Told when a job that names a webhook endpoint or a batch ends. @default NO_JOB_EVENTS */
  readonly events?: JobEvents;
  /** Absent: a render's webhook_id is not checked against the account's endpoints. */
  readonly webhooks?: WebhookEndpoints;
}

const JOB_ID = /^job_[0-9A-HJKMNP-TV-Z]{26}$/;

const jobNotFound = (jobId: string) =>
  new ServiceError('PDF_JOB_NOT_FOUND', `PDF job ${jobId} was not found`);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const isConditionFailure = (e: unknown) =>
  (e as Error | undefined)?.name === 'ConditionalCheckFailedException';

/** Tries `step` a few times (a counter write that a brief fault refused); false if it never went through. */
const retried = async (step: () => Promise<unknown>, onFault: (error: unknown) => void): Promise<boolean> => {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await step();
      return true;
    } catch (e) {
      onFault(e);
      await sleep(100 * 2 ** attempt);
    }
  }
  return false;
};

/** The holder renews a job's lease (and its idempotency claim) every third of the lease while it works. */
interface Renewal {
  /** The job left this request (the sweeper took it over): it must not claim it any more. */
  readonly lost: () => boolean;
  readonly stop: () => void;
}

const FAULT: JobError = {
  code: 'INTERNAL_ERROR',
  message: 'The render was interrupted by a fault of the service; the render unit was given back.',
};

const RENDERER_UNREACHABLE: RenderResult = {
  ok: false,
  code: 'PDF_RENDERING_FAILED',
  message: 'The renderer failed before producing a PDF.',
};

export const createPdfJobs = (deps: PdfJobDeps) => {
  const { jobs, usage, templates, idempotency: idempotency_, storage, renderer, limits, clock } = deps;

  const planOf = (principal: Principal): Plan => planAllowance(deps.plans, principal.plan, deps.defaultPlan);

  const present = createJobPresenter({ storage, clock, pdfRetentionDays: limits.pdfRetentionDays });

  /** A sync render's budget, or an async one's (no request waits for it). */
  const budgetOf = (mode: JobMode) =>
    mode === 'async'
      ? (limits.asyncRenderBudgetMs ?? INTEGER_SETTINGS.asyncRenderBudgetMs.default)
      : limits.renderBudgetMs;
  const resolver = createTemplateResolver(templates, budgetOf);

  const earlyReads = createEarlyReads({ usage, templates, webhooks: deps.webhooks, clock });

  /** Options checked and defaulted: the part of validation that the body schema cannot do. */
  const prepare = ({ source, variables, options, mode }: RenderCommand): RenderOrder => ({
    source,
    variables,
    options: renderOptionsFrom(options, budgetOf(mode)),
    requested: options,
  });

  /**
   * Step 1: template lookup and parsing, quota, job (run as `placement` says: sync by default).
   * Throws 404/422/429 with nothing held.
   */
  const accept = async (
    principal: Principal,
    order: RenderOrder,
    placement: Placement = SYNC,
    /** Resolved already (a batch's template, once for all its items): only the variables are checked. */
    resolved?: ResolvedTemplate,
  ): Promise<AcceptedRender> => {
    const { webhookId } = placement;
    // Usually begun beside the rate limit's write (countRequest): no round trip here.
    const early = earlyReads.take(principal, order.source);
    if (
      webhookId !== null &&
      deps.webhooks &&
      !(await (early?.webhook?.id === webhookId
        ? early.webhook.exists
        : deps.webhooks.exists(principal.accountId, webhookId)))
    ) {
      throw new ServiceError('WEBHOOK_ENDPOINT_NOT_FOUND', `Webhook endpoint ${webhookId} was not found`);
    }
    const template = resolved ?? (await resolver.resolve(principal, order, placement.mode, early?.template));
    checkVariables(template, order);

    // The job first, then its unit: a unit is never held without a job the sweeper can find.
    const month = monthOf(clock.now());
    // One read refuses a flood before any write; the reservation below stays the one that decides.
    const seen = early?.month === month ? await early.units : undefined;
    await usage.checkReservable(principal.accountId, planOf(principal), month, seen);
    const jobId = newJobId();
    const job = await jobs.create(
      {
        id: jobId,
        account_id: principal.accountId,
        template_id: template.templateId,
        template_version: template.version,
        object_key: pdfObjectKey(principal.accountId, jobId),
        mode: placement.mode,
        webhook_id: placement.webhookId,
        batch_id: placement.batchId,
      },
      { month, leaseUntil: leaseUntil() },
    );
    try {
      await usage.reserveRender(principal.accountId, planOf(principal), month, job.id);
    } catch (e) {
      if (e instanceof ServiceError) {
        // Refused: nothing is held. A job left behind (the delete failed) is swept as unsure.
        await jobs.discard(job).catch((f) => deps.onFault('discarding a refused job failed', f));
        throw e;
      }
      // Unknown whether the unit is held: the job's lease runs out and the sweeper settles it.
      throw unsettled(job, e);
    }
    return {
      job,
      month,
      field: template.field,
      // Text: neither a Lambda payload nor a worker's message can carry the data's key order and numbers as objects.
      template: {
        source: template.html,
        variables: order.variables.text,
        header: template.header,
        footer: template.footer,
      },
      options: template.options,
      offline: template.offline,
    };
  };

  const leaseSeconds = limits.jobLeaseSeconds ?? INTEGER_SETTINGS.jobLeaseSeconds.default;
  const leaseMs = leaseSeconds * 1000;
  const leaseUntil = () => clock.now().getTime() + leaseMs;

  /** A fault whose clean-up is left to the sweeper: the answer names the job and says when it ends. */
  const unsettled = (job: Job, cause: unknown) =>
    isOverload(cause)
      ? overloaded(cause, job.id)
      : new ServiceError(
          'INTERNAL_ERROR',
          `The render was interrupted by a fault of the service; job ${job.id} will be failed and its render unit given back within ${2 * leaseSeconds} s.`,
          { jobId: job.id, cause },
        );

  const renewing = (job: Job, also?: () => Promise<unknown>): Renewal => {
    let lost = false;
    const timer = setInterval(() => {
      jobs.renew(job, leaseUntil()).then(
        (held) => {
          if (!held) {
            lost = true;
            clearInterval(timer);
          }
        },
        (e) => deps.onFault('renewing the job lease failed', e),
      );
      also?.().catch((e) => deps.onFault('renewing the idempotency claim failed', e));
    }, leaseMs / 3);
    timer.unref?.();
    return { lost: () => lost, stop: () => clearInterval(timer) };
  };

  /**
   * The job fails and its unit comes back (in that order: a sweep between the two sees a unit
   * still `refunding` and waits). A step that does not go through leaves the job in the sweeper's
   * index, which settles it; never only logged. Answers the job as it ended up, when known.
   */
  const failJob = async (
    job: Job,
    month: string,
    error: JobError,
    diagnostics: Diagnostics | null = null,
  ): Promise<Job | undefined> => {
    let failed: Job;
    try {
      failed = await jobs.fail(job, error, diagnostics, leaseUntil());
    } catch (e) {
      if (!isConditionFailure(e)) {
        deps.onFault('marking the job failed failed', e);
        return undefined;
      }
      // No longer open: completed after all (a write that timed out had landed), or swept.
      return jobs.get(job.account_id, job.id, true).catch(() => undefined);
    }
    const refunded = await retried(
      () => usage.releaseRender(job.account_id, month, job.id),
      (f) => deps.onFault('quota release failed', f),
    );
    if (refunded) await jobs.settled(job).catch((f) => deps.onFault('settling the job failed', f));
    await ended(failed);
    return failed;
  };

  /** Tells JobEvents of an ended job that names a webhook endpoint or a batch; never fails the render. */
  const ended = async (job: Job): Promise<void> => {
    if (!job.webhook_id && !job.batch_id) return;
    const events = deps.events ?? NO_JOB_EVENTS;
    await retried(
      () => events.ended(job),
      (f) => deps.onFault('publishing the job event failed', f),
    );
  };

  /** A fault of ours after the render was accepted: the job fails and its unit goes back, or the sweeper sees to it. */
  const abandon = async ({ job, month }: AcceptedRender, cause: unknown): Promise<ServiceError | Job> => {
    // A store that timed out under load is back-pressure (503, retry soon), not a fault of ours.
    const busy = isOverload(cause) ? overloaded(cause, job.id) : undefined;
    const ended = await failJob(job, month, busy ? { code: busy.code, message: busy.message } : FAULT);
    if (!ended) return unsettled(job, cause);
    if (ended.status === 'completed') return ended;
    if (ended.error?.code === INTERRUPTED.code) return interrupted(job, cause);
    return busy ?? new ServiceError('INTERNAL_ERROR', FAULT.message, { jobId: job.id, cause });
  };

  const interrupted = (job: Job, cause?: unknown) =>
    new ServiceError('PDF_RENDERING_INTERRUPTED', INTERRUPTED.message, {
      jobId: job.id,
      retryAfterSeconds: 1,
      ...(cause === undefined ? {} : { cause }),
    });

  /** The renderer's answer for an accepted render; a renderer fault is a failed render. */
  const callRenderer = async (accepted: AcceptedRender): Promise<RenderResult> => {
    const upload = await storage.uploadTarget(accepted.job.object_key);
    return renderer
      .render({
        jobId: accepted.job.id,
        template: accepted.template,
        ...accepted.options,
        ...(accepted.offline ? { offline: true } : {}),
        upload,
        limits: {
          maxPdfBytes: limits.maxPdfBytes,
          maxPages: limits.maxPdfPages,
          maxHtmlBytes: limits.maxRenderedHtmlBytes,
          maxHeaderFooterBytes: MAX_HEADER_FOOTER_BYTES,
        },
      })
      .catch((e: unknown) => {
        deps.onFault('renderer call failed', e);
        return RENDERER_UNREACHABLE;
      });
  };

  /** The renderer, while the job moves to rendering beside it. */
  const render = async (accepted: AcceptedRender): Promise<{ rendering: Job; result: RenderResult }> => {
    const rendered = callRenderer(accepted);
    let rendering: Job;
    try {
      rendering = await jobs.markRendering(accepted.job, leaseUntil());
    } catch (e) {
      await rendered; // the fault is answered once Chromium is done
      throw e;
    }
    return { rendering, result: await rendered };
  };

  /**
   * The job completes, then the month's totals count it (it no longer runs), its events are told
   * and `alongside` (a sync request's idempotency answer) is written, side by side: none waits for
   * another (a batch's count is one more write).
   */
  const complete = async (
    { job, month }: AcceptedRender,
    rendering: Job,
    result: Extract<RenderResult, { ok: true }>,
    alongside?: (completed: Job) => Promise<unknown>,
  ): Promise<Job> => {
    const completed = await jobs.complete(rendering, result);
    await Promise.all([
      recordCompleted(job, month, result.fileSizeBytes, result.renderDurationMs),
      ended(completed),
      alongside?.(completed),
    ]);
    return completed;
  };

  const recordCompleted = async (job: Job, month: string, bytes: number, ms: number) => {
    // The unit is used either way; only the totals and the running count would be off.
    await retried(
      () => usage.recordRender(job.account_id, month, bytes, ms, job.id),
      (f) => deps.onFault('recording a completed render failed', f),
    );
  };

  /** The failure is the job's: it fails, and its unit goes back (in that order, so a fault cannot give it back twice). */
  const fail = async (
    accepted: AcceptedRender,
    rendering: Job,
    result: Extract<RenderResult, { ok: false }>,
  ): Promise<ServiceError> => {
    const { job, month, field } = accepted;
    const templating = result.code === 'INVALID_HTML_TEMPLATE' || result.code === 'HTML_CONTENT_TOO_LARGE';
    const part = result.details?.part;
    const where = part ? PART_FIELD[part] : field;
    const message = templating ? named(where, result.message) : result.message;
    const ended = await failJob(rendering, month, { code: result.code, message }, result.diagnostics ?? null);
    if (!ended) return unsettled(job, new Error(`failing job ${job.id} (${result.code}) did not go through`));
    if (ended.status !== 'failed' || ended.error?.code !== result.code) return interrupted(job);
    return new ServiceError(result.code, message, {
      jobId: job.id,
      ...(templating ? { details: [templateDetail(where, result.message, result.details)] } : {}),
      ...(result.diagnostics ? { diagnostics: result.diagnostics } : {}),
      ...(result.retryAfterSeconds !== undefined ? { retryAfterSeconds: result.retryAfterSeconds } : {}),
    });
  };

  /** The job's outcome when this request no longer holds it, or a fault of ours ended it. */
  const settle = async (accepted: AcceptedRender, renewal: Renewal, cause: unknown): Promise<JobView> => {
    if (renewal.lost()) throw interrupted(accepted.job, cause);
    const outcome = await abandon(accepted, cause);
    if (outcome instanceof ServiceError) throw outcome;
    await recordCompleted(
      accepted.job,
      accepted.month,
      outcome.file_size_bytes ?? 0,
      outcome.render_duration_ms ?? 0,
    );
    return present(outcome);
  };

  /**
   * Step 2: render, store, and complete, or fail and give the unit back. The lease is renewed
   * meanwhile (and `renewAlso`, the idempotency claim, with it); `onCompleted` runs beside the
   * completed job's usage record (RenderRun).
   */
  const execute = async (
    accepted: AcceptedRender,
    renewAlso?: () => Promise<unknown>,
    onCompleted?: (completed: Job) => Promise<unknown>,
  ): Promise<JobView> => {
    const renewal = renewing(accepted.job, renewAlso);
    try {
      let rendered: { rendering: Job; result: RenderResult };
      try {
        rendered = await render(accepted);
      } catch (e) {
        return await settle(accepted, renewal, e);
      }
      const { rendering, result } = rendered;
      if (!result.ok) throw await fail(accepted, rendering, result);
      let completed: Job;
      try {
        completed = await complete(accepted, rendering, result, onCompleted);
      } catch (e) {
        return await settle(accepted, renewal, e);
      }
      return await present(completed);
    } finally {
      renewal.stop();
    }
  };

  /** The first request's answer again: the job with a fresh link, or its error; marked as a replay. */
  const replay = async (principal: Principal, answer: StoredAnswer): Promise<Rendered> => {
    if (answer.error) {
      const { code, message, details, diagnostics } = answer.error;
      throw new ServiceError(code as ServiceError['code'], message, {
        ...(answer.job_id ? { jobId: answer.job_id } : {}),
        ...(Array.isArray(details) ? { details } : {}),
        ...(diagnostics ? { diagnostics } : {}),
        replayed: true,
      });
    }
    const job = answer.job_id ? await jobs.get(principal.accountId, answer.job_id) : undefined;
    if (!job) throw new Error(`idempotent replay: job ${answer.job_id} is missing`);
    return { job: await present(job), replayed: true };
  };

  /** Finished answers the rate limit's count found, by the request's command (gone with it). */
  const finished = new WeakMap<RenderCommand, StoredAnswer>();

  const renderOnce =
    (webhookId: string | null): RenderRun =>
    async (principal, order, renewAlso, onCompleted) =>
      execute(await accept(principal, order, { ...SYNC, webhookId }), renewAlso, onCompleted);

  /**
   * Our faults: the claim is given up (the job failed, its unit back) so that a retry renders. A
   * busy renderer is not this request's answer for good either: the key is free for the retry.
   */
  const retryable = (e: unknown) =>
    !(e instanceof ServiceError) ||
    e.code === 'INTERNAL_ERROR' ||
    e.code === 'PDF_RENDERING_INTERRUPTED' ||
    e.code === 'SERVICE_BUSY';

  return {
    accept,
    execute,
    prepare,
    /** A render's template resolved once (a batch's, for all its items: accept then only checks variables). */
    resolveTemplate: resolver.resolve,
    present,

    /** The steps an async render's consumer runs apart (render-worker.ts), the same as `execute`'s. */
    steps: { leaseUntil, renewing, callRenderer, complete, fail, failJob, ended },

    /**
     * Counts this render request against the caller's per-minute rate limit, unless it will replay
     * a finished idempotent request (which renders nothing): that one only reads the window. An
     * invalid request (no command: it will answer 422) is counted. The answer found here is the
     * one `create` replays: the idempotency record is read once.
     */
    async countRequest(principal: Principal, command: RenderCommand | undefined): Promise<RateLimitState> {
      const plan = planOf(principal);
      // Independent of the count and of the idempotency read: side by side with them. Reads only,
      // so a request the rate limit refuses, or a replay, has written nothing.
      if (command) earlyReads.begin(principal, command);
      const claim = command?.idempotency;
      const answer = claim
        ? await idempotency_.finishedAnswer(principal.accountId, claim.key, claim.bodyHash)
        : undefined;
      if (command && answer) finished.set(command, answer);
      return answer
        ? usage.readRateLimit(principal.accountId, plan)
        : usage.hitRateLimit(principal.accountId, plan);
    },

    /**
     * Render a PDF; answers the completed job (and whether it is a replay), or throws the failure
     * (with `jobId` when a job exists).
     */
    async create(
      principal: Principal,
      command: RenderCommand,
      run: RenderRun = renderOnce(command.webhookId),
    ): Promise<Rendered> {
      const order = prepare(command);
      const { idempotency } = command;
      if (idempotency === null) return { job: await run(principal, order), replayed: false };

      const { accountId } = principal;
      const answered = finished.get(command);
      if (answered) return replay(principal, answered);
      const claim = await idempotency_.claim(accountId, idempotency.key, idempotency.bodyHash);
      if (claim.kind === 'replay') return replay(principal, claim.answer);
      try {
        // The answer is written once the job completed, beside its usage record (not after it): a
        // crash between the two leaves what a crash after both answers would (module comment).
        let answered: Promise<void> | undefined;
        const answer = (completed: Job) => {
          answered = idempotency_.finish(accountId, idempotency.key, { job_id: completed.id, error: null });
          return answered.catch(() => undefined); // thrown below, once the run is done
        };
        const job = await run(principal, order, () => idempotency_.renew(accountId, idempotency.key), answer);
        await (answered ??
          idempotency_.finish(accountId, idempotency.key, { job_id: job.job.id, error: null }));
        return { job, replayed: false };
      } catch (e) {
        if (e instanceof ServiceError && !retryable(e)) {
          const error = {
            code: e.code,
            message: e.message,
            ...(e.details ? { details: e.details } : {}),
            ...(e.diagnostics ? { diagnostics: e.diagnostics } : {}),
          };
          await idempotency_.finish(accountId, idempotency.key, { job_id: e.jobId ?? null, error });
        } else {
          await idempotency_
            .release(accountId, idempotency.key)
            .catch((f) => deps.onFault('idempotency release failed', f));
        }
        throw e;
      }
    },

    async get(principal: Principal, jobId: string): Promise<JobView> {
      if (!JOB_ID.test(jobId)) throw jobNotFound(jobId);
      const job = await jobs.get(principal.accountId, jobId);
      if (!job) throw jobNotFound(jobId);
      return present(job);
    },

    async list(principal: Principal, page: Page): Promise<JobView[]> {
      return Promise.all((await jobs.list(principal.accountId, page)).map(present));
    },
  };
};

export type PdfJobs = ReturnType<typeof createPdfJobs>;
