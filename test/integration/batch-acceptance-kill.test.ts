/**
 * Issue 38, class 2, over HTTP: a local stack in a child process killed (SIGKILL, the whole
 * process group: its dynalite, its queue, its renderer) while it accepts a batch, then started
 * again on the same data. Whatever the kill interrupted, after the restart either the batch was
 * accepted (listed) and every item renders, or it was cancelled (never listed) with nothing
 * charged; `renders_used` equals the completed jobs; and the bound the contract states holds: a
 * cancelled acceptance's jobs are all ended within the acceptance lease (10 job leases) and a
 * sweep. The kill comes as soon as the acceptance's first write shows (its jobs are listed), as
 * soon as its batch is listed, and once it answered (sampled: every write of acceptance in turn is killed in
 * test/unit/use-cases/batch-acceptance-kill.test.ts). Before
 * issue 38 such a kill left the batch partly rendered and charged (150 completed, 250 failed).
 */

import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it, type TestContext } from 'vitest';
import { type StackProcess, startStackProcess } from '../helpers/child-stack.js';
import { type Api, createApi, createTempDataDir, type Json } from '../helpers/local-stack.js';
import { billedJobIds } from '../helpers/usage-ledger.js';

const LEASE_SECONDS = 10;
const SWEEP_SECONDS = 1;
const ITEMS = 150;
/** What the contract states: 10 job leases from the acceptance's start, then a sweep. */
const ACCEPTANCE_LEASE_MS = 10 * LEASE_SECONDS * 1000;

const env = {
  JOB_LEASE_SECONDS: String(LEASE_SECONDS),
  SWEEP_INTERVAL_SECONDS: String(SWEEP_SECONDS),
  PLANS: JSON.stringify({ free: { monthlyRenders: 1000, rendersPerMinute: 1000, concurrentRenders: 2 } }),
};

const stackOnOwnData = async (onTestFinished: TestContext['onTestFinished']) => {
  const dataDir = await createTempDataDir();
  let stack: StackProcess | undefined;
  onTestFinished(async () => {
    await stack?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });
  return async () => {
    const startedAt = Date.now();
    stack = await startStackProcess(env, 90_000, {}, dataDir);
    return { stack, startMs: Date.now() - startedAt };
  };
};

/** Every job of the account (GET /v1/pdf, a page at a time). */
const allJobs = async (api: Api, token: string): Promise<Json[]> => {
  const jobs: Json[] = [];
  for (let offset = 0; ; offset += 100) {
    const page: Json[] = (await api(`/v1/pdf?limit=100&offset=${offset}`, { token })).json;
    jobs.push(...page);
    if (page.length < 100) return jobs;
  }
};

