/**
 * The webhook sender's Lambda: a consumer of the webhook queue (an SQS event source mapping with
 * ReportBatchItemFailures in the cloud; the local stack's poller feeds it the same SQSEvent). Each
 * record is one attempt (domain/webhook-sender.ts); a record that fails on our side (the table, the
 * queue) is named in batchItemFailures and comes back after its visibility timeout. It needs the
 * table, the API-key secret (signing secrets are sealed under a key derived from it) and the queue;
 * no user pool, no bucket, no VPC (egress is checked in code: adapters/http/webhook-client.ts).
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { type Environment, readResourceConfig } from '../core/config.js';
import { logger } from '../core/logger.js';
import { countWith } from '../core/metrics.js';
import { logFault } from '../core/runtime.js';
import type { WebhookMessage } from '../domain/webhooks.js';
import * as build from '../services.js';
import type { WebhookParts } from '../webhooks/queue.js';
import { SERVICE_METRICS } from '../wiring.js';

export type WebhookSenderHandler = (event: SQSEvent) => Promise<SQSBatchResponse>;

/** The sender's bindings (functions/wiring.ts): the CDK construct grants exactly these. */
export const WEBHOOK_SENDER_WIRING = {
  table: true,
  userPool: false,
  apiKeySecret: true,
  pdfBucket: false,
  renderer: false,
  webhookQueue: true,
  renderQueue: false,
} as const;

const isMessage = (body: unknown): body is WebhookMessage => {
  const m = body as Partial<WebhookMessage> | null;
  return (
    typeof m === 'object' &&
    m !== null &&
    m.v === 1 &&
    typeof m.account_id === 'string' &&
    typeof m.webhook_id === 'string' &&
    typeof m.delivery_id === 'string' &&
    typeof m.attempt === 'number'
  );
};

export const createWebhookSenderHandler = (
  env: Environment,
  parts: WebhookParts = {},
): WebhookSenderHandler => {
  const config = readResourceConfig(WEBHOOK_SENDER_WIRING, env);
  const sender = build.createServices(config, parts).get(build.webhookSender);
  return async (event) => {
    const failures: { itemIdentifier: string }[] = [];
    // Records are independent: a batch's attempts run side by side.
    await Promise.all(
      event.Records.map(async (record) => {
        let body: unknown;
        try {
          body = JSON.parse(record.body);
        } catch {
          body = undefined;
        }
        if (!isMessage(body)) {
          logger.warn('webhook message dropped: not a webhook message', { messageId: record.messageId });
          return;
        }
        try {
          const outcome = await sender.handle(body);
          if (outcome !== 'duplicate' && outcome !== 'waiting') {
            countWith(SERVICE_METRICS.webhookAttempts, { outcome });
          }
        } catch (e) {
          logFault('webhook attempt failed on our side; the message comes back', e);
          countWith(SERVICE_METRICS.webhookSenderFaults, {});
          failures.push({ itemIdentifier: record.messageId });
        }
      }),
    );
    return { batchItemFailures: failures };
  };
};
