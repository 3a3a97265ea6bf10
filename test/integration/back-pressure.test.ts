/**
 * Overload answers back-pressure, not 500s (issue 19): 60 concurrent renders from one account,
 * then 60 from ten accounts, on a stack whose plan runs 2 renders at once per account. Every
 * answer is 201, or 429/503 with Retry-After; every 429 for concurrency holds nothing; units equal
 * completed renders; and another account's single render completes meanwhile (retried after a 503
 * as its Retry-After says, as a client does). The issue's
 * 200-request scenario is this file with BACK_PRESSURE_RENDERS=200 (too heavy for every CI run).
 */
import { describe, expect, it } from 'vitest';
import { type ApiResponse, type Json, useLocalStack } from '../helpers/local-stack.js';

const LEASE_SECONDS = 10;

const local = useLocalStack({
  env: {
    // The plans' concurrency is what this file measures: the renderer's own capacity (2 per core by
    // default, 503 SERVICE_BUSY past it; renderer-admission.test.ts) is set above ten accounts'
    // 2 renders each plus the other account's one, so that it does not answer for them.
    RENDERER_MAX_CONCURRENT_RENDERS: '11',
    // A job whose clean-up the overloaded store refused is settled by the sweeper within twice the
    // lease: short here, so that the test can wait for it.
    JOB_LEASE_SECONDS: String(LEASE_SECONDS),
    SWEEP_INTERVAL_SECONDS: '1',
    PLANS: JSON.stringify({
      free: { monthlyRenders: 10_000, rendersPerMinute: 10_000, concurrentRenders: 2 },
    }),
  },
});

/** Renders per scenario: 60 in the suite, 200 for the figures. */
const RENDERS = Number(process.env.BACK_PRESSURE_RENDERS ?? 60);

const render = (token: string, n: number) =>
  local.api('/v1/pdf', { method: 'POST', token, body: { html: `<h1>Render ${n}</h1>` } });

/**
 * Another account's single render, sent as a client that honours back-pressure sends it: a 503
 * with Retry-After (the shared store overloaded on a busy machine) is retried after the time it
 * names, a few times. It must end 201.
 */
const renderHonouringRetryAfter = async (token: string) => {
  for (let attempt = 1; ; attempt++) {
    const res = await render(token, 0);
    if (res.status !== 503 || attempt === 5) return res;
    const retryAfter = res.headers.get('retry-after');
    expect(retryAfter, res.text).toMatch(/^\d+$/);
    await new Promise((resolve) => setTimeout(resolve, Number(retryAfter) * 1000));
  }
};

/** Each answer's status; fails on any answer that is not 201, or 429/503 with Retry-After. */
const tally = (answers: readonly ApiResponse[]) => {
  const counts: Record<number, number> = {};
  for (const a of answers) {
    counts[a.status] = (counts[a.status] ?? 0) + 1;
    expect([201, 429, 503], a.text).toContain(a.status);
    if (a.status !== 201) {
      expect(a.headers.get('retry-after'), a.text).toMatch(/^\d+$/);
      if (a.json.error.code === 'CONCURRENCY_LIMIT_EXCEEDED') expect(a.json.error.job_id).toBeUndefined();
    }
  }
  return counts;
};

/** renders_used against completed jobs, once every job of the account ended. */
const unitsAndCompleted = async (token: string) => {
  // Within the bound the README states: a job's lease twice (its holder's, then the refund's
  // grace) and a sweep, with slack for a loaded machine.
  const deadline = Date.now() + (2 * LEASE_SECONDS + 1) * 1000 + 15_000;
  for (;;) {
    const jobs: Json[] = (await local.api('/v1/pdf?limit=100', { token })).json;
    const open = jobs.filter((j) => j.status === 'pending' || j.status === 'rendering');
    const usage = (await local.api('/v1/usage', { token })).json;
    const completed = jobs.filter((j) => j.status === 'completed').length;
    if ((open.length === 0 && usage.renders_used === completed) || Date.now() > deadline) {
      expect(open).toEqual([]);
      return { units: usage.renders_used, completed };
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
};

describe('back-pressure', () => {
  it(`${RENDERS} concurrent renders from one account: 201 or 429 CONCURRENCY_LIMIT_EXCEEDED, units equal completed, another account served`, {
    timeout: 180_000,
  }, async () => {
    const flooder = await local.sessionToken();
    const other = await local.sessionToken();
    const flood = Promise.all(Array.from({ length: RENDERS }, (_, n) => render(flooder, n)));
    const single = await renderHonouringRetryAfter(other);
    expect(single.status, single.text).toBe(201);
    const counts = tally(await flood);
    console.info(`one account, ${RENDERS} concurrent:`, counts);
    expect(counts[201]).toBeGreaterThan(0);
    expect(counts[429]).toBeGreaterThan(0);
    const { units, completed } = await unitsAndCompleted(flooder);
    expect(units).toBe(completed);
    expect(completed).toBe(counts[201]);
  });

  it(`${RENDERS} concurrent renders from ten accounts: no 500, units equal completed for each`, {
    timeout: 180_000,
  }, async () => {
    const tokens = await Promise.all(Array.from({ length: 10 }, () => local.sessionToken()));
    const other = await local.sessionToken();
    const flood = Promise.all(Array.from({ length: RENDERS }, (_, n) => render(tokens[n % 10] as string, n)));
    const single = await renderHonouringRetryAfter(other);
    expect(single.status, single.text).toBe(201);
    const counts = tally(await flood);
    console.info(`ten accounts, ${RENDERS} concurrent:`, counts);
    for (const token of tokens) {
      const { units, completed } = await unitsAndCompleted(token);
      expect(units).toBe(completed);
    }
  });
});
