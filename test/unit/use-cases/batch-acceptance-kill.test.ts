/**
 * Issue 38: a batch's acceptance is all or nothing, whatever step it dies at. The API's process
 * is killed after each of its writes in turn (a wrapper over every part acceptance writes to: the
 * batch's wide writes, the batch store, the order store, the render queue, and the job and usage
 * stores a clean-up after a fault would write to; once killed, every
 * later call of any of them throws, the undo's too, as nothing runs after a kill), then the
 * service is "restarted" on the same stores: the sweeper runs once the acceptance lease it states
 * has run out (ACCEPT_LEASE_FACTOR = 10 job leases) and the render queue's consumer works off the
 * queue. At every step, either the batch was accepted (its record exists) and every item renders,
 * or it is cancelled (never shown: 404 BATCH_NOT_FOUND) with every job failed and every unit back;
 * `renders_used` equals the completed jobs either way, and a retry of a cancelled batch with the
 * same item keys renders each item once. (On the code before issue 38's class 2 a kill between
 * the first and the last chunk of the batch's messages left it partly rendered and charged.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { BatchCommand, BatchItem } from '../../../functions/domain/batches/batches.js';
import { ServiceError } from '../../../functions/domain/common/errors.js';
import { batches, renderWorker, sweeper } from '../../../functions/services.js';
import { parseTemplateData } from '../../../functions/templating/index.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';

/** 60 items (three chunks of messages), every fifth with a key. */
const command = (): BatchCommand => ({
  source: { kind: 'inline', html: '<p>Invoice {{ n }}</p>', headerHtml: null, footerHtml: null },
  options: {},
  items: Array.from(
    { length: 60 },
    (_, i): BatchItem => ({
      variables: parseTemplateData(`{"n": ${i}}`),
      ...(i % 5 === 0 ? { idempotencyKey: `inv-${i}` } : {}),
    }),
  ),
  webhookId: null,
});

class Killed extends Error {}

/** A kill, or an error that a kill caused (the answer to the caller, who never gets it). */
const killedBy = (e: unknown): boolean =>
  e instanceof Killed || (e instanceof Error && e.cause !== undefined && killedBy(e.cause));

/**
 * Every write acceptance makes, counted; once `budget` writes went through, the process is dead:
 * every later call throws. `revive()` is the restart.
 */
const killSwitch = (m: MemoryServices) => {
  const state = { budget: Number.POSITIVE_INFINITY, writes: [] as string[] };
  const wrap = <T extends object>(name: string, target: T, methods: readonly (keyof T)[]) => {
    for (const method of methods) {
      const original = target[method] as unknown as ((...args: unknown[]) => Promise<unknown>) | undefined;
      if (typeof original !== 'function') continue;
      (target as Record<keyof T, unknown>)[method] = async (...args: unknown[]) => {
        if (state.writes.length >= state.budget) throw new Killed(`killed before ${name}.${String(method)}`);
        state.writes.push(`${name}.${String(method)}`);
        return original.apply(target, args);
      };
    }
  };
  wrap('writes', m.batchWrites, [
    'createJobs',
    'claimItemKey',
    'reserveUnits',
    'releaseUnits',
    'releaseItemKey',
    'deleteJobs',
    'holdJobs',
  ]);
  wrap('batches', m.batchStore, ['create']);
  wrap('orders', m.batchOrders, ['put']);
  wrap('renderQueue', m.renderQueue, ['send', 'sendMany']);
  // What a clean-up after a fault would write (none runs after a kill).
  wrap('jobs', m.jobs, [
    'create',
    'discard',
    'hold',
    'requeue',
    'complete',
    'fail',
    'settled',
    'failExpired',
  ]);
  wrap('usage', m.usage, ['reserveRender', 'reserveQueued', 'releaseRender', 'recordRender', 'setUnits']);
  return {
    killAfter: (n: number) => {
      state.budget = n;
      state.writes = [];
    },
    revive: () => {
      state.budget = Number.POSITIVE_INFINITY;
    },
    writes: () => [...state.writes],
  };
};

let m: MemoryServices;
afterEach(async () => {
  await m?.close();
});

