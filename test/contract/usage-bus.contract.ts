/**
 * The UsageEventBus port's contract (domain/accounts/usage-events.ts): the memory fake and the
 * local stack's JSON-lines file take the same events the same way; `read` is each backend's own
 * view of what it took (the file read back, the fake's list).
 */
import { describe, expect, it } from 'vitest';
import {
  type UsageEvent,
  type UsageEventBus,
  usageEventOf,
} from '../../functions/domain/accounts/usage-events.js';

export interface UsageBusBackend {
  readonly name: string;
  create(): Promise<{ bus: UsageEventBus; read(): Promise<readonly UsageEvent[]> }>;
}

const event = (job: string) =>
  usageEventOf({
    account_id: 'acct-1',
    job_id: job,
    month: '2026-11',
    kind: 'render',
    units: 1,
    pages: 3,
    bytes: 2048,
    render_ms: 55,
    batch_id: null,
    completed_at: '2026-11-28T10:00:00.000Z',
  });

export const usageBusContract = (backend: UsageBusBackend): void => {
  describe(`the usage event bus on ${backend.name}`, () => {
    it('takes up to ten events at once, each whole and in order, with the job id as the dedupe key', async () => {
      const { bus, read } = await backend.create();
      const events = Array.from({ length: 10 }, (_, i) => event(`job_${i}`));
      expect(await bus.publish(events)).toEqual(events.map(() => true));
      expect(await bus.publish([])).toEqual([]);
      const taken = await read();
      expect(taken).toEqual(events);
      expect(taken[3]?.detail).toMatchObject({ version: 1, dedupe_key: 'job_3', job_id: 'job_3', pages: 3 });
      expect(taken[3]).toMatchObject({ source: 'pdf-service.usage', 'detail-type': 'Usage Recorded' });
    });

    it('refuses more than ten at once, taking none of them', async () => {
      const { bus, read } = await backend.create();
      await expect(bus.publish(Array.from({ length: 11 }, (_, i) => event(`job_${i}`)))).rejects.toThrow();
      expect(await read()).toEqual([]);
    });
  });
};
