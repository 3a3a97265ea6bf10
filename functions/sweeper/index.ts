/**
 * The sweeper's Lambda (EventBridge, every minute) and the local stack's timer both run this:
 * one pass of the sweeper use case (domain/sweeper.ts) over the table. It needs the table, the
 * render queue (async jobs sent again) and the webhook queue (a job it fails that names an
 * endpoint sends job.failed, a batch it ends sends batch.completed, and pending deliveries whose
 * message never came are queued again); no user pool, no bucket, no renderer.
 */
import { type Environment, readResourceConfig } from '../core/config.js';
import { logger } from '../core/logger.js';
import type { SweepReport } from '../domain/sweeper.js';
import * as build from '../services.js';
import { webhookPayloads } from '../webhook-payloads.js';
import type { WebhookParts } from '../webhooks/queue.js';

export type SweepHandler = () => Promise<SweepReport>;

/** The sweeper's bindings (functions/wiring.ts): the CDK construct grants exactly these. */
export const SWEEPER_WIRING = {
  table: true,
  userPool: false,
  apiKeySecret: false,
  pdfBucket: false,
  renderer: false,
  webhookQueue: true,
  renderQueue: true,
} as const;

export const createSweepHandler = (env: Environment, parts: WebhookParts = {}): SweepHandler => {
  const config = readResourceConfig(SWEEPER_WIRING, env);
  const sweeper = build.createServices(config, parts, webhookPayloads).get(build.sweeper);
  return async () => {
    const report = await sweeper.sweep();
    if (report.expired > 0 || (report.redelivered ?? 0) > 0) logger.info('sweep', { ...report });
    return report;
  };
};
