/**
 * GET /v1/usage's use case (domain/accounts/usage-report.ts) as the composition root builds it
 * (functions/services.ts, usageReport), on the memory parts (test/helpers/memory-services.ts: the
 * memory usage store, which passes the store's contract, test/contract/usage.contract.ts, and the
 * memory renderer and bucket), after renders made as the API makes them (pdfJobs): what it
 * shows is what the account's renders used, stored and counted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RenderCommand } from '../../../functions/domain/renders/render-command.js';
import { pdfJobs, usageReport } from '../../../functions/services.js';
import { DEFAULT_PLANS } from '../../../functions/settings.js';
import { readTemplateDataText } from '../../../functions/templating/index.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';

let m: MemoryServices;
afterEach(async () => {
  await m?.close();
});

const render = (html: string): RenderCommand => ({
  source: { kind: 'inline', html, headerHtml: null, footerHtml: null },
  variables: readTemplateDataText('{}'),
  options: {},
  idempotency: null,
  mode: 'sync',
  webhookId: null,
});

const starter = DEFAULT_PLANS.starter as NonNullable<(typeof DEFAULT_PLANS)['starter']>;
const free = DEFAULT_PLANS.free as NonNullable<(typeof DEFAULT_PLANS)['free']>;

describe('the usage report', () => {
  it("shows this month's units, stored bytes, render time and rate window, from the renders made", async () => {
    m = memoryServices({ at: '2026-11-28T10:00:30.000Z' });
    const ada = caller('starter');
    const jobs = m.services.get(pdfJobs);
    const report = m.services.get(usageReport);
    const outcomes: string[] = [];
    for (const html of ['<p>one</p>', '<p>two {{ 1 / 0 }}</p>', '<p>three</p>']) {
      const command = render(html);
      await jobs.countRequest(ada, command);
      outcomes.push(
        await jobs.create(ada, command).then(
          (v) => v.job.job.status,
          (e: { code?: string }) => e.code ?? String(e),
        ),
      );
    }
    expect(outcomes).toEqual(['completed', 'INVALID_HTML_TEMPLATE', 'completed']);
    const completed = await m.jobs.list(ada.accountId, { limit: 10, offset: 0 });
    const done = completed.filter((j) => j.status === 'completed');
    expect(done).toHaveLength(2);
    const bytes = done.reduce((sum, j) => sum + (m.storage.object(j.object_key)?.body.byteLength ?? 0), 0);
    const ms = done.reduce((sum, j) => sum + (j.render_duration_ms ?? 0), 0);
    expect(await report(ada)).toEqual({
      plan: 'starter',
      period_start: '2026-11-01T00:00:00.000Z',
      period_end: '2026-12-01T00:00:00.000Z',
      // The failed render's unit was given back.
      renders_used: 2,
      renders_limit: starter.monthlyRenders,
      renders_remaining: starter.monthlyRenders - 2,
      // Three requests in this minute's window, the failed one too.
      rate_limit: {
        limit: starter.rendersPerMinute,
        window_seconds: 60,
        remaining: starter.rendersPerMinute - 3,
      },
      pdf_bytes: bytes,
      render_ms: ms,
      included_units: 2,
      overage_units: 0,
      overage_limit: 0,
      estimated_charge: null,
    });
    expect(bytes).toBeGreaterThan(0);
  });

  it('starts a new month from nothing, and holds a plan the deployment dropped to the default plan', async () => {
    m = memoryServices({ at: '2026-11-30T23:59:30.000Z' });
    const ada = caller('starter');
    await m.services.get(pdfJobs).create(ada, render('<p>late in November</p>'));
    const report = m.services.get(usageReport);
    expect(await report(ada)).toMatchObject({ renders_used: 1 });
    m.clock.advance(60_000);
    expect(await report(ada)).toMatchObject({
      period_start: '2026-12-01T00:00:00.000Z',
      renders_used: 0,
      renders_remaining: starter.monthlyRenders,
      pdf_bytes: 0,
    });
    expect(await report({ ...ada, plan: 'legacy' })).toMatchObject({
      plan: 'free',
      renders_limit: free.monthlyRenders,
      renders_remaining: free.monthlyRenders,
    });
  });
});
