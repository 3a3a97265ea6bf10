/**
 * Pay per use (issue 39) as the composition root builds it, on the memory parts: a plan with
 * overage renders past its quota and the usage report shows the overage and the charge; a plan
 * without keeps its 429; every completed job has one ledger entry (also one a crash left out, once
 * the sweeper reconciles its month); and the publisher puts one usage event per entry, at least
 * once, with the job id as the dedupe key.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryUsageBus } from '../../../functions/adapters/memory/usage-bus.js';
import {
  createUsageEventPublisher,
  type UsageEvent,
} from '../../../functions/domain/accounts/usage-events.js';
import type { Job } from '../../../functions/domain/jobs/jobs.js';
import type { RenderCommand } from '../../../functions/domain/renders/render-command.js';
import { asyncRenders, pdfJobs, sweeper, usageReport } from '../../../functions/services.js';
import { DEFAULT_PLANS, type Plan } from '../../../functions/settings.js';
import { readTemplateDataText } from '../../../functions/templating/index.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';

let m: MemoryServices;
afterEach(async () => {
  await m?.close();
});

const MONTH = '2026-11';
const render = (html: string): RenderCommand => ({
  source: { kind: 'inline', html, headerHtml: null, footerHtml: null },
  variables: readTemplateDataText('{}'),
  options: {},
  idempotency: null,
  mode: 'sync',
  webhookId: null,
});

const PLANS: Record<string, Plan> = {
  ...DEFAULT_PLANS,
  metered: {
    monthlyRenders: 2,
    rendersPerMinute: 100,
    overage: { allowed: true, max_units: 2 },
    monthly_price: 10,
    unit_price_overage: 0.1,
    currency: 'EUR',
  },
  capped: { monthlyRenders: 2, rendersPerMinute: 100, monthly_price: 5 },
};

const outcome = (p: Promise<{ job: { job: { status: string } } }>) =>
  p.then(
    (v) => v.job.job.status,
    (e: { code?: string }) => e.code ?? String(e),
  );

describe('plans with overage', () => {
  it('renders past the quota up to the overage, shows included and overage units and the charge, then refuses', async () => {
    m = memoryServices({ settings: { plans: PLANS } });
    const ada = caller('metered');
    const jobs = m.services.get(pdfJobs);
    const outcomes = [];
    for (let i = 0; i < 5; i++) outcomes.push(await outcome(jobs.create(ada, render(`<p>${i}</p>`))));
    expect(outcomes).toEqual(['completed', 'completed', 'completed', 'completed', 'PLAN_QUOTA_EXCEEDED']);
    expect(await m.services.get(usageReport)(ada)).toMatchObject({
      renders_used: 4,
      renders_limit: 2,
      renders_remaining: 0,
      included_units: 2,
      overage_units: 2,
      overage_limit: 2,
      // 10 + 2 × 0.1, without binary noise.
      estimated_charge: {
        currency: 'EUR',
        monthly_price: 10,
        unit_price_overage: 0.1,
        overage_amount: 0.2,
        total: 10.2,
      },
    });
    expect(await m.ledger(ada.accountId)).toMatchObject({ completed: 4, billed: 4, billedAgrees: true });
  });

  it('keeps the wall on a plan without overage: 429 at the quota, its price shown without overage', async () => {
    m = memoryServices({ settings: { plans: PLANS } });
    const bob = caller('capped');
    const jobs = m.services.get(pdfJobs);
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push(await outcome(jobs.create(bob, render(`<p>${i}</p>`))));
    expect(outcomes).toEqual(['completed', 'completed', 'PLAN_QUOTA_EXCEEDED']);
    expect(await m.services.get(usageReport)(bob)).toMatchObject({
      renders_used: 2,
      included_units: 2,
      overage_units: 0,
      overage_limit: 0,
      estimated_charge: { currency: 'USD', monthly_price: 5, overage_amount: 0, total: 5 },
    });
  });
});

describe('the usage ledger', () => {
  it('holds one entry per completed job, none for a failed one, with its pages and bytes', async () => {
    m = memoryServices();
    const ada = caller('starter');
    const jobs = m.services.get(pdfJobs);
    await jobs.create(ada, render('<p>one</p>'));
    await outcome(jobs.create(ada, render('<p>{{ 1 / 0 }}</p>')));
    await jobs.create(ada, render('<p>two</p><p style="page-break-before: always">page 2</p>'));
    const entries = await m.usageLedger.ofAccountMonth(ada.accountId, MONTH);
    const completed = (await m.jobs.list(ada.accountId, { limit: 10, offset: 0 })).filter(
      (j) => j.status === 'completed',
    );
    expect(entries.map((e) => e.job_id).sort()).toEqual(completed.map((j) => j.id).sort());
    for (const job of completed) {
      expect(entries.find((e) => e.job_id === job.id)).toEqual({
        account_id: ada.accountId,
        job_id: job.id,
        month: MONTH,
        kind: 'render',
        units: 1,
        pages: job.page_count,
        bytes: job.file_size_bytes,
        render_ms: job.render_duration_ms,
        batch_id: null,
        completed_at: job.completed_at,
      });
    }
  });

  it('records a completed job a crash left out of it when the sweeper reconciles the month', async () => {
    m = memoryServices();
    const ada = caller();
    const jobs = m.services.get(pdfJobs);
    await jobs.create(ada, render('<p>before</p>'));
    // A render whose process died after its job completed and before its unit was recorded, and
    // another that died mid-render (its lease runs out: the sweeper reconciles their month).
    const [done, dying] = await Promise.all(
      [0, 1].map(async (i) => {
        const created = await m.jobs.create(
          {
            id: `job_01JBQ5Y8S1W8M3ZT6YDV1KQ0X${i}`,
            account_id: ada.accountId,
            template_id: null,
            template_version: null,
            object_key: `pdf/${ada.accountId}/x${i}.pdf`,
            mode: 'sync',
            webhook_id: null,
            batch_id: null,
          },
          { month: MONTH, leaseUntil: m.clock.now().getTime() + 1000 },
        );
        await m.usage.reserveRender(ada.accountId, m.settings.plans.free as Plan, MONTH, created.id);
        return (await m.jobs.markRendering(created, m.clock.now().getTime() + 1000)) as Job;
      }),
    );
    await m.jobs.complete(
      done as Job,
      {
        ok: true,
        fileSizeBytes: 900,
        pageCount: 1,
        renderDurationMs: 12,
      } as never,
    );
    expect(dying?.status).toBe('rendering');
    expect(await m.ledger(ada.accountId)).toMatchObject({ completed: 2, billed: 1, billedAgrees: false });
    m.clock.advance(m.settings.jobLeaseSeconds * 1000 + 2000);
    expect(await m.services.get(sweeper).sweep()).toMatchObject({ reconciled: 1 });
    expect(await m.ledger(ada.accountId)).toMatchObject({
      completed: 2,
      failed: 1,
      rendersUsed: 2,
      billed: 2,
      billedAgrees: true,
    });
  });
});

describe('the usage ledger after a crash mid-queue', () => {
  it('records a completed async job a crash left out of it when the sweeper queues its month’s others again', async () => {
    m = memoryServices();
    const ada = caller();
    const renders = m.services.get(asyncRenders);
    const command: RenderCommand = { ...render('<p>queued</p>'), mode: 'async' };
    const first = await renders.create(ada, command);
    const second = await renders.create(ada, command);
    m.renderQueue.drain(); // both taken by a consumer that dies
    const claim = async (id: string) => {
      const queued = (await m.jobs.get(ada.accountId, id, true)) as Job;
      const now = m.clock.now().getTime();
      return (await m.jobs.claim(queued, now + m.settings.jobLeaseSeconds * 1000, now)) as Job;
    };
    // The first completed, and the process died before its unit was recorded; the second died mid-render.
    await m.jobs.complete(await claim(first.job.job.id), {
      ok: true,
      fileSizeBytes: 700,
      pageCount: 1,
      renderDurationMs: 9,
    } as never);
    await claim(second.job.job.id);
    expect(await m.ledger(ada.accountId)).toMatchObject({ completed: 1, billed: 0 });
    m.clock.advance(m.settings.jobLeaseSeconds * 1000 + 1);
    // The second goes back to the queue (its month is not reconciled), and the ledger catches up.
    expect(await m.services.get(sweeper).sweep()).toMatchObject({ requeued: 1, reconciled: 0 });
    expect(await m.ledger(ada.accountId)).toMatchObject({ completed: 1, billed: 1, billedAgrees: true });
  });
});

describe('usage events', () => {
  it('publishes one event per entry, each once it is taken, with the job id as the dedupe key', async () => {
    m = memoryServices();
    const ada = caller('starter');
    for (let i = 0; i < 12; i++) await m.services.get(pdfJobs).create(ada, render(`<p>${i}</p>`));
    const bus = createMemoryUsageBus();
    // A bus that refuses the third event it is given, once: it is published again next pass.
    let refusedOnce = false;
    const flaky = {
      publish: async (events: readonly UsageEvent[]) => {
        const taken = await bus.publish(events.filter((_, i) => refusedOnce || i !== 2));
        const answer = events.map((_, i) => refusedOnce || i !== 2);
        refusedOnce = true;
        return taken.length === answer.filter(Boolean).length ? answer : events.map(() => false);
      },
    };
    const publisher = createUsageEventPublisher({ ledger: m.usageLedger, bus: flaky, onFault: () => {} });
    expect(await publisher.publish()).toEqual({ published: 11, refused: 1 });
    expect(await publisher.publish()).toEqual({ published: 1, refused: 0 });
    expect(await publisher.publish()).toEqual({ published: 0, refused: 0 });
    const entries = await m.usageLedger.ofAccountMonth(ada.accountId, MONTH);
    expect(bus.events.map((e) => e.detail.dedupe_key).sort()).toEqual(entries.map((e) => e.job_id).sort());
    expect(bus.events.every((e) => e.detail.dedupe_key === e.detail.job_id)).toBe(true);
    expect(bus.events[0]).toMatchObject({
      source: 'pdf-service.usage',
      'detail-type': 'Usage Recorded',
      detail: { version: 1, account_id: ada.accountId, month: MONTH, units: 1 },
    });
  });
});
