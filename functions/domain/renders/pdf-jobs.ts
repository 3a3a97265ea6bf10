/**
 * The PDF job use cases: render (POST /v1/pdf), get one, list. Each route is one call here.
 *
 * Order of checks for a render (contract precedence, after credentials, body parsing and the
 * rate limit): validation → idempotency → template lookup → template parsing → job → quota and
 * concurrency → render. A render is two steps that an asynchronous worker can also run apart:
 * `accept` (template, a pending job, then its unit) and `execute` (render, store, complete; or
 * fail and give the quota unit back).
 *
 * Every job ends, and no unit is held without a job the sweeper can find: the job's writes (open,
 * lease, complete, fail, settle) are the job lifecycle's (job-lifecycle.ts), which the async
 * submit, the render queue's consumer, batches and the sweeper use too. Every answer after the
 * job was written names it (`job_id`).
 *
 * The render's round trips, and what a crash between any two of them leaves: render-order.ts.
 *
 * Templates are only parsed here (syntax, variables the template cannot do without): executing
 * one is running a stranger's code, and this function holds the table, the presigner and the
 * API-key secret. The renderer executes it (functions/renderer/templating-pool.ts); what only
 * execution reveals (an undefined attribute, a runtime error, the time or output limit) fails
 * the job there, like any render failure.
 */
import type { Plan } from '../../settings.js';
import { monthOf } from '../common/clock.js';
import { ServiceError } from '../common/errors.js';
import { newJobId } from '../common/ids.js';
import type { Page } from '../common/pagination.js';
import type { Clock, RenderResult, WebhookEndpoints } from '../common/ports.js';
import type { Principal } from '../common/principal.js';
import { checkDestination, type DestinationLookup } from '../destinations/destinations.js';
import type { JobLifecycle } from '../jobs/job-lifecycle.js';
import type { JobPresenter } from '../jobs/job-view.js';
import {
  type Job,
  type JobMode,
  type JobStore,
  type JobView,
  pdfObjectKey,
  printsPageNumbers,
} from '../jobs/jobs.js';
import { type EInvoiceChecker, validateEInvoice } from './e-invoice.js';
import { createEarlyReads } from './early-reads.js';
import type { IdempotencyStore, StoredAnswer } from './idempotency.js';
import { type KeptOrders, keepOrder } from './kept-orders.js';
import type { RenderCall } from './render-call.js';
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

import { planAllowance, type RateLimitState, type UsageStore } from '../accounts/usage.js';
import { checkSigningKey, type SigningKeyResolver } from '../signing/signing-keys.js';
import {
  checkVariables,
  type ResolvedTemplate,
  type TemplateResolver,
} from '../templates/render-template.js';
import type { TemplateStore } from '../templates/templates.js';
import { renderOptionsFrom, SYNC_MAX_TIMEOUT_MS } from './render-options.js';

export interface PdfJobLimits {
  readonly renderBudgetMs: number;
  /** An async render's budget (clamps page_load.timeout_ms). */
  readonly asyncRenderBudgetMs: number;
}

export interface PdfJobDeps {
  readonly jobs: Pick<JobStore, 'get' | 'list'>;
  readonly usage: UsageStore;
  /** A saved template's read, begun beside the rate limit's write (early-reads.ts). */
  readonly templates: TemplateStore;
  readonly idempotency: IdempotencyStore;
  /** Every write to a job: open, lease, complete, fail, settle. */
  readonly lifecycle: JobLifecycle;
  /** The renderer, with the upload link and the limits. */
  readonly render: RenderCall;
  readonly present: JobPresenter;
  /** A render's template looked up and parsed (through the parser port, bounded in time). */
  readonly resolver: TemplateResolver;
  readonly clock: Clock;
  readonly plans: Readonly<Record<string, Plan>>;
  /** The plan of accounts whose plan the deployment no longer has. */
  readonly defaultPlan: string;
  readonly limits: PdfJobLimits;
  /** Told about faults that are answered as a failed job rather than thrown. */
  readonly onFault: (message: string, error: unknown) => void;
  /** Absent: a render's webhook_id is not checked against the account's endpoints. */
  readonly webhooks?: WebhookEndpoints;
  /** A render's destination_id, checked to be the caller's at acceptance. Absent: one is refused (404). */
  readonly destinations?: DestinationLookup;
  /** Builds and validates a render's e-invoice at acceptance. Absent: a render with e_invoice is refused. */
  readonly eInvoices?: EInvoiceChecker;
  /** A signature's key, checked to be the caller's at acceptance. Absent: a signed render is refused. */
  readonly signingKeys?: Pick<SigningKeyResolver, 'check'>;
  /** Where the order of a render that prints page numbers is kept for merges (kept-orders.ts). Absent: none kept. */
  readonly keptOrders?: Pick<KeptOrders, 'keep' | 'discardKept'>;
}

