/**
 * GET /v1/usage's use case (domain/usage-report.ts) on the memory usage store (which passes the
 * store's contract, test/contract/usage.contract.ts) and a test clock.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryUsageStore } from '../../../functions/adapters/memory/usage.js';
import { createUsageReport } from '../../../functions/domain/accounts/usage-report.js';
import type { Principal } from '../../../functions/domain/common/principal.js';
import { DEFAULT_PLANS } from '../../../functions/settings.js';
import { testClock } from '../../helpers/dynalite.js';

const ADA: Principal = { accountId: 'acct-ada', email: undefined, credential: 'apiKey', plan: 'starter' };

describe('the usage report', () => {
  it("shows this month's units, output and rate window for the plan the account is held to", async () => {
    const clock = testClock('2026-11-28T10:00:30.000Z');
    const usage = createMemoryUsageStore(clock);
    const report = createUsageReport({ usage, clock, plans: DEFAULT_PLANS, defaultPlan: 'free' });
    const starter = DEFAULT_PLANS.starter as NonNullable<(typeof DEFAULT_PLANS)['starter']>;
    await usage.hitRateLimit(ADA.accountId, starter);
    await usage.reserveRender(ADA.accountId, starter, undefined, 'job_a');
    await usage.recordRender(ADA.accountId, '2026-11', 2048, 300, 'job_a');
    await usage.reserveRender(ADA.accountId, starter, undefined, 'job_b'); // still running
    // Last month's renders are not this month's.
    await usage.reserveRender(ADA.accountId, starter, '2026-10', 'job_old');
    expect(await report(ADA)).toEqual({
      plan: 'starter',
      period_start: '2026-11-01T00:00:00.000Z',
      period_end: '2026-12-01T00:00:00.000Z',
      renders_used: 2,
      renders_limit: 2000,
      renders_remaining: 1998,
      rate_limit: { limit: 60, window_seconds: 60, remaining: 59 },
      pdf_bytes: 2048,
      render_ms: 300,
    });
    // A plan the deployment dropped: held to the default plan.
    expect(await report({ ...ADA, plan: 'legacy' })).toMatchObject({
      plan: 'free',
      renders_limit: 100,
      renders_remaining: 98,
    });
  });
});
