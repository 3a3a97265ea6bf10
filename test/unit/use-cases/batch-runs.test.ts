/**
 * Batch runs (issue 43, domain/renders/render-run.ts) as the composition root builds them, on the
 * memory parts, with a renderer whose runs render their first items and leave the rest (as a run
 * past its slice does), or die mid-run: each item keeps its claim, unit, result and retry; items
 * a run did not start come back with no attempt spent; every job ends once and the units equal
 * the completed jobs.
 */
import { afterEach, expect, it } from 'vitest';
import { createMemoryRenderer } from '../../../functions/adapters/memory/renderer.js';
import type { BatchCommand } from '../../../functions/domain/batches/batches.js';
import type { Renderer, RenderRun } from '../../../functions/domain/common/ports.js';
import type { RenderMessage } from '../../../functions/domain/renders/async-renders.js';
import { batches, runWorker } from '../../../functions/services.js';
import { parseTemplateData } from '../../../functions/templating/index.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';

const batchOf = (count: number): BatchCommand => ({
  source: { kind: 'inline', html: '<p>Invoice {{ n }}</p>', headerHtml: null, footerHtml: null },
  options: {},
  items: Array.from({ length: count }, (_, n) => ({ variables: parseTemplateData(`{"n": ${n}}`) })),
  webhookId: null,
});

let m: MemoryServices;
afterEach(async () => {
  await m?.close();
});

/** A renderer whose runs render at most `perRun` items, and die on the runs `dies` names (1-based). */
const runningRenderer = (perRun: number, dies: readonly number[] = []) => {
  const single = createMemoryRenderer();
  const runs: string[][] = [];
  const batchesOfRuns: (string | undefined)[] = [];
  const renderer: Renderer = {
    render: (request) => single.render(request),
    async renderRun(run: RenderRun) {
      runs.push(run.requests.map((r) => r.jobId));
      batchesOfRuns.push(run.batch);
      if (dies.includes(runs.length)) throw new Error('the renderer died mid-run');
      return Promise.all(run.requests.map((r, i) => (i < perRun ? single.render(r) : null)));
    },
  };
  return { renderer, runs, batchesOfRuns };
};

/**
 * Plays the consumer as functions/render-worker/index.ts does: up to 10 messages at once, the run
 * sending again (handBack) those it did not take or released, the others that come back returned
 * with their delay, until none is left. Every job has one message queued at most, at any time: a
 * message sent twice was handed back twice, and doubled run after run.
 */
const consume = async () => {
  const worker = m.services.get(runWorker);
  const kinds: string[] = [];
  const queuedOnce = () => {
    const ids = m.renderQueue.messages().map((q) => q.body.job_id);
    expect(ids.length, `a job's message queued twice: ${ids.join(' ')}`).toBe(new Set(ids).size);
  };
  for (let round = 0; round < 100; round++) {
    const messages: RenderMessage[] = m.renderQueue.drain().slice(0);
    if (messages.length === 0) {
      const next = m.renderQueue.messages()[0];
      if (!next) return kinds;
      m.clock.set(new Date(next.visibleAt).toISOString());
      continue;
    }
    for (let i = 0; i < messages.length; i += 10) {
      const taken = messages.slice(i, i + 10);
      const outcomes = await worker.handleRun(taken, async (indexes) => {
        for (const j of indexes) await m.renderQueue.send(taken[j] as RenderMessage);
        queuedOnce();
      });
      for (const [j, outcome] of outcomes.entries()) {
        const kind = 'error' in outcome ? 'error' : outcome.kind;
        kinds.push(kind);
        if (kind === 'done' || kind === 'later' || kind === 'sent') continue;
        const delaySeconds = 'delaySeconds' in outcome ? outcome.delaySeconds : 0;
        await m.renderQueue.send(taken[j] as RenderMessage, { delaySeconds });
      }
      queuedOnce();
    }
  }
  throw new Error('the queue never emptied');
};

