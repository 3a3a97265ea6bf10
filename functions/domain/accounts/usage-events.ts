/**
 * Usage events (issue 39): each usage ledger entry (usage-ledger.ts) is published once it is
 * recorded, where a billing system can take it: the stack's EventBridge bus in the cloud, a JSON-lines
 * file in DATA_DIR locally (the UsageEventBus port). Delivery is at least once: an entry leaves the
 * ledger's outbox only after the bus took its event, so a publisher that dies in between publishes
 * it again, with the same `dedupe_key` (the job id). A job completed twice by a race has one ledger
 * entry, so one event (two only when a publish was repeated, both with the same key).
 *
 * The event's shape is docs/billing.md's; change it only with a new `version`.
 */
import type { UsageEntry, UsageLedger } from './usage-ledger.js';

/** EventBridge's `source` of every usage event; rules match on it. */
export const USAGE_EVENT_SOURCE = 'pdf-service.usage';
/** EventBridge's `detail-type` of a billable job's event. */
export const USAGE_EVENT_DETAIL_TYPE = 'Usage Recorded';
/** EventBridge takes at most 10 entries per PutEvents. */
export const USAGE_EVENTS_PER_PUT = 10;
/** Entries one pass publishes at most (a pass of the publisher runs every minute). */
export const USAGE_EVENTS_PER_PASS = 500;

export interface UsageEventDetail extends UsageEntry {
  /** The shape's version: 1. */
  readonly version: 1;
  /** The key a consumer dedupes on: the job id (one billable event per job). */
  readonly dedupe_key: string;
}

/** An event as EventBridge delivers it (its envelope's fields that we set), and as the local file holds it. */
export interface UsageEvent {
  readonly source: typeof USAGE_EVENT_SOURCE;
  readonly 'detail-type': typeof USAGE_EVENT_DETAIL_TYPE;
  /** The job's completion. */
  readonly time: string;
  readonly detail: UsageEventDetail;
}

export const usageEventOf = (entry: UsageEntry): UsageEvent => ({
  source: USAGE_EVENT_SOURCE,
  'detail-type': USAGE_EVENT_DETAIL_TYPE,
  time: entry.completed_at,
  detail: { version: 1, dedupe_key: entry.job_id, ...entry },
});

export interface UsageEventBus {
  /** Publishes up to USAGE_EVENTS_PER_PUT events; answers, for each, whether the bus took it. */
  publish(events: readonly UsageEvent[]): Promise<readonly boolean[]>;
}

export interface UsagePublishReport {
  readonly published: number;
  readonly refused: number;
}

export interface UsageEventPublisherDeps {
  readonly ledger: Pick<UsageLedger, 'unpublished' | 'markPublished'>;
  readonly bus: UsageEventBus;
  readonly onFault: (message: string, error: unknown) => void;
}

export const createUsageEventPublisher = ({ ledger, bus, onFault }: UsageEventPublisherDeps) => ({
  /** One pass: the outbox's oldest entries published, each marked once its event was taken. */
  async publish(limit: number = USAGE_EVENTS_PER_PASS): Promise<UsagePublishReport> {
    const entries = await ledger.unpublished(limit);
    let published = 0;
    let refused = 0;
    for (let i = 0; i < entries.length; i += USAGE_EVENTS_PER_PUT) {
      const chunk = entries.slice(i, i + USAGE_EVENTS_PER_PUT);
      const taken = await bus.publish(chunk.map(usageEventOf));
      for (const [j, entry] of chunk.entries()) {
        if (!taken[j]) {
          refused++;
          continue;
        }
        try {
          await ledger.markPublished(entry);
          published++;
        } catch (e) {
          // Published again next pass, with the same dedupe key.
          onFault(`marking usage entry ${entry.job_id} published failed`, e);
        }
      }
    }
    return { published, refused };
  },
});

export type UsageEventPublisher = ReturnType<typeof createUsageEventPublisher>;
