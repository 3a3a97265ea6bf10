/**
 * The sweeper's Lambda (EventBridge, every minute) and the local stack's timer both run this:
 * one pass of the sweeper use case (domain/sweeper.ts) over the table, on the schedule of its
 * entry in functions/consumers.ts. It needs the table, the render queue (async jobs sent again)
 * and the webhook queue (a job it fails that names an endpoint sends job.failed, a batch it ends
 * sends batch.completed, and pending deliveries whose message never came are queued again); no
 * user pool, no bucket, no renderer.
 */
import { LOCAL_START_EVENT, sweeper as sweeperEntry } from '../consumers.js';
import type { ResourceConfig } from '../core/config.js';
import { scheduledConsumer } from '../core/consumer.js';
import { logger } from '../core/logger.js';
import type { SweepReport } from '../domain/jobs/sweeper.js';
import * as build from '../services.js';
import { webhookPayloads } from '../webhook-payloads.js';
import type { WebhookParts } from '../webhooks/queue.js';

export type SweepRun = (event?: unknown) => Promise<SweepReport>;

const isLocalStart = (event: unknown): boolean =>
  typeof event === 'object' &&
  event !== null &&
  (event as { source?: unknown }).source === LOCAL_START_EVENT.source;

/** Its configuration has the bindings its entry declares (functions/consumers.ts). */
const createSweepRun = (config: ResourceConfig, parts: WebhookParts): SweepRun => {
  const sweeper = build.createServices(config, parts, webhookPayloads).get(build.sweeper);
  return async (event) => {
    const report = await sweeper.sweep(undefined, { holdersGone: isLocalStart(event) });
    if (report.expired > 0 || (report.redelivered ?? 0) > 0) logger.info('sweep', { ...report });
    return report;
  };
};

/** The handler factory (the local stack's timer) and the Lambda's entry, in the one consumer stack. */
export const { createHandler, handler } = scheduledConsumer(sweeperEntry, createSweepRun);