it("renders a batch's items in runs; items a run did not start come back with no attempt spent", async () => {
  const { renderer, runs } = runningRenderer(2);
  m = memoryServices({ renderer, settings: { asyncMaxAttempts: 1 } });
  const ada = caller();
  const { batch } = await m.services.get(batches).create(ada, batchOf(12));
  const kinds = await consume();
  const jobs = await m.batchStore.jobs(ada.accountId, batch.id, { limit: 100, offset: 0 });
  // With one attempt each, an item left by a run that spent it would have failed.
  expect(jobs.map((j) => j.status)).toEqual(Array(12).fill('completed'));
  expect(jobs.every((j) => j.attempts === 1)).toBe(true);
  expect(runs.some((r) => r.length > 1)).toBe(true);
  // Each job rendered once: its id in exactly one run's rendered items.
  const rendered = runs.flatMap((r) => r.slice(0, 2));
  expect(new Set(rendered).size).toBe(rendered.length);
  expect(kinds.filter((k) => k === 'done')).toHaveLength(12);
  expect(await m.ledger(ada.accountId)).toMatchObject({ rendersUsed: 12, inFlight: 0 });
});

it('a renderer that dies mid-run: its items are retried as a crash is, each ends once, units equal completed jobs', async () => {
  const { renderer, runs } = runningRenderer(10, [1]);
  m = memoryServices({ renderer, settings: { asyncMaxAttempts: 3, asyncRetryBaseSeconds: 1 } });
  const ada = caller();
  const { batch } = await m.services.get(batches).create(ada, batchOf(6));
  await consume();
  const jobs = await m.batchStore.jobs(ada.accountId, batch.id, { limit: 100, offset: 0 });
  expect(runs.length).toBeGreaterThan(1);
  const died = runs[0] as string[];
  expect(died.length).toBeGreaterThan(0);
  expect(jobs.map((j) => j.status)).toEqual(Array(6).fill('completed'));
  // The items of the run that died spent an attempt; the others one.
  for (const job of jobs) expect(job.attempts, job.id).toBe(died.includes(job.id) ? 2 : 1);
  expect(await m.ledger(ada.accountId)).toMatchObject({ rendersUsed: 6, inFlight: 0 });
});

it('a run is given no more of a batch than its slice rendered lately, plus one: the rest are never claimed', async () => {
  const { renderer, runs, batchesOfRuns } = runningRenderer(2);
  m = memoryServices({ renderer, settings: { asyncMaxAttempts: 1 } });
  const ada = caller();
  const { batch } = await m.services.get(batches).create(ada, batchOf(30));
  await consume();
  const jobs = await m.batchStore.jobs(ada.accountId, batch.id, { limit: 100, offset: 0 });
  expect(jobs.map((j) => j.status)).toEqual(Array(30).fill('completed'));
  // The first run is given all ten; once it rendered two, a run is given three at most.
  expect(runs[0]).toHaveLength(10);
  expect(Math.max(...runs.slice(1).map((r) => r.length))).toBeLessThanOrEqual(3);
  // An item given and not started was claimed and released: after the first run, one per run at most.
  const later = runs.slice(1);
  expect(later.reduce((n, r) => n + Math.max(0, r.length - 2), 0)).toBeLessThanOrEqual(later.length);
  expect(jobs.every((j) => j.attempts === 1)).toBe(true);
  // Each run names its batch (the renderer keeps a run's context for that batch's next run only).
  expect(new Set(batchesOfRuns)).toEqual(new Set([`${ada.accountId}/${batch.id}`]));
  expect(await m.ledger(ada.accountId)).toMatchObject({ rendersUsed: 30, inFlight: 0 });
});

it('a message a run does not take is queued again once, not twice: the queue empties once the batch is done', async () => {
  const { renderer } = runningRenderer(2);
  m = memoryServices({ renderer, settings: { asyncMaxAttempts: 1 } });
  const ada = caller();
  const { batch } = await m.services.get(batches).create(ada, batchOf(30));
  // Each job has one message in the queue at a time, checked by consume (sent twice, the queue went round forever).
  const kinds = await consume();
  expect(kinds.filter((k) => k === 'sent').length).toBeGreaterThan(0);
  const jobs = await m.batchStore.jobs(ada.accountId, batch.id, { limit: 100, offset: 0 });
  expect(jobs.map((j) => j.status)).toEqual(Array(30).fill('completed'));
  expect(jobs.every((j) => j.attempts === 1)).toBe(true);
  expect(await m.ledger(ada.accountId)).toMatchObject({ rendersUsed: 30, inFlight: 0 });
});
