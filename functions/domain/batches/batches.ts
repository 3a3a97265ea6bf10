/**
 * Batches (POST /v1/batches): one template and up to 1,000 items, each with its own variables,
 * every item an async job (`batch_id` on it) rendered as any async job is (render-worker.ts).
 *
 * Acceptance decides everything before a message is sent: the template is read and parsed once,
 * each item's variables are checked against it (a missing variable answers 422 naming
 * `items[i].variables`), and the quota is reserved for the whole batch up front: one read refuses
 * a batch the month cannot cover (429 PLAN_QUOTA_EXCEEDED saying how many renders remain), then
 * the jobs are written and their units held in a few wide writes (batch-acceptance.ts; a queued
 * job is not a running render, so the plan's concurrency does not refuse it); should a concurrent
 * render take the last units meanwhile, the jobs go and the answer is the same 429. Only then is
 * the batch written and its jobs queued (batch-queue.ts: one order for the whole batch).
 *
 * All or nothing: the batch's record is its acceptance, the last write before the 202, and no
 * item can render before it (a job's message is sent only after it; the consumer holds a job as
 * it receives it). An acceptance that dies before it leaves jobs `reserving` under the acceptance
 * lease (ACCEPT_LEASE_FACTOR job leases from its start); once that ran out, the sweeper finds no
 * record, cancels the batch (a marker that refuses the record's write from then on) and fails the
 * jobs, and the month's reconciliation gives every unit back. One that dies after it has its
 * jobs queued: those whose message did not go are sent again by the sweeper at the same time.
 *
 * Item keys (`items[i].idempotency_key`, batch-acceptance.ts): an item whose key replays is an
 * earlier item's job, at its place in this batch (`replayed`), counted as it ends.
 *
 * Counts: each job that ends is counted once on the batch (a set of ended job ids, conditional),
 * by JobEvents when it ends (the consumer's, the sweeper's), or by a read of the batch that finds
 * ended jobs not yet counted (an event that did not go through). The write that counts the last
 * job moves the batch to `completed`, once (conditional), and only that one publishes
 * `batch.completed`.
 */
import { type Plan, unitCap } from '../../settings.js';
import { stringifyTemplateData, type TemplateData } from '../../templating/index.js';
import { monthPeriod, planAllowance, type UsageStore } from '../accounts/usage.js';
import { monthOf } from '../common/clock.js';
import { ServiceError } from '../common/errors.js';
import { newBatchId } from '../common/ids.js';
import type { Page } from '../common/pagination.js';
import type { Clock } from '../common/ports.js';
import type { Principal } from '../common/principal.js';
import type { DestinationLookup } from '../destinations/destinations.js';
import type { JobPresenter } from '../jobs/job-view.js';
import { isEnded, isOpen, type Job, type JobView, printsPageNumbers } from '../jobs/jobs.js';
import {
  type EInvoiceChecker,
  type EInvoiceOption,
  type JobEInvoice,
  type RequestedEInvoice,
  validateEInvoice,
} from '../renders/e-invoice.js';
import type { RenderSource } from '../renders/render-command.js';
import { type RenderOptions, type RequestedOptions, renderOptionsFrom } from '../renders/render-options.js';
import { checkSigningKey, type SigningKeyResolver } from '../signing/signing-keys.js';
import type { ResolvedTemplate, TemplateResolver } from '../templates/render-template.js';
import type { RequiredVariable } from '../templates/template-check.js';
import { acceptItems, type BatchWrites, checkItemKeys, checkNamed } from './batch-acceptance.js';
import {
  type Batch,
  type BatchEvents,
  type BatchJobStatus,
  type BatchOutput,
  type BatchStore,
  type BatchView,
  createBatchCounter,
  type EndedHow,
  endedCount,
} from './batch-counter.js';
import type { BatchOrder, BatchOrders, BatchQueue } from './batch-queue.js';

/** The most items one batch may have. */
export const MAX_BATCH_ITEMS = 1000;
/** Items with an e-invoice, at most: each is validated at acceptance (20-400 ms), within API Gateway's 29 s. */
export const MAX_E_INVOICE_BATCH_ITEMS = 50;

export * from './batch-counter.js';

