/**
 * Batch runs (issue 43): the render queue's consumer takes up to RENDER_RUN_MAX_ITEMS messages (consumers.ts) at once,
 * and a batch's items among them render as one run: one renderer call (RunCall), one browser
 * context of the run's own, wiped between items. Everything else about an item stays as it is for
 * a single message (render-worker.ts): its claim (attempt + 1, fenced), its lease renewed while
 * it waits and renders, its unit, its result settled on its own (completed, retried with its
 * backoff, or failed), its order deleted or kept with its batch.
 *
 * - Messages are grouped by account; an account's claimed jobs by batch. Accounts with one message
 *   go first, and jobs outside a batch render alone (their own context), as before.
 * - A run starts no item after `sliceMs` (the renderer stops, run.ts): the items it did not start
 *   are released (pending again, their claim undone: no attempt spent) and come back at once.
 *   So a run holds its consumer at most `sliceMs` plus one item's own budget, where a single
 *   item holds it at most that budget (docs/batch-runs.md states and measures the bound).
 * - A renderer that fails or dies during the run fails every item not yet settled as a single
 *   render's crash does (retried while attempts remain); nothing was completed, so nothing is
 *   charged twice. A crash of the consumer itself leaves its claimed items to their leases: the
 *   sweeper sends them back to the queue, as for a single message.
 */
import type { RenderResult } from '../common/ports.js';
import type { JobLifecycle } from '../jobs/job-lifecycle.js';
import type { Job } from '../jobs/jobs.js';
import type { AnyStoredOrder, RenderMessage } from './async-renders.js';
import type { RunCall } from './render-call.js';
import type { RenderWorker, WorkOutcome } from './render-worker.js';

export interface RunWorkerDeps {
  readonly worker: RenderWorker;
  readonly run: RunCall;
  readonly lifecycle: Pick<JobLifecycle, 'renewing' | 'release'>;
  /** No item of a run starts after this (settings.batchRunSliceMs). */
  readonly sliceMs: number;
  readonly onFault: (message: string, error: unknown) => void;
}

/**
 * What became of each message, in order: an outcome, the error that left it undecided, or `sent`:
 * not taken by this run, or released by it (claimed, not started), and sent again afresh by
 * `handBack`, once, so only acknowledged (a returned message would spend one of the queue's
 * receives, its maxReceiveCount being the attempts: measured, a batch's items handed back three
 * times went to the dead-letter queue and stayed pending). `later` is a released item's outcome
 * until the run sends it. (Both were `later` once, and the consumer sent a handed-back message a
 * second time: each copy was handed back again and doubled, run after run; once the batch was done
 * the queue went round forever, 35 receives a second on the local stack, issue 43.)
 */
export type RunOutcomes = (
  | WorkOutcome
  | { readonly error: unknown }
  | { readonly kind: 'later' }
  | { readonly kind: 'sent' }
)[];

interface Claimed {
  readonly index: number;
  readonly claimed: Job;
  readonly month: string;
  readonly reading: Promise<AnyStoredOrder | undefined>;
}

