/**
 * The usage event bus on Amazon EventBridge (domain/accounts/usage-events.ts is its port): one
 * PutEvents of up to ten events, on the stack's bus (USAGE_EVENT_BUS_NAME). PutEvents answers per
 * entry; an entry it refused (throttled, an internal failure) stays in the ledger's outbox and is
 * published again next pass.
 */
import { EventBridgeClient, PutEventsCommand, type PutEventsCommandInput } from '@aws-sdk/client-eventbridge';
import type { AwsConfig } from '../../core/config.js';
import { traced } from '../../core/tracing.js';
import type { UsageEvent, UsageEventBus } from '../../domain/accounts/usage-events.js';
import { clientOptions } from '../client-options.js';

export const putUsageEventsParams = (
  eventBusName: string,
  events: readonly UsageEvent[],
): PutEventsCommandInput => ({
  Entries: events.map((e) => ({
    EventBusName: eventBusName,
    Source: e.source,
    DetailType: e['detail-type'],
    Time: new Date(e.time),
    Detail: JSON.stringify(e.detail),
  })),
});

/** `endpoint`: tests only, a stand-in that answers PutEvents (the SDK also reads AWS_ENDPOINT_URL_EVENTBRIDGE). */
export const createEventBridgeUsageBus = (
  eventBusName: string,
  aws: AwsConfig,
  endpoint?: string,
): UsageEventBus => {
  const client = traced(new EventBridgeClient(clientOptions(aws, endpoint)));
  return {
    async publish(events) {
      if (events.length === 0) return [];
      const out = await client.send(new PutEventsCommand(putUsageEventsParams(eventBusName, events)));
      return events.map((_, i) => {
        const entry = out.Entries?.[i];
        return entry !== undefined && entry.ErrorCode === undefined && entry.EventId !== undefined;
      });
    },
  };
};
