/**
 * A renderer's admission control (functions/renderer/admission.ts): a bounded number run, a
 * bounded number wait, the rest are refused at once with when to come back.
 */
import { describe, expect, it } from 'vitest';
import { createAdmission } from '../../functions/renderer/admission.js';

const gate = () => {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
};

describe('admission', () => {
  it('runs up to maxConcurrent, queues up to maxQueued, refuses the rest at once', async () => {
    const admission = createAdmission({ maxConcurrent: 2, maxQueued: 1 });
    const gates = [gate(), gate(), gate()];
    const started: number[] = [];
    const runs = gates.map((g, i) =>
      admission.run(async () => {
        started.push(i);
        await g.opened;
        return i;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect(admission.stats()).toEqual({ running: 2, queued: 1 });

    const refused = await admission.run(async () => 'never');
    expect(refused.admitted).toBe(false);
    if (!refused.admitted) {
      expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(30);
    }

    gates[0]?.open();
    expect(await runs[0]).toEqual({ admitted: true, value: 0 });
    await Promise.resolve();
    // The queued one took the freed slot.
    expect(started).toEqual([0, 1, 2]);
    expect(admission.stats()).toEqual({ running: 2, queued: 0 });
    gates[1]?.open();
    gates[2]?.open();
    expect(await Promise.all(runs.slice(1))).toEqual([
      { admitted: true, value: 1 },
      { admitted: true, value: 2 },
    ]);
    expect(admission.stats()).toEqual({ running: 0, queued: 0 });
  });

  it('frees the slot of a render that threw', async () => {
    const admission = createAdmission({ maxConcurrent: 1, maxQueued: 0 });
    await expect(admission.run(async () => Promise.reject(new Error('crash')))).rejects.toThrow('crash');
    expect(await admission.run(async () => 'next')).toEqual({ admitted: true, value: 'next' });
  });
});
