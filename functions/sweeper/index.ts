/**
 * The sweeper's Lambda (EventBridge, every minute) and the local stack's timer both run this:
 * one pass of the sweeper use case (domain/sweeper.ts) over the table. It needs the table and
 * nothing else: no user pool, no bucket, no renderer.
 */
import { createBatchStore } from '../adapters/dynamodb/batches.js';
import { createDocumentClient } from '../adapters/dynamodb/client.js';
import { createJobStore } from '../adapters/dynamodb/jobs.js';
import { createUsageStore } from '../adapters/dynamodb/usage.js';
import { createSqsClient } from '../adapters/sqs/client.js';
import { createSqsQueue } from '../adapters/sqs/queue.js';
import { type Environment, readResourceConfig } from '../core/config.js';
import { logger } from '../core/logger.js';
import { logFault, systemClock } from '../core/runtime.js';
import type { RenderMessage } from '../domain/async-renders.js';
import { createBatchCounter } from '../domain/batches.js';
import { jobRecordRetentionSeconds } from '../domain/jobs.js';
import { createSweeper, type SweepReport } from '../domain/sweeper.js';

export type SweepHandler = () => Promise<SweepReport>;

export const createSweepHandler = (env: Environment): SweepHandler => {
  const config = readResourceConfig(
    {
      table: true,
      userPool: false,
      apiKeySecret: false,
      pdfBucket: false,
      renderer: false,
      webhookQueue: false,
      renderQueue: true,
    },
    env,
  );
  const tableName = config.tableName as string;
  const db = createDocumentClient(config.aws);
  const clock = systemClock;
  const recordRetentionSeconds = jobRecordRetentionSeconds(config.settings.pdfRetentionDays);
  // A batch's job that the sweeper fails is counted on its batch at once (not at the next read).
  const batchCounter = createBatchCounter({
    batches: createBatchStore(db, tableName, clock, { recordRetentionSeconds }),
    onFault: logFault,
  });
  const sweeper = createSweeper({
    // The sweeper writes no job; the retention is the deployment's all the same.
    jobs: createJobStore(db, tableName, clock, { recordRetentionSeconds }),
    usage: createUsageStore(db, tableName, clock),
    clock,
    onFault: logFault,
    renderQueue: createSqsQueue<RenderMessage>(createSqsClient(config.aws), config.renderQueueUrl as string),
    limits: config.settings,
    events: batchCounter.jobEvents,
  });
  return async () => {
    const report = await sweeper.sweep();
    if (report.expired > 0) logger.info('sweep', { ...report });
    return report;
  };
};
