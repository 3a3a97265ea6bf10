/**
 * Events as webhooks. `createWebhookNotifier` tells an account's endpoint of an event when it
 * subscribes to it (batches use it for `batch.completed`); the job events (JobEvents, ports.ts)
 * use it so that a job that names an endpoint (`webhook_id`) sends it `job.completed` or
 * `job.failed` when it ends, with the job as the API shows it (`describe`: GET /v1/pdf/{id}'s
 * body, its download link included).
 */

import type { BatchEvents, BatchView } from '../batches/batches.js';
import { eventDeliveryId, newWebhookDeliveryId, WEBHOOK_ID } from '../common/ids.js';
import type { JobEvents, WebhookEndpoints } from '../common/ports.js';
import type { DeliverableJob, DeliveryEvents } from '../destinations/deliveries.js';
import { isEnded, type Job } from '../jobs/jobs.js';
import type { WebhookEmitter } from './webhook-management.js';
import type { StoredWebhookDelivery, SubscribableEventType, WebhookStore } from './webhooks.js';

export interface WebhookNotifierDeps {
  readonly endpoints: WebhookStore;
  readonly emitter: WebhookEmitter;
  readonly onFault: (message: string, error: unknown) => void;
}

export const createWebhookNotifier = (deps: WebhookNotifierDeps) => ({
  /**
   * Sends `type` with `describe()`'s data to the account's endpoint `webhookId`, if it still
   * exists and subscribes to it. Never throws: a brief store or queue fault is tried again twice,
   * then logged. `id`, the delivery's, names the event: told again, it is recorded once.
   */
  async notify(
    accountId: string,
    webhookId: string,
    type: SubscribableEventType,
    describe: () => Promise<unknown>,
    id: string = newWebhookDeliveryId(),
  ): Promise<void> {
    // Recorded once, then queued: a try after a queueing fault queues what this call recorded.
    let recorded: StoredWebhookDelivery | undefined;
    for (let tries = 0; tries < 3; tries++) {
      try {
        if (!recorded) {
          const endpoint = await deps.endpoints.get(accountId, webhookId);
          // Deleted since the work was accepted, or not subscribed: nobody to tell.
          if (!endpoint?.events.includes(type)) return;
          recorded = await deps.emitter.record(endpoint, type, await describe(), id);
          // Told before (another telling of the same event recorded it): that one queues it.
          if (!recorded) return;
        }
        await deps.emitter.queueFirst(recorded);
        return;
      } catch (e) {
        deps.onFault(`sending ${type} to webhook ${webhookId} failed`, e);
        await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** tries));
      }
    }
  },
});

export type WebhookNotifier = ReturnType<typeof createWebhookNotifier>;

export interface WebhookJobEventsDeps extends WebhookNotifierDeps {
  readonly describe: (job: Job) => Promise<unknown>;
}

export const createWebhookJobEvents = (deps: WebhookJobEventsDeps): JobEvents => {
  const notifier = createWebhookNotifier(deps);
  return {
    async ended(job: Job): Promise<void> {
      if (!job.webhook_id || !isEnded(job.status)) return;
      const type = `job.${job.status}` as 'job.completed' | 'job.failed' | 'job.cancelled';
      // The job's end is one event, whoever tells it and however often (its last write's time).
      const at = Date.parse(job.updated_at);
      const id = Number.isFinite(at)
        ? eventDeliveryId(at, job.account_id, job.id, type)
        : newWebhookDeliveryId();
      await notifier.notify(job.account_id, job.webhook_id, type, () => deps.describe(job), id);
    },
  };
};

export interface WebhookDeliveryEventsDeps extends WebhookNotifierDeps {
  /** The job as it is now (its delivery recorded), read when a delivery ended. */
  readonly job: (accountId: string, jobId: string) => Promise<Job | undefined>;
  readonly describe: (job: Job) => Promise<unknown>;
}

/**
 * A job's delivery into its destination that ended tells the job's endpoint `job.delivered` (a
 * signed confirmation that the object is in the customer's bucket) or `job.delivery_failed`,
 * once: the deliverer tells it once, and the event's id is the job's and the type's.
 */
export const createWebhookDeliveryEvents = (deps: WebhookDeliveryEventsDeps): DeliveryEvents => {
  const notifier = createWebhookNotifier(deps);
  const tell = async (ref: DeliverableJob, type: 'job.delivered' | 'job.delivery_failed') => {
    const job = await deps.job(ref.account_id, ref.id);
    if (!job?.webhook_id) return;
    const id = eventDeliveryId(Date.parse(job.created_at), job.account_id, job.id, type);
    await notifier.notify(job.account_id, job.webhook_id, type, () => deps.describe(job), id);
  };
  return {
    delivered: (job) => tell(job, 'job.delivered'),
    failed: (job) => tell(job, 'job.delivery_failed'),
  };
};

export interface WebhookBatchEventsDeps extends WebhookNotifierDeps {
  /** The batch as GET /v1/batches/{id} shows it. */
  readonly describe: (view: BatchView) => unknown;
}

/** A batch that names an endpoint sends it `batch.completed` once its last job ended. */
export const createWebhookBatchEvents = (deps: WebhookBatchEventsDeps): BatchEvents => {
  const notifier = createWebhookNotifier(deps);
  return {
    async completed(view: BatchView): Promise<void> {
      const { batch } = view;
      if (!batch.webhook_id) return;
      const at = Date.parse(batch.completed_at ?? batch.created_at);
      await notifier.notify(
        batch.account_id,
        batch.webhook_id,
        'batch.completed',
        async () => deps.describe(view),
        Number.isFinite(at)
          ? eventDeliveryId(at, batch.account_id, batch.id, 'batch.completed')
          : newWebhookDeliveryId(),
      );
    },
  };
};

/** The endpoints as a render that names one is checked against at acceptance (ports.ts). */
export const webhookEndpointsOf = (store: WebhookStore): WebhookEndpoints => ({
  exists: async (accountId, webhookId) =>
    WEBHOOK_ID.test(webhookId) && (await store.get(accountId, webhookId)) !== undefined,
});