/** The restarted service until nothing changes: sweeps (after the lease) and the consumer's work. */
const recover = async () => {
  const worker = m.services.get(renderWorker);
  const sweep = m.services.get(sweeper);
  // The bound this test holds the service to: the acceptance lease (10 job leases) and 1 ms.
  m.clock.advance(10 * m.settings.jobLeaseSeconds * 1000 + 1);
  for (let pass = 0; pass < 3; pass++) {
    await sweep.sweep();
    for (let messages = m.renderQueue.drain(); messages.length > 0; messages = m.renderQueue.drain()) {
      for (const message of messages) await worker.handle(message);
    }
  }
};

const notFound = async (p: Promise<unknown>) => {
  try {
    await p;
    return false;
  } catch (e) {
    if (e instanceof ServiceError && e.code === 'BATCH_NOT_FOUND') return true;
    throw e;
  }
};

describe('a batch whose acceptance is killed after any of its writes', () => {
  it('is either accepted and renders every item, or cancelled with every unit back; renders_used equals completed jobs', async () => {
    // A clean acceptance, to learn its writes.
    m = memoryServices();
    const clean = killSwitch(m);
    clean.killAfter(Number.POSITIVE_INFINITY);
    await m.services.get(batches).create(caller(), command());
    const steps = clean.writes();
    await m.close();
    expect(steps.length).toBeGreaterThan(5);

    const outcomes: string[] = [];
    for (let n = 0; n <= steps.length; n++) {
      m = memoryServices();
      const kill = killSwitch(m);
      const ada = caller();
      const use = m.services.get(batches);
      kill.killAfter(n);
      let batchId: string | undefined;
      try {
        batchId = (await use.create(ada, command())).batch.id;
      } catch (e) {
        if (!killedBy(e)) throw e;
      }
      // The batch's id as the jobs carry it (a killed acceptance answered none).
      const jobs = await m.jobs.list(ada.accountId, { limit: 100, offset: 0 });
      batchId ??= jobs[0]?.batch_id ?? undefined;
      kill.revive();
      await recover();

      const after = n < steps.length ? `after write ${n} (${steps[n - 1] ?? 'none'})` : 'not killed';
      const ledger = await m.ledger(ada.accountId);
      expect(ledger, after).toMatchObject({ open: 0, unsettled: 0, inFlight: 0 });
      expect(ledger.rendersUsed, after).toBe(ledger.completed);
      // The usage ledger (issue 39): one entry per completed job, whichever write the kill followed.
      expect(ledger.billedAgrees, after).toBe(true);
      const cancelled = batchId === undefined || (await notFound(use.get(ada, batchId)));
      if (cancelled) {
        // Nothing rendered, nothing charged; no batch shown.
        expect(ledger, after).toMatchObject({ completed: 0, rendersUsed: 0 });
        expect(await use.list(ada, { limit: 10, offset: 0 }), after).toEqual([]);
        // The caller's retry (it got no answer) with the same item keys renders each item once.
        const retried = await use.create(ada, command());
        await recover();
        expect((await use.get(ada, retried.batch.id)).batch, after).toMatchObject({
          status: 'completed',
          completed: 60,
          failed: 0,
        });
        expect(await m.ledger(ada.accountId), after).toMatchObject({
          open: 0,
          completed: 60,
          rendersUsed: 60,
          unsettled: 0,
        });
        outcomes.push(`${after}: cancelled`);
      } else {
        const batch = (await use.get(ada, batchId as string)).batch;
        expect(batch, after).toMatchObject({ status: 'completed', completed: 60, failed: 0 });
        expect(ledger, after).toMatchObject({ completed: 60, failed: 0, rendersUsed: 60 });
        outcomes.push(`${after}: accepted`);
      }
      await m.close();
    }
    // Both outcomes occur: the batch's record is the point of no return.
    expect(outcomes.some((o) => o.endsWith('cancelled'))).toBe(true);
    expect(outcomes.some((o) => o.endsWith('accepted'))).toBe(true);
    const accepted = outcomes.findIndex((o) => o.endsWith('accepted'));
    expect(
      outcomes.slice(accepted).every((o) => o.endsWith('accepted')),
      outcomes.join('\n'),
    ).toBe(true);
    expect(steps[accepted - 1], outcomes.join('\n')).toBe('batches.create');
  });
});
