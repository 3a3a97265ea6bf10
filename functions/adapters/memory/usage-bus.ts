/** The usage event bus in memory (domain/accounts/usage-events.ts), held to the same contract. */
import type { UsageEvent, UsageEventBus } from '../../domain/accounts/usage-events.js';

export const createMemoryUsageBus = (): UsageEventBus & { readonly events: readonly UsageEvent[] } => {
  const events: UsageEvent[] = [];
  return {
    events,
    async publish(batch) {
      if (batch.length > 10) throw new Error('at most 10 events per publish');
      events.push(...batch.map((e) => structuredClone(e)));
      return batch.map(() => true);
    },
  };
};
