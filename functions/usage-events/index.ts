/**
 * The usage events' Lambda (EventBridge, every minute) and the local stack's timer both run this:
 * one pass of the usage event publisher (domain/accounts/usage-events.ts) over the ledger's outbox,
 * on the schedule of its entry in functions/consumers.ts. It needs the table (the outbox read, an
 * entry marked published) and the usage event bus; nothing else.
 */
import { usageEvents as usageEventsEntry } from '../consumers.js';
import type { ResourceConfig } from '../core/config.js';
import { scheduledConsumer } from '../core/consumer.js';
import { logger } from '../core/logger.js';
import type { UsagePublishReport } from '../domain/accounts/usage-events.js';
import type { ServiceParts } from '../service-parts.js';
import * as build from '../services.js';

export type UsagePublishRun = () => Promise<UsagePublishReport>;

const createPublishRun = (config: ResourceConfig, parts: ServiceParts): UsagePublishRun => {
  const publisher = build.createServices(config, parts).get(build.usageEventPublisher);
  return async () => {
    const report = await publisher.publish();
    if (report.published > 0 || report.refused > 0) logger.info('usage events', { ...report });
    return report;
  };
};

/** The handler factory (the local stack's timer) and the Lambda's entry, in the one consumer stack. */
export const { createHandler, handler } = scheduledConsumer(usageEventsEntry, createPublishRun);