/** One item of a batch: its variables and, optionally, its own PDF document information and key. */
export interface BatchItem {
  readonly variables: TemplateData;
  readonly metadata?: RequestedOptions['metadata'];
  /** Its own e-invoice (replacing the batch's or its template's). */
  readonly eInvoice?: RequestedEInvoice;
  readonly idempotencyKey?: string;
  /**
   * Its PDF's name: its download's and in the batch's ZIP (batch-outputs.ts); the item's own, or
   * the batch's `file_name` made of its variables (file-name.ts).
   */
  readonly fileName?: string;
  /** The caller's string for the item, echoed on its job, its events and the ZIP's manifest. */
  readonly reference?: string;
}

/** POST /v1/batches as the edge parsed it. */
export interface BatchCommand {
  readonly source: RenderSource;
  readonly options: RequestedOptions;
  readonly items: readonly BatchItem[];
  readonly webhookId: string | null;
  /** The account's destination every item's PDF is delivered into (`destination_id`); absent or null: none. */
  readonly destinationId?: string | null;
  /** What is built once the batch completed; absent: nothing. */
  readonly output?: BatchOutput;
}

export interface BatchDeps {
  readonly batches: BatchStore;
  readonly usage: UsageStore;
  /** The template read and parsed once for all items, as a render's is (the parser port, bounded). */
  readonly resolver: TemplateResolver;
  /** A batch's job as the API shows it. */
  readonly present: JobPresenter;
  readonly writes: BatchWrites;
  readonly orders: BatchOrders;
  readonly queue: BatchQueue;
  readonly clock: Clock;
  readonly plans: Readonly<Record<string, Plan>>;
  readonly defaultPlan: string;
  readonly limits: {
    readonly asyncRenderBudgetMs: number;
    readonly jobLeaseSeconds: number;
  };
  /** Absent: a batch's webhook_id is not checked against the account's endpoints. */
  readonly webhooks?: { exists(accountId: string, webhookId: string): Promise<boolean> };
  /** A batch's destination_id, checked to be the caller's. Absent: one is refused (404). */
  readonly destinations?: DestinationLookup;
  /** Keys item body hashes before they are kept (batch-acceptance.ts). @default unkeyed */
  readonly digest?: (hash: string) => Promise<string>;
  /** A signature's key, checked to be the caller's before anything is held. Absent: refused. */
  readonly signingKeys?: Pick<SigningKeyResolver, 'check'>;
  /** Builds and validates the items' e-invoices at acceptance. Absent: a batch with one is refused. */
  readonly eInvoices?: EInvoiceChecker;
  readonly events?: BatchEvents;
  /** Fresh links to a batch's built outputs (absent: none shown). */
  readonly outputUrls?: (batch: Batch) => Promise<NonNullable<BatchView['outputUrls']>>;
  /** Cancels a pending job (job-lifecycle.ts): POST /v1/batches/{id}/cancel. Absent: refused. */
  readonly cancelJob?: (job: Pick<Job, 'account_id' | 'id'>) => Promise<{ readonly cancelled: boolean }>;
  readonly onFault: (message: string, error: unknown) => void;
}

/** A page of a batch's jobs, and whether more follow it. */
export interface BatchJobsPage {
  readonly jobs: readonly JobView[];
  readonly hasMore: boolean;
}

/** Jobs cancelled at once by a batch's cancel (each a conditional write, a release and its events). */
const CANCEL_PARALLEL = 8;

const BATCH_ID = /^bat_[0-9A-HJKMNP-TV-Z]{26}$/;

const batchNotFound = (batchId: string) =>
  new ServiceError('BATCH_NOT_FOUND', `Batch ${batchId} was not found`);

/** A read counts an ended job on its batch once its own count is this late (it did not go through). */
const REPAIR_AFTER_MS = 30_000;

/** A batch's jobs are leased for this many job leases while the batch is accepted. */
const ACCEPT_LEASE_FACTOR = 10;