export const createRunWorker = ({ worker, run, lifecycle, sliceMs, onFault }: RunWorkerDeps) => {
  const { take, acceptedOf, orderMissing, settle, faulted, done, render } = worker.steps;
  /**
   * How many items a run's slice renders (kept while the consumer is warm): what the last runs the
   * slice cut short rendered, a moving average. A run that rendered every item it was given, as
   * many as it was allowed, raises it by one. Undefined until a run has told: every message is
   * taken. An account's messages beyond it plus one are handed back untouched, never claimed: each
   * item a run took and did not start was claimed, its order read, its upload link signed, then
   * released and sent again (measured: 780 claims for 310 items rendered at a load of ~21).
   */
  let fits: number | undefined;
  const takes = (received: number): number =>
    fits === undefined ? received : Math.max(2, Math.ceil(fits) + 1);
  const measured = (given: number, rendered: number, allowed: number): void => {
    if (rendered < given) fits = fits === undefined ? rendered : 0.5 * fits + 0.5 * rendered;
    else if (given >= allowed) fits = Math.max(fits ?? 0, rendered + 1);
  };
  /** A claimed item's outcome, its faults caught as a single message's are. */
  const settled = async (c: Claimed, result: RenderResult | null, accepted: Parameters<typeof settle>[0]) => {
    if (result === null) {
      // Never started: pending again with its attempt given back, and its message back now.
      const back = await lifecycle.release(c.claimed);
      return back ? ({ kind: 'later' } as const) : done('taken over', c.claimed);
    }
    try {
      return await settle(accepted, result);
    } catch (e) {
      return await faulted(c.claimed, c.month, e);
    }
  };

  /** One batch's claimed items, as one run. */
  const renderRun = async (
    items: readonly Claimed[],
    outcomes: RunOutcomes,
    allowed: number,
  ): Promise<void> => {
    const ready: { c: Claimed; accepted: NonNullable<Awaited<ReturnType<typeof acceptedOf>>> }[] = [];
    for (const c of items) {
      const accepted = await acceptedOf(c.claimed, c.month, c.reading);
      if (accepted) ready.push({ c, accepted });
      else outcomes[c.index] = await orderMissing(c.claimed, c.month);
    }
    if (ready.length === 0) return;
    const renewals = ready.map(({ c }) => lifecycle.renewing(c.claimed));
    try {
      let results: readonly (RenderResult | null)[];
      try {
        const { account_id, batch_id } = ready[0]?.c.claimed ?? {};
        results = await run(
          ready.map((r) => r.accepted),
          sliceMs,
          batch_id ? `${account_id}/${batch_id}` : undefined,
        );
        if (ready.length > 1) measured(ready.length, results.filter((r) => r !== null).length, allowed);
      } catch (e) {
        for (const { c } of ready) outcomes[c.index] = await faulted(c.claimed, c.month, e);
        return;
      }
      await Promise.all(
        ready.map(async ({ c, accepted }, i) => {
          renewals[i]?.stop();
          outcomes[c.index] = await settled(c, results[i] ?? null, accepted);
        }),
      );
    } finally {
      for (const r of renewals) r.stop();
    }
  };

  return {
    /** Each message's outcome, in order; a message whose handling threw has its error instead. */
    async handleRun(
      messages: readonly RenderMessage[],
      /**
       * Sends the messages of these indexes again, each once: those this run does not take, at
       * once (queued again now, not when it ends), then those it released, when it ends.
       */
      handBack: (indexes: readonly number[]) => Promise<void> = async () => {},
    ): Promise<RunOutcomes> {
      const outcomes: RunOutcomes = messages.map(() => ({ error: new Error('not handled') }));
      const byAccount = new Map<string, number[]>();
      for (const [i, m] of messages.entries()) {
        byAccount.set(m.account_id, [...(byAccount.get(m.account_id) ?? []), i]);
      }
      // An account with one message waits for no one's run.
      const cap = takes(messages.length);
      const accounts = [...byAccount.values()].sort((a, b) => a.length - b.length);
      // Handed back before anything is claimed: a consumer that dies mid-run leaves none of them
      // invisible for the queue's visibility timeout (measured: a stack killed mid-run did).
      const later = accounts.flatMap((indexes) => indexes.slice(cap));
      for (const index of later) outcomes[index] = { kind: 'sent' };
      if (later.length > 0) {
        await handBack(later).catch((e: unknown) => {
          // Not queued again: they come back as undecided messages do.
          for (const index of later) outcomes[index] = { error: e };
        });
      }
      for (const indexes of accounts) {
        const claimed: Claimed[] = [];
        const merges: Claimed[] = [];
        // Claimed side by side, each on its own (its read, hold and claim are its job's alone):
        // one after another they were ~90 ms of a run's consumer at a load of 11, its renderer idle.
        await Promise.all(
          indexes.slice(0, cap).map(async (index) => {
            try {
              const taken = await take(messages[index] as RenderMessage);
              if ('outcome' in taken) outcomes[index] = taken.outcome;
              // An async merge runs on its own, as a single message does (it renders its parts
              // itself), once the account's runs are done: their claims do not wait on it.
              else if (taken.claimed.kind === 'merge') merges.push({ index, ...taken });
              else claimed.push({ index, ...taken });
            } catch (e) {
              outcomes[index] = { error: e };
            }
          }),
        );
        // In the order received, whichever claim answered first.
        claimed.sort((a, b) => a.index - b.index);
        merges.sort((a, b) => a.index - b.index);
        const byBatch = new Map<string, Claimed[]>();
        for (const c of claimed) {
          const key = c.claimed.batch_id ?? `job:${c.claimed.id}`;
          byBatch.set(key, [...(byBatch.get(key) ?? []), c]);
        }
        for (const items of [...byBatch.values()].sort((a, b) => a.length - b.length)) {
          try {
            await renderRun(items, outcomes, cap);
          } catch (e) {
            onFault('a batch run could not be settled', e);
            for (const c of items)
              if (!('kind' in (outcomes[c.index] ?? {}))) outcomes[c.index] = { error: e };
          }
        }
        for (const c of merges) {
          try {
            outcomes[c.index] = await render(c.claimed, c.month, c.reading);
          } catch (e) {
            outcomes[c.index] = { error: e };
          }
        }
      }
      // Released by the run (never started): sent again now, after their claims were undone; not
      // those handed back at the start, already `sent` (see RunOutcomes).
      const released = outcomes.flatMap((o, i) =>
        'kind' in o && o.kind === 'later' && !later.includes(i) ? [i] : [],
      );
      if (released.length > 0) {
        await handBack(released).then(
          () => {
            for (const index of released) outcomes[index] = { kind: 'sent' };
          },
          (e: unknown) => {
            // Not queued again: they come back after their backoff, as undecided messages do.
            for (const index of released) outcomes[index] = { error: e };
          },
        );
      }
      return outcomes;
    },
  };
};
