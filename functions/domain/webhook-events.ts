/**
 * The job events (JobEvents, ports.ts) as webhooks: a job that names one of its account's
 * endpoints (`webhook_id`) sends it `job.completed` or `job.failed` when it ends, with the job
 * as the API shows it (`describe`: GET /v1/pdf/{id}'s body, its download link included).
 */

import { newWebhookDeliveryId, WEBHOOK_ID } from './ids.js';
import type { Job } from './jobs.js';
import type { JobEvents, WebhookEndpoints } from './ports.js';
import type { WebhookEmitter } from './webhook-management.js';
import type { WebhookStore } from './webhooks.js';

export interface WebhookJobEventsDeps {
  readonly endpoints: WebhookStore;
  readonly emitter: WebhookEmitter;
  readonly describe: (job: Job) => Promise<unknown>;
  readonly onFault: (message: string, error: unknown) => void;
}

export const createWebhookJobEvents = (deps: WebhookJobEventsDeps): JobEvents => ({
  async ended(job: Job): Promise<void> {
    if (!job.webhook_id || (job.status !== 'completed' && job.status !== 'failed')) return;
    const type = job.status === 'completed' ? 'job.completed' : 'job.failed';
    // One id for every try, so a try that recorded the delivery but failed to queue it is not
    // recorded twice.
    const id = newWebhookDeliveryId();
    // A few tries: a brief store or queue fault must not lose the event; the render never waits long.
    for (let tries = 0; tries < 3; tries++) {
      try {
        const endpoint = await deps.endpoints.get(job.account_id, job.webhook_id);
        // Deleted since the render was accepted, or not subscribed: nobody to tell.
        if (!endpoint?.events.includes(type)) return;
        await deps.emitter.emit(endpoint, type, await deps.describe(job), id);
        return;
      } catch (e) {
        deps.onFault(`sending ${type} for job ${job.id} failed`, e);
        await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** tries));
      }
    }
  },
});

/** The endpoints as a render that names one is checked against at acceptance (ports.ts). */
export const webhookEndpointsOf = (store: WebhookStore): WebhookEndpoints => ({
  exists: async (accountId, webhookId) =>
    WEBHOOK_ID.test(webhookId) && (await store.get(accountId, webhookId)) !== undefined,
});