export const createBatches = (deps: BatchDeps) => {
  const { batches, usage, resolver, present: presentJob, clock, limits } = deps;
  const budgetMs = limits.asyncRenderBudgetMs;
  const leaseMs = limits.jobLeaseSeconds * 1000;
  // The API completes a batch only when a read finds its last job ended uncounted: its order is
  // left to the lifecycle rule there (the API may only put orders; the consumer deletes them).
  const { view, completeIfDone } = createBatchCounter({
    batches,
    ...(deps.events ? { events: deps.events } : {}),
    onFault: deps.onFault,
  });

  const planOf = (principal: Principal): Plan => planAllowance(deps.plans, principal.plan, deps.defaultPlan);

  /**
   * The template once: looked up, the offline rule, margins, its syntax (as a render's `accept`
   * checks them, through the same resolver): a part that does not parse answers 422 here, in the
   * parts' order (html, header, footer), before any item is checked.
   */
  const readTemplate = async (principal: Principal, command: BatchCommand): Promise<ResolvedTemplate> => {
    const template = await resolver.resolve(
      principal,
      { source: command.source, requested: command.options },
      'async',
    );
    for (const part of [template.required.html, template.required.header, template.required.footer]) {
      if (part instanceof ServiceError) throw part;
    }
    // One key for every item: the caller's, or 422 before anything is held.
    if (template.options.signature) {
      await checkSigningKey(deps.signingKeys, principal.accountId, template.options.signature.keyId);
    }
    return template;
  };

  /** An item's variables against the template's: the first item lacking one answers 422, naming it. */
  const checkItems = (template: ResolvedTemplate, items: readonly BatchItem[]): void => {
    const parts = [
      { field: template.field, required: template.required.html },
      { field: 'header_html', required: template.required.header },
      { field: 'footer_html', required: template.required.footer },
    ] as const;
    items.forEach((item, index) => {
      for (const part of parts) {
        if (part.required instanceof ServiceError) throw part.required; // thrown by readTemplate already
        let missing: RequiredVariable | undefined;
        for (const variable of part.required) {
          if (item.variables.has(variable.name)) continue;
          if (!missing || variable.line < missing.line) missing = variable;
        }
        if (!missing) continue;
        const where = `items[${index}].variables`;
        const issue = `Variable '${missing.name}' is undefined (${part.field} line ${missing.line})`;
        throw new ServiceError('INVALID_HTML_TEMPLATE', `${where}: ${issue}`, {
          details: [{ field: where, issue, line: missing.line, name: missing.name }],
        });
      }
    });
  };

  /** The options of item `item`: the batch's, with the item's own document information and e-invoice. */
  const optionsOf = (template: ResolvedTemplate, item: BatchItem): RenderOptions =>
    renderOptionsFrom(
      item.metadata || item.eInvoice
        ? {
            ...template.requested,
            ...(item.metadata ? { metadata: item.metadata } : {}),
            ...(item.eInvoice ? { e_invoice: item.eInvoice } : {}),
          }
        : template.requested,
      budgetMs,
      budgetMs,
    );

  /**
   * Every item's e-invoice (its own, else the batch's or its template's: the item's variables are
   * the invoice) built and validated, in item order, before anything is held: the first item
   * whose invoice fails answers 422 INVALID_E_INVOICE naming the item (`items[i]...`) and each
   * rule it breaks. By item index; undefined: an item without one.
   */
  const checkEInvoices = async (
    template: ResolvedTemplate,
    items: readonly BatchItem[],
  ): Promise<({ option: EInvoiceOption; record: JobEInvoice } | undefined)[]> => {
    const wanted = items.map((item) => optionsOf(template, item).e_invoice);
    const count = wanted.filter((w) => w !== undefined).length;
    if (count === 0) return [];
    const field = items.some((i) => i.eInvoice) ? 'items' : 'e_invoice';
    if (!deps.eInvoices) {
      const issue = 'is not available in this deployment';
      throw new ServiceError('INVALID_PDF_OPTIONS', `e_invoice ${issue}`, { details: [{ field, issue }] });
    }
    if (count > MAX_E_INVOICE_BATCH_ITEMS) {
      const issue = `has ${count} items with an e-invoice; a batch takes at most ${MAX_E_INVOICE_BATCH_ITEMS} (each is validated before the batch is accepted)`;
      throw new ServiceError('VALIDATION_ERROR', `items ${issue}`, { details: [{ field: 'items', issue }] });
    }
    const checker = deps.eInvoices;
    const checked: ({ option: EInvoiceOption; record: JobEInvoice } | undefined)[] = [];
    for (const [index, option] of wanted.entries()) {
      const item = items[index] as BatchItem;
      try {
        checked.push(
          option && (await validateEInvoice(checker, option, () => stringifyTemplateData(item.variables))),
        );
      } catch (e) {
        if (!(e instanceof ServiceError) || !e.details) throw e;
        const at = `items[${index}]`;
        throw new ServiceError(e.code, `${at}: ${e.message}`, {
          details: e.details.map((d) => ({ ...d, field: `${at}.${d.field}` })),
        });
      }
    }
    return checked;
  };

  const quotaExceeded = (plan: Plan, used: number, wanted: number) => {
    const now = clock.now();
    const resetAt = monthPeriod(now).end;
    const remaining = Math.max(0, unitCap(plan) - used);
    return new ServiceError(
      'PLAN_QUOTA_EXCEEDED',
      `The batch has ${wanted} items but only ${remaining} of the monthly quota of ${unitCap(plan)} renders remain; the quota resets at ${resetAt.toISOString()}`,
      { retryAfterSeconds: Math.ceil((resetAt.getTime() - now.getTime()) / 1000) },
    );
  };

  /**
   * The batch's one order: the template once, each item's variables (a replayed item's unused),
   * and an item's own options where it has its own document information or an e-invoice (its
   * validated XML: the renderer embeds it as it is).
   */
  const batchOrder = (
    template: ResolvedTemplate,
    command: BatchCommand,
    eInvoices: readonly ({ option: EInvoiceOption } | undefined)[],
  ): BatchOrder => ({
    v: 1,
    field: template.field,
    template: { source: template.html, header: template.header, footer: template.footer },
    options: template.options,
    offline: template.offline,
    items: command.items.map((item, index) => {
      const eInvoice = eInvoices[index];
      return {
        variables: stringifyTemplateData(item.variables),
        ...(eInvoice
          ? { options: { ...optionsOf(template, item), e_invoice: eInvoice.option } }
          : item.metadata
            ? { options: optionsOf(template, item) }
            : {}),
      };
    }),
    ...(command.output
      ? { outputs: { file_names: command.items.map((item) => item.fileName ?? null) } }
      : {}),
  });

  /** The batch's jobs and their statuses in item order: its own from its index, replayed ones read. */
  const statusesOf = async (batch: Batch): Promise<BatchJobStatus[]> => {
    const own = await batches.statuses(batch.account_id, batch.id);
    const replayed = Object.values(batch.replayed ?? {});
    if (replayed.length === 0) return own;
    const others = await deps.writes.getJobs(batch.account_id, replayed);
    return [
      ...own,
      ...[...others.values()].map((j) => ({ id: j.id, status: j.status, updated_at: j.updated_at })),
    ];
  };

  /**
   * A batch as it is now: the ended jobs its counters miss (failed by the sweeper, or whose event
   * did not go through) are counted first.
   */
  /** The view with fresh links to its outputs, once they are ready. */
  const withLinks = async (shown: BatchView): Promise<BatchView> =>
    shown.batch.outputs?.status === 'ready' && deps.outputUrls
      ? { ...shown, outputUrls: await deps.outputUrls(shown.batch) }
      : shown;

  const current = async (batch: Batch): Promise<BatchView> => {
    if (batch.status === 'completed') return withLinks(await view(batch));
    const statuses = await statusesOf(batch);
    const ended = statuses.filter((s) => isEnded(s.status));
    let latest = batch;
    if (ended.length > endedCount(batch)) {
      // Only the jobs whose own count is overdue: one that just ended is being counted by its holder.
      const already = await batches.counted(batch.account_id, batch.id);
      const overdue = clock.now().getTime() - REPAIR_AFTER_MS;
      // A replayed item's job is counted by its own batch's holder, never on this one: no wait.
      const replayed = new Set(Object.values(batch.replayed ?? {}));
      for (const s of ended) {
        if (already.has(s.id) || (Date.parse(s.updated_at) > overdue && !replayed.has(s.id))) continue;
        const counted = await batches.countEnded(batch.account_id, batch.id, s.id, s.status as EndedHow);
        if (counted) latest = counted;
      }
      latest = await completeIfDone(latest);
    }
    return view(latest, statuses);
  };

  const find = async (principal: Principal, batchId: string): Promise<Batch> => {
    if (!BATCH_ID.test(batchId)) throw batchNotFound(batchId);
    const batch = await batches.get(principal.accountId, batchId);
    if (!batch) throw batchNotFound(batchId);
    return batch;
  };

  /** The batch's jobs in item order: its own (by its index) with the replayed ones at their places. */
  const listJobs = async (principal: Principal, batch: Batch, page: Page): Promise<JobView[]> => {
    const replayed = batch.replayed ?? {};
    const at = Object.keys(replayed)
      .map(Number)
      .sort((a, b) => a - b);
    if (at.length === 0) {
      return Promise.all((await batches.jobs(principal.accountId, batch.id, page)).map(presentJob));
    }
    // Item order: the batch's own jobs (its index, in item order) with the replayed ones at their places.
    const end = Math.min(batch.total, page.offset + page.limit);
    const within = at.filter((i) => i >= page.offset && i < end);
    const ownLimit = end - page.offset - within.length;
    const own =
      ownLimit > 0
        ? await batches.jobs(principal.accountId, batch.id, {
            offset: page.offset - at.filter((i) => i < page.offset).length,
            limit: ownLimit,
          })
        : [];
    const others = await deps.writes.getJobs(
      principal.accountId,
      within.map((i) => replayed[String(i)] as string),
    );
    const out: Job[] = [];
    for (let i = page.offset; i < end; i++) {
      const id = replayed[String(i)];
      const job = id === undefined ? own.shift() : others.get(id);
      if (job) out.push(job);
    }
    return Promise.all(out.map(presentJob));
  };

  return {
    /** Accepts a batch: every item's job pending in the queue, its unit held; answers the batch. */
    async create(principal: Principal, command: BatchCommand): Promise<BatchView> {
      const { webhookId, destinationId } = command;
      await checkNamed(deps, principal.accountId, command);
      const template = await readTemplate(principal, command);
      checkItems(template, command.items);
      // Options per item checked before anything is held (an item's metadata cannot break them).
      for (const item of command.items) optionsOf(template, item);

      checkItemKeys(command.items);
      // Before anything is held: a failing invoice costs nothing (422 naming the item and rule).
      const eInvoices = await checkEInvoices(template, command.items);

      const plan = planOf(principal);
      const month = monthOf(clock.now());
      const { rendersUsed } = await usage.readMonth(principal.accountId, month);
      const keyless = command.items.filter((i) => i.idempotencyKey === undefined).length;
      // Refused from one read when even the items no key can replay are too many.
      if (rendersUsed + keyless > unitCap(plan)) {
        throw quotaExceeded(plan, rendersUsed, command.items.length);
      }
      const batchId = newBatchId();
      // Until its consumer holds it: long enough for a thousand items on a loaded store, short
      // enough that the sweeper soon cancels a batch whose acceptance died (or queues the jobs of
      // an accepted batch that no consumer reached by then).
      const leaseUntil = clock.now().getTime() + ACCEPT_LEASE_FACTOR * leaseMs;
      // Stored beside the jobs' writes (a megabyte for a thousand invoices), once the items' keys
      // are settled. The API may only put orders: one whose batch is refused after all (a
      // concurrent render took the units, a fault) is left to the bucket's lifecycle rule.
      let storing: Promise<void> = Promise.resolve();
      const storeOrder = () => {
        storing = deps.orders.put(principal.accountId, batchId, batchOrder(template, command, eInvoices));
        storing.catch(() => {});
      };
      let accepted: Awaited<ReturnType<typeof acceptItems>>;
      try {
        accepted = await acceptItems(
          {
            writes: deps.writes,
            onFault: deps.onFault,
            quotaExceeded: async (wanted) =>
              quotaExceeded(plan, (await usage.readMonth(principal.accountId, month)).rendersUsed, wanted),
            writing: storeOrder,
            batchAccepted: async (accountId, batchId) =>
              (await deps.batches.get(accountId, batchId)) !== undefined,
            ...(deps.digest ? { digest: deps.digest } : {}),
          },
          {
            principal,
            plan,
            month,
            batchId,
            leaseUntil,
            source: command.source,
            options: command.options,
            items: command.items,
            job: (_jobId, index) => {
              const eInvoice = eInvoices[index];
              const item = command.items[index];
              return {
                account_id: principal.accountId,
                template_id: command.source.kind === 'saved' ? command.source.templateId : null,
                template_version: template.version,
                mode: 'async',
                // The batch's endpoint hears of each item too (job.completed, job.failed,
                // job.cancelled), when it subscribed to them; batch.completed as ever.
                webhook_id: webhookId,
                batch_id: batchId,
                ...(destinationId ? { destination_id: destinationId } : {}),
                ...(item?.reference !== undefined ? { reference: item.reference } : {}),
                ...(item?.fileName !== undefined ? { file_name: item.fileName } : {}),
                ...(eInvoice ? { e_invoice: eInvoice.record } : {}),
                ...(printsPageNumbers(template) ? { prints_page_numbers: true as const } : {}),
              };
            },
          },
        );
      } catch (e) {
        await storing.catch(() => undefined);
        throw e;
      }
      const jobs = accepted.created.map((c) => c.job);
      const replayed = [...accepted.replayed.entries()];
      let batch: Batch;
      try {
        await storing;
        const ended = (how: 'completed' | 'failed') =>
          replayed.filter(([, j]) => j.status === how).map(([, j]) => j.id);
        // The acceptance: the last write before the 202, and the first that lets an item render
        // (no message is sent before it). Refused when the sweeper found the jobs' acceptance
        // lease run out first and cancelled the batch (a marker in its place): then it is undone.
        batch = await batches.create({
          id: batchId,
          account_id: principal.accountId,
          total: command.items.length,
          template_id: command.source.kind === 'saved' ? command.source.templateId : null,
          template_version: template.version,
          webhook_id: webhookId,
          ...(command.output ? { output: command.output } : {}),
          ...(replayed.length > 0
            ? {
                replayed: Object.fromEntries(replayed.map(([index, j]) => [String(index), j.id])),
                ended: { completed: ended('completed'), failed: ended('failed') },
              }
            : {}),
        });
      } catch (e) {
        await storing.catch(() => undefined);
        await accepted.undo();
        throw e;
      }
      if (jobs.length === 0) {
        // Every item replayed: the batch is its earlier jobs, complete once they all ended.
        return view(replayed.some(([, j]) => isOpen(j)) ? batch : await completeIfDone(batch));
      }
      try {
        await deps.queue.enqueue(jobs);
      } catch (e) {
        // Accepted all the same: a job whose message did not go is queued by the sweeper once its
        // acceptance lease runs out (sweeper.ts), as after a kill here.
        deps.onFault(
          'queueing a batch failed; the sweeper queues its jobs once their acceptance lease runs out',
          e,
        );
      }
      return view(batch);
    },

    async get(principal: Principal, batchId: string): Promise<BatchView> {
      return current(await find(principal, batchId));
    },

    async list(principal: Principal, page: Page): Promise<BatchView[]> {
      return Promise.all((await batches.list(principal.accountId, page)).map(current));
    },

    /**
     * POST /v1/batches/{id}/cancel: every job of the batch still pending is cancelled (its unit
     * given back, job.cancelled told when its endpoint subscribed); one that began rendering runs
     * to its end. Each job's cancel is conditional on `pending`, as the consumer's claim is, so a
     * job is either rendered or cancelled, never both. Answers the batch as it is then (counts
     * include `cancelled`; it completes once its last rendering job ended). Items that replayed
     * another batch's job are that batch's, and are left alone.
     */
    async cancel(principal: Principal, batchId: string): Promise<BatchView> {
      const batch = await find(principal, batchId);
      const cancelJob = deps.cancelJob;
      if (!cancelJob) throw new Error('batch cancel is not wired in this function');
      if (batch.status === 'processing') {
        const pending = (await batches.statuses(batch.account_id, batch.id)).filter(
          (s) => s.status === 'pending',
        );
        let next = 0;
        const worker = async () => {
          while (next < pending.length) {
            const s = pending[next++] as BatchJobStatus;
            await cancelJob({ account_id: batch.account_id, id: s.id });
          }
        };
        await Promise.all(Array.from({ length: Math.min(CANCEL_PARALLEL, pending.length) }, worker));
      }
      return current((await batches.get(batch.account_id, batch.id)) ?? batch);
    },

    /** A page of the batch's jobs in item order (GET /v1/batches/{id}/jobs without a filter). */
    async listJobs(principal: Principal, batchId: string, page: Page): Promise<JobView[]> {
      return listJobs(principal, await find(principal, batchId), page);
    },

    /** A page of the batch's jobs in item order, only those in `status` when given. */
    async listJobsPage(
      principal: Principal,
      batchId: string,
      page: Page,
      status?: Job['status'],
    ): Promise<BatchJobsPage> {
      if (status === undefined) {
        const batch = await find(principal, batchId);
        const jobs = await listJobs(principal, batch, page);
        return { jobs, hasMore: page.offset + page.limit < batch.total };
      }
      const batch = await find(principal, batchId);
      // The index says which jobs are in `status` (it may lag a moment behind a job): those of the
      // page are read, and one whose status moved on meanwhile is left out.
      const ids = (await statusesOf(batch)).filter((s) => s.status === status).map((s) => s.id);
      const wanted = ids.slice(page.offset, page.offset + page.limit);
      const read = await deps.writes.getJobs(batch.account_id, wanted);
      const jobs = wanted.flatMap((id) => {
        const job = read.get(id);
        return job && job.status === status ? [job] : [];
      });
      return {
        jobs: await Promise.all(jobs.map(presentJob)),
        hasMore: page.offset + page.limit < ids.length,
      };
    },
  };
};

export type Batches = ReturnType<typeof createBatches>;