describe.concurrent('a stack killed while it accepts a batch, restarted on the same data', () => {
  it.for([
    ['as soon as its first job is listed', '/v1/pdf?limit=1'],
    ['as soon as the batch is listed', '/v1/batches?limit=1'],
    ['once it answered', null],
  ] as const)(
    'killed %s: accepted and every item rendered, or cancelled with nothing charged',
    { timeout: 420_000 },
    async ([, listing], { expect, onTestFinished }) => {
      const start = await stackOnOwnData(onTestFinished);
      let { stack } = await start();
      const sub = `acceptance-kill-${listing ?? 'answered'}`;
      const token = await stack.sessionToken(sub);
      let api = createApi(stack.baseUrl);
      const sentAt = Date.now();
      let answeredAt: number | undefined;
      const answer = api('/v1/batches', {
        method: 'POST',
        token,
        body: {
          html: '<p>Invoice {{ n }}</p>',
          items: Array.from({ length: ITEMS }, (_, n) => ({
            variables: { n },
            ...(n % 10 === 0 ? { idempotency_key: `kill-${n}` } : {}),
          })),
        },
      }).then(
        (res) => {
          answeredAt = Date.now();
          return res.status;
        },
        () => 'reset',
      );
      // The moment: the acceptance's first write seen (its jobs are listed from it on), its batch
      // seen (before issue 38 its jobs were queued after it), or its answer.
      if (listing === null) await answer;
      else {
        while (answeredAt === undefined) {
          const listed: Json[] = (await api(listing, { token })).json;
          if (listed.length > 0) break;
          await sleep(5);
        }
      }
      await stack.kill();
      const killedAt = Date.now();
      const answered = await answer;

      const restart = await start();
      stack = restart.stack;
      api = createApi(stack.baseUrl);
      const again = await stack.sessionToken(sub);
      // Cancelled, or queued by the sweeper, by the acceptance lease (from the request) and a few
      // sweeps; then the renders, two at a time; the restart's own time as slack.
      const boundMs = ACCEPTANCE_LEASE_MS + 5 * SWEEP_SECONDS * 1000 + restart.startMs + 10_000;
      let outcome: 'accepted' | 'cancelled';
      let jobs: Json[];
      for (;;) {
        const batches: Json[] = (await api('/v1/batches', { token: again })).json;
        jobs = await allJobs(api, again);
        const open = jobs.filter((j) => j.status === 'pending' || j.status === 'rendering');
        if (batches.length > 0) {
          expect(batches).toHaveLength(1);
          if (batches[0].status === 'completed') {
            outcome = 'accepted';
            break;
          }
          // An accepted batch renders: it may take the renders' time beyond the bound.
          expect(Date.now() - sentAt, JSON.stringify(batches[0].counts)).toBeLessThan(boundMs + ITEMS * 2000);
        } else if (open.length === 0 && Date.now() - sentAt > ACCEPTANCE_LEASE_MS) {
          outcome = 'cancelled';
          break;
        } else {
          expect(Date.now() - sentAt, `${open.length} jobs open, no batch`).toBeLessThan(boundMs);
        }
        await sleep(1000);
      }
      const completed = jobs.filter((j) => j.status === 'completed').length;
      let usage: Json;
      for (let i = 0; ; i++) {
        usage = (await api('/v1/usage', { token: again })).json;
        if (usage.renders_used === completed || i > 20) break;
        await sleep(500);
      }
      console.info(
        `acceptance kill at ${killedAt - sentAt} ms (answer: ${answered}${answeredAt ? ` at ${answeredAt - sentAt} ms` : ''}): ${outcome}, ${jobs.length} jobs, ` +
          `${completed} completed, renders_used ${usage.renders_used}, settled ${Date.now() - sentAt} ms after the request`,
      );
      expect(usage.renders_used).toBe(completed);
      // The usage ledger (issue 39): one entry per completed job, none for a failed one.
      const completedIds = (all: Json[]) =>
        all
          .filter((j) => j.status === 'completed')
          .map((j) => j.id as string)
          .sort();
      expect(await billedJobIds(stack as StackProcess, sub)).toEqual(completedIds(jobs));
      if (answered === 202) expect(outcome).toBe('accepted');
      if (outcome === 'accepted') {
        expect(completed).toBe(ITEMS);
      } else {
        expect(completed).toBe(0);
        expect(jobs.every((j) => j.status === 'failed')).toBe(true);
        // The caller's retry (it got no answer) renders each item once, its keyed ones too.
        const retried = await api('/v1/batches', {
          method: 'POST',
          token: again,
          body: {
            html: '<p>Invoice {{ n }}</p>',
            items: Array.from({ length: ITEMS }, (_, n) => ({
              variables: { n },
              ...(n % 10 === 0 ? { idempotency_key: `kill-${n}` } : {}),
            })),
          },
        });
        expect(retried.status, retried.text).toBe(202);
        for (let i = 0; ; i++) {
          const batch = (await api(`/v1/batches/${retried.json.id}`, { token: again })).json;
          if (batch.status === 'completed') {
            expect(batch.counts).toMatchObject({ completed: ITEMS, failed: 0 });
            break;
          }
          expect(i).toBeLessThan(ITEMS * 4);
          await sleep(500);
        }
        for (let i = 0; ; i++) {
          usage = (await api('/v1/usage', { token: again })).json;
          if (usage.renders_used === ITEMS || i > 20) break;
          await sleep(500);
        }
        expect(usage.renders_used).toBe(ITEMS);
        expect(await billedJobIds(stack as StackProcess, sub)).toEqual(
          completedIds(await allJobs(api, again)),
        );
      }
    },
  );
});
