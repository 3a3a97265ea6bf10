/**
 * Async renders (POST /v1/pdf with `"async": true` or `Prefer: respond-async`): accepted as a
 * sync render is (pdf-jobs.ts `accept`: validation, template checks, a job, its unit), then the
 * render order is stored (S3, `orders/{account}/{job}.json`), the job waits in the queue (pending,
 * its unit held, a long lease) and a message naming it is sent to the render queue; the answer is
 * the pending job (202). The queue's consumer (render-worker.ts) renders it.
 *
 * Messages carry ids only: an order holds the template and its variables (up to 1 MiB), SQS at
 * most 256 KiB. A fault after the job exists fails it and gives its unit back, or leaves it to the
 * sweeper, which re-queues an async job whose lease ran out while attempts remain.
 */
import { ServiceError } from '../common/errors.js';
import type { MessageQueue } from '../common/ports.js';
import type { Principal } from '../common/principal.js';
import type { JobLifecycle } from '../jobs/job-lifecycle.js';
import type { Job, JobView } from '../jobs/jobs.js';
import type { StoredMergeOrder } from '../merges/merge-order.js';
import type { ResolvedTemplate } from '../templates/render-template.js';
import type { KeptOrders } from './kept-orders.js';
import type { AcceptedRender, PdfJobs, Placement, Rendered, RenderOrder, RenderRun } from './pdf-jobs.js';
import type { RenderCommand } from './render-command.js';
import type { StoredOrder } from './render-order.js';

/** The render queue's message: which job to render. Versioned, as a message outlives a deployment. */
export interface RenderMessage {
  readonly v: 1;
  readonly account_id: string;
  readonly job_id: string;
}

export type { StoredOrder } from './render-order.js';

/** What an async job's order is: a render's, or an async merge's (domain/merges/merge-order.ts). */
export type AnyStoredOrder = StoredOrder | StoredMergeOrder;

/**
 * Where orders wait for their render: private, deleted once the job ended (a lifecycle rule as a
 * backstop). A completed job that prints page numbers has its order kept beside its PDF, for
 * merges (kept-orders.ts).
 */
export interface RenderOrders extends KeptOrders {
  put(accountId: string, jobId: string, order: AnyStoredOrder): Promise<void>;
  /** Undefined: no such order (deleted, or never written). */
  get(accountId: string, jobId: string): Promise<AnyStoredOrder | undefined>;
  delete(accountId: string, jobId: string): Promise<void>;
}

/** Object key (in the PDF bucket) of an async job's render order. */
export const orderObjectKey = (accountId: string, jobId: string): string =>
  `orders/${accountId}/${jobId}.json`;

export const storedOrder = (accepted: AcceptedRender): StoredOrder => ({
  v: 1,
  field: accepted.field,
  template: accepted.template,
  options: accepted.options,
  offline: accepted.offline,
});

export const renderMessage = (job: Pick<Job, 'account_id' | 'id'>): RenderMessage => ({
  v: 1,
  account_id: job.account_id,
  job_id: job.id,
});

export const parseRenderMessage = (body: string): RenderMessage | undefined => {
  try {
    const m = JSON.parse(body) as Partial<RenderMessage>;
    return m.v === 1 && typeof m.account_id === 'string' && typeof m.job_id === 'string'
      ? { v: 1, account_id: m.account_id, job_id: m.job_id }
      : undefined;
  } catch {
    return undefined;
  }
};

export interface AsyncRenderDeps {
  /** Acceptance and idempotency, as a sync render's. */
  readonly pdfJobs: Pick<PdfJobs, 'accept' | 'create' | 'present'>;
  /** Holding the accepted job in the queue, or failing it when it cannot be queued. */
  readonly lifecycle: Pick<JobLifecycle, 'hold' | 'fail'>;
  readonly orders: RenderOrders;
  readonly queue: MessageQueue<RenderMessage>;
  readonly onFault: (message: string, error: unknown) => void;
}

export const createAsyncRenders = (deps: AsyncRenderDeps) => {
  const { pdfJobs, lifecycle, orders, queue } = deps;

  /**
   * One async render from an order already checked (its options: pdfJobs.prepare): accepted, its
   * order stored, the job held in the queue and its message sent. Answers the pending job. Batches
   * call this per item (with their `batchId`), with the template resolved once for all items
   * (the template resolver, in 'async' mode): each item's variables are checked only.
   */
  const submit = async (
    principal: Principal,
    order: RenderOrder,
    placement: Omit<Placement, 'mode'>,
    resolved?: ResolvedTemplate,
  ): Promise<Job> => {
    const accepted = await pdfJobs.accept(principal, order, { ...placement, mode: 'async' }, resolved);
    const { job } = accepted;
    try {
      // Both before the message (its consumer needs the order, and the job held in the queue).
      const [held] = await Promise.all([
        lifecycle.hold(job),
        orders.put(job.account_id, job.id, storedOrder(accepted)),
      ]);
      await queue.send(renderMessage(job), { groupId: job.account_id });
      return held;
    } catch (e) {
      // Not queued: the job fails and its unit goes back now (or the sweeper sees to it).
      deps.onFault('queueing an async render failed', e);
      const failed = await lifecycle.fail(job, accepted.month, {
        code: 'INTERNAL_ERROR',
        message:
          'The render could not be queued because of a fault of the service; the render unit was given back.',
      });
      throw new ServiceError(
        'INTERNAL_ERROR',
        failed
          ? 'The render could not be queued because of a fault of the service; the render unit was given back.'
          : `The render could not be queued because of a fault of the service; job ${job.id} will be failed and its render unit given back.`,
        { jobId: job.id, cause: e },
      );
    }
  };

  return {
    submit,

    /**
     * POST /v1/pdf asynchronously: the same validation, idempotency and checks as a sync render;
     * answers the pending job (or, on an idempotent replay, the job as it is now).
     */
    async create(principal: Principal, command: RenderCommand): Promise<Rendered> {
      const run: RenderRun = async (p, order): Promise<JobView> =>
        pdfJobs.present(
          await submit(p, order, {
            webhookId: command.webhookId,
            batchId: null,
            fileName: command.fileName,
            destinationId: command.destinationId ?? null,
          }),
        );
      return pdfJobs.create(principal, command, run);
    },
  };
};

export type AsyncRenders = ReturnType<typeof createAsyncRenders>;