const JOB_ID = /^job_[0-9A-HJKMNP-TV-Z]{26}$/;

const jobNotFound = (jobId: string) =>
  new ServiceError('PDF_JOB_NOT_FOUND', `PDF job ${jobId} was not found`);

export const createPdfJobs = (deps: PdfJobDeps) => {
  const {
    jobs,
    usage,
    templates,
    idempotency: idempotency_,
    lifecycle,
    present,
    resolver,
    limits,
    clock,
  } = deps;

  const planOf = (principal: Principal): Plan => planAllowance(deps.plans, principal.plan, deps.defaultPlan);

  /** A sync render's budget, or an async one's (no request waits for it). */
  const budgetOf = (mode: JobMode) => (mode === 'async' ? limits.asyncRenderBudgetMs : limits.renderBudgetMs);
  /** The most page_load.timeout_ms may ask for: the sync cap, or the whole async budget. */
  const maxTimeoutOf = (mode: JobMode) =>
    mode === 'async' ? limits.asyncRenderBudgetMs : SYNC_MAX_TIMEOUT_MS;

  const earlyReads = createEarlyReads({ usage, templates, webhooks: deps.webhooks, clock });

  /** A render's e-invoice, built and validated; undefined when it has none. */
  const checkedEInvoice = async (options: AcceptedRender['options'], variables: RenderOrder['variables']) => {
    if (!options.e_invoice) return undefined;
    if (!deps.eInvoices) {
      throw new ServiceError('INVALID_PDF_OPTIONS', 'e_invoice is not available in this deployment', {
        details: [{ field: 'e_invoice', issue: 'is not available in this deployment' }],
      });
    }
    return validateEInvoice(deps.eInvoices, options.e_invoice, () => variables.text);
  };

  /** Options checked and defaulted: the part of validation that the body schema cannot do. */
  const prepare = ({ source, variables, options, mode }: RenderCommand): RenderOrder => ({
    source,
    variables,
    options: renderOptionsFrom(options, budgetOf(mode), maxTimeoutOf(mode)),
    requested: options,
  });

  /** What acceptance checks before anything is held: the variables, an e-invoice, a signing key. */
  const checked = async (principal: Principal, order: RenderOrder, template: ResolvedTemplate) => {
    checkVariables(template, order);
    // Before anything is held: a failing invoice costs nothing (422 INVALID_E_INVOICE).
    const eInvoice = await checkedEInvoice(template.options, order.variables);
    const options = eInvoice ? { ...template.options, e_invoice: eInvoice.option } : template.options;
    // Before anything is held: another account's key or an unknown one costs nothing (422).
    if (options.signature)
      await checkSigningKey(deps.signingKeys, principal.accountId, options.signature.keyId);
    return { template, eInvoice, options };
  };

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
    // Before anything is held: another account's destination or an unknown one costs nothing (404).
    await checkDestination(deps.destinations, principal.accountId, placement.destinationId);
    const { template, eInvoice, options } = await checked(
      principal,
      order,
      resolved ?? (await resolver.resolve(principal, order, placement.mode, early?.template)),
    );

    const month = monthOf(clock.now());
    // One read refuses a flood before any write; the reservation in `open` stays the one that decides.
    const seen = early?.month === month ? await early.units : undefined;
    await usage.checkReservable(
      principal.accountId,
      planOf(principal),
      month,
      seen,
      placement.mode !== 'async',
    );
    const jobId = newJobId();
    const job = await lifecycle.open(
      {
        id: jobId,
        account_id: principal.accountId,
        template_id: template.templateId,
        template_version: template.version,
        object_key: pdfObjectKey(principal.accountId, jobId),
        mode: placement.mode,
        webhook_id: placement.webhookId,
        batch_id: placement.batchId,
        ...(placement.destinationId ? { destination_id: placement.destinationId } : {}),
        ...(placement.fileName ? { file_name: placement.fileName } : {}),
        ...(eInvoice ? { e_invoice: eInvoice.record } : {}),
        ...(printsPageNumbers({ ...template, options }) ? { prints_page_numbers: true as const } : {}),
      },
      planOf(principal),
      month,
    );
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
      options,
      offline: template.offline,
    };
  };

  /** The renderer, while the job moves to rendering beside it. */
  const render = async (accepted: AcceptedRender): Promise<{ rendering: Job; result: RenderResult }> => {
    const rendered = deps.render(accepted);
    let rendering: Job;
    try {
      rendering = await lifecycle.markRendering(accepted.job);
    } catch (e) {
      await rendered; // the fault is answered once Chromium is done
      throw e;
    }
    return { rendering, result: await rendered };
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
    const renewal = lifecycle.renewing(accepted.job, renewAlso);
    // Beside the render (Chromium takes far longer than the PUT): no round trip added to the answer.
    const keeping = keepOrder(deps.keptOrders, accepted, deps.onFault);
    const discard = async () => {
      if (await keeping)
        await deps.keptOrders
          ?.discardKept(accepted.job.account_id, accepted.job.id)
          .catch((e) =>
            deps.onFault("deleting a failed render's kept order failed (it expires with the PDFs)", e),
          );
    };
    try {
      let rendered: { rendering: Job; result: RenderResult };
      try {
        rendered = await render(accepted);
      } catch (e) {
        await discard();
        return await present(await lifecycle.settle(accepted, renewal, e));
      }
      const { rendering, result } = rendered;
      if (!result.ok) {
        const [failure] = await Promise.all([lifecycle.failRender(accepted, rendering, result), discard()]);
        throw failure;
      }
      await keeping;
      let completed: Job;
      try {
        completed = await lifecycle.complete(accepted, rendering, result, onCompleted);
      } catch (e) {
        return await present(await lifecycle.settle(accepted, renewal, e));
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
    ({
      webhookId,
      fileName,
      destinationId,
    }: Pick<RenderCommand, 'webhookId' | 'fileName' | 'destinationId'>): RenderRun =>
    async (principal, order, renewAlso, onCompleted) =>
      execute(
        await accept(principal, order, { ...SYNC, webhookId, fileName, destinationId }),
        renewAlso,
        onCompleted,
      );

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
    /**
     * Acceptance's checks alone (template lookup and parsing, variables, e-invoice, signing key),
     * nothing held: an async merge's render parts are checked so before its 202 (merges.ts).
     */
    async check(principal: Principal, order: RenderOrder, mode: JobMode): Promise<void> {
      await checked(principal, order, await resolver.resolve(principal, order, mode));
    },
    execute,
    prepare,
    present,

    /**
     * Counts this render request against the caller's per-minute rate limit, unless it will replay
     * a finished idempotent request (which renders nothing): that one only reads the window. An
     * invalid request (422) never comes here: the HTTP stack counts it as refused (issue 40), apart
     * from the render window, so typing mistakes cost no render allowance. The answer found here is the
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
      run: RenderRun = renderOnce(command),
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

    /**
     * DELETE /v1/pdf/{job_id}: a pending async job is cancelled (its unit given back, job.cancelled
     * told); one cancelled already answers as it is (a cancel sent twice is one). A job rendering
     * finishes (409 JOB_NOT_CANCELLABLE: the render is not stopped, so what was rendered is
     * what is charged), as does an ended one and a sync render (which ends with its request).
     */
    async cancel(principal: Principal, jobId: string): Promise<JobView> {
      if (!JOB_ID.test(jobId)) throw jobNotFound(jobId);
      const job = await jobs.get(principal.accountId, jobId, true);
      if (!job) throw jobNotFound(jobId);
      const refuse = (status: string, why: string) =>
        new ServiceError('JOB_NOT_CANCELLABLE', `PDF job ${jobId} is ${status}: ${why}`, { jobId });
      if (job.status === 'cancelled') return present(job);
      if (job.mode !== 'async')
        throw refuse(job.status, 'only a pending async render or merge can be cancelled');
      // Still being accepted (its unit not yet held): the 202 that names it has not been sent.
      if (job.status === 'pending' && job.unit === 'reserving' && !job.batch_id)
        throw refuse('being accepted', 'retry in a moment');
      if (job.status !== 'pending')
        throw refuse(
          job.status,
          job.status === 'rendering'
            ? 'a render that began runs to its end (completed or failed)'
            : 'it ended already',
        );
      const out = await lifecycle.cancel(job);
      if (out.job?.status === 'cancelled') return present(out.job);
      // Claimed by the consumer first: it renders.
      throw refuse(out.job?.status ?? 'gone', 'a render that began runs to its end (completed or failed)');
    },

    async list(principal: Principal, page: Page): Promise<JobView[]> {
      return Promise.all((await jobs.list(principal.accountId, page)).map(present));
    },
  };
};

export type PdfJobs = ReturnType<typeof createPdfJobs>;
