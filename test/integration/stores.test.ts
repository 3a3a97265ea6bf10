/**
 * The data layer against a real DynamoDB API (dynalite), without Chromium: job transitions,
 * paging, usage counters, idempotency claims, and the two steps of a render (accept, execute)
 * each on its own.
 */
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createIdempotencyStore } from '../../functions/adapters/dynamodb/idempotency.js';
import { createJobStore } from '../../functions/adapters/dynamodb/jobs.js';
import { createTemplateStore } from '../../functions/adapters/dynamodb/templates.js';
import { createUsageStore } from '../../functions/adapters/dynamodb/usage.js';
import { createMemoryPdfStorage } from '../../functions/adapters/memory/pdf-storage.js';
import { createMemoryRenderer } from '../../functions/adapters/memory/renderer.js';
import type { Renderer } from '../../functions/domain/common/ports.js';
import type { Principal } from '../../functions/domain/common/principal.js';
import { createJobLifecycle } from '../../functions/domain/jobs/job-lifecycle.js';
import { createJobPresenter } from '../../functions/domain/jobs/job-view.js';
import type { Job } from '../../functions/domain/jobs/jobs.js';
import { createPdfJobs } from '../../functions/domain/renders/pdf-jobs.js';
import { createRenderCall } from '../../functions/domain/renders/render-call.js';
import { createTemplateResolver } from '../../functions/domain/templates/render-template.js';
import { INTEGER_SETTINGS, MAX_LIST_OFFSET } from '../../functions/settings.js';
import { readTemplateDataText } from '../../functions/templating/index.js';
import { templateParser } from '../../functions/templating/parse-pool.js';
import { testClock, useTable } from '../helpers/dynalite.js';
import { rejection } from '../helpers/rejection.js';

const table = useTable();
const clock = testClock('2026-11-25T10:00:30.000Z');
let accounts = 0;
const RECORD_RETENTION = { recordRetentionSeconds: 60 * 86_400 };
const newAccount = () => `acct-${++accounts}`;

describe('job store', () => {
  const jobs = () => createJobStore(table.db, table.name, clock, RECORD_RETENTION);
  const newJob = (accountId: string, id: string) =>
    jobs().create({
      id,
      account_id: accountId,
      template_id: null,
      template_version: null,
      object_key: `pdf/${accountId}/${id}.pdf`,
    });

  it('moves pending → rendering → completed, and never backwards', async () => {
    const account = newAccount();
    const pending = await newJob(account, 'job_01');
    expect(pending).toMatchObject({ status: 'pending', created_at: '2026-11-25T10:00:30.000Z' });
    const rendering = await jobs().markRendering(pending);
    expect(rendering.status).toBe('rendering');
    const completed = await jobs().complete(rendering, {
      fileSizeBytes: 10,
      pageCount: 2,
      renderDurationMs: 30,
    });
    expect(completed).toMatchObject({
      status: 'completed',
      file_size_bytes: 10,
      page_count: 2,
      render_duration_ms: 30,
    });
    await expect(jobs().fail(completed, { code: 'X', message: 'x' })).rejects.toMatchObject({
      name: 'ConditionalCheckFailedException',
    });
    await expect(jobs().markRendering(completed)).rejects.toMatchObject({
      name: 'ConditionalCheckFailedException',
    });
    expect((await jobs().get(account, 'job_01'))?.status).toBe('completed');
  });

  it('fails from pending or rendering, keeping the error', async () => {
    const account = newAccount();
    const failed = await jobs().fail(await newJob(account, 'job_01'), {
      code: 'PDF_RENDERING_FAILED',
      message: 'no',
    });
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'PDF_RENDERING_FAILED', message: 'no' },
    });
    expect(await jobs().get(account, 'job_missing')).toBeUndefined();
  });

  it('lists newest first, page by page, with nothing of other accounts', async () => {
    const account = newAccount();
    const ids = Array.from({ length: 25 }, (_, i) => `job_${String(i).padStart(3, '0')}`);
    for (const id of ids) await newJob(account, id);
    await newJob(newAccount(), 'job_999');
    const newestFirst = [...ids].reverse();
    const page = async (limit: number, offset: number) =>
      (await jobs().list(account, { limit, offset })).map((j: Job) => j.id);
    expect(await page(20, 0)).toEqual(newestFirst.slice(0, 20));
    expect(await page(10, 20)).toEqual(newestFirst.slice(20));
    expect(await page(3, 7)).toEqual(newestFirst.slice(7, 10));
    expect(await page(5, 25)).toEqual([]);
    expect(await page(5, MAX_LIST_OFFSET)).toEqual([]);
  });

  it('writes expires_at and treats a record past it as gone, though TTL has not deleted it', async () => {
    const own = testClock('2026-11-25T10:00:00.000Z');
    const store = createJobStore(table.db, table.name, own, { recordRetentionSeconds: 3600 });
    const account = newAccount();
    const make = (id: string) =>
      store.create({
        id,
        account_id: account,
        template_id: null,
        template_version: null,
        object_key: `pdf/${account}/${id}.pdf`,
      });
    await make('job_01');
    own.advance(1800_000);
    await make('job_02');
    await make('job_03');
    const stored = await table.db.send(
      new GetCommand({ TableName: table.name, Key: { PK: `ACCOUNT#${account}`, SK: 'JOB#job_01' } }),
    );
    expect(stored.Item?.expires_at).toBe(Date.parse('2026-11-25T11:00:00.000Z') / 1000);
    const ids = async (limit: number, offset: number) =>
      (await store.list(account, { limit, offset })).map((j: Job) => j.id);
    expect(await ids(10, 0)).toEqual(['job_03', 'job_02', 'job_01']);

    own.advance(1800_000); // job_01's record expires now
    expect(await store.get(account, 'job_01')).toBeUndefined();
    expect((await store.get(account, 'job_02'))?.id).toBe('job_02');
    expect(await ids(10, 0)).toEqual(['job_03', 'job_02']);
    expect(await ids(1, 1)).toEqual(['job_02']);
    expect(await ids(10, 2)).toEqual([]);
  });
});

describe('usage counters', () => {
  const usage = () => createUsageStore(table.db, table.name, clock);
  const plan = { monthlyRenders: 3, rendersPerMinute: 2 };

  it('counts render requests per clock minute and refuses past the limit with the window', async () => {
    const account = newAccount();
    clock.set('2026-11-25T10:00:30.000Z');
    expect(await usage().hitRateLimit(account, plan)).toEqual({ limit: 2, remaining: 1, resetSeconds: 30 });
    expect(await usage().hitRateLimit(account, plan)).toEqual({ limit: 2, remaining: 0, resetSeconds: 30 });
    const refused = await rejection(usage().hitRateLimit(account, plan));
    expect(refused).toMatchObject({
      code: 'USAGE_LIMIT_EXCEEDED',
      retryAfterSeconds: 30,
      rateLimit: { limit: 2, remaining: 0, resetSeconds: 30 },
    });
    clock.set('2026-11-25T10:01:00.000Z');
    expect(await usage().hitRateLimit(account, plan)).toEqual({ limit: 2, remaining: 1, resetSeconds: 60 });
  });

  it('holds quota units, gives failed ones back, and refuses when the month is used up', async () => {
    const account = newAccount();
    clock.set('2026-11-25T10:00:00.000Z');
    const month = await usage().reserveRender(account, plan, undefined, 'job_a');
    expect(month).toBe('2026-11');
    await usage().reserveRender(account, plan, undefined, 'job_b');
    await usage().releaseRender(account, month, 'job_b');
    await usage().reserveRender(account, plan, undefined, 'job_c');
    await usage().reserveRender(account, plan, undefined, 'job_d');
    const refused = await rejection(usage().reserveRender(account, plan, undefined, 'job_e'));
    expect(refused.code).toBe('PLAN_QUOTA_EXCEEDED');
    // Seconds to 2026-12-01T00:00:00Z.
    expect(refused.retryAfterSeconds).toBe(6 * 86_400 - 10 * 3600);
    clock.set('2026-12-01T00:00:00.000Z');
    expect(await usage().reserveRender(account, plan, undefined, 'job_f')).toBe('2026-12');
  });

  it("moves each job's unit once, however often the move is sent (a retry after a write that landed)", async () => {
    const account = newAccount();
    clock.set('2026-11-25T10:00:00.000Z');
    const month = await usage().reserveRender(account, plan, undefined, 'job_twice');
    // Sent again (the SDK's retry after a timeout): the job holds its one unit, nothing more.
    expect(await usage().reserveRender(account, plan, undefined, 'job_twice')).toBe(month);
    expect(await usage().readUnits(account, month)).toEqual({ rendersUsed: 1, inFlight: 1 });
    await usage().reserveRender(account, plan, undefined, 'job_failed');
    await usage().releaseRender(account, month, 'job_failed');
    await usage().releaseRender(account, month, 'job_failed');
    // A job that never held a unit gives nothing back.
    await usage().releaseRender(account, month, 'job_never');
    expect(await usage().readUnits(account, month)).toEqual({ rendersUsed: 1, inFlight: 1 });
    await usage().recordRender(account, month, 100, 10, 'job_twice');
    await usage().recordRender(account, month, 100, 10, 'job_twice');
    expect(await usage().readUnits(account, month)).toEqual({ rendersUsed: 1, inFlight: 0 });
    expect(await usage().readMonth(account, month)).toEqual({ rendersUsed: 1, pdfBytes: 100, renderMs: 10 });
  });

  it('checks a reservation against counters read earlier: trusted when they allow, a refusal read again', async () => {
    const account = newAccount();
    clock.set('2026-11-25T10:00:00.000Z');
    const month = await usage().reserveRender(account, plan, undefined, 'job_early_a');
    const early = await usage().readUnits(account, month);
    // Units used up since the early read: it allowed, so the check passes (the reservation decides).
    await usage().reserveRender(account, plan, undefined, 'job_early_b');
    await usage().reserveRender(account, plan, undefined, 'job_early_c');
    await expect(usage().checkReservable(account, plan, month, early)).resolves.toBeUndefined();
    expect((await rejection(usage().checkReservable(account, plan, month))).code).toBe('PLAN_QUOTA_EXCEEDED');
    const full = await usage().readUnits(account, month);
    // A unit given back since a read that saw none left: the fresh read allows it.
    await usage().releaseRender(account, month, 'job_early_c');
    await expect(usage().checkReservable(account, plan, month, full)).resolves.toBeUndefined();
    // Still none left: the refusal stands.
    await usage().reserveRender(account, plan, undefined, 'job_early_d');
    const refused = await rejection(usage().checkReservable(account, plan, month, full));
    expect(refused.code).toBe('PLAN_QUOTA_EXCEEDED');
    // The concurrency the same way: a running render ended since is not refused.
    const running = { ...plan, monthlyRenders: 100, concurrentRenders: 1 };
    const other = newAccount();
    await usage().reserveRender(other, running, month, 'job_run_a');
    const busy = await usage().readUnits(other, month);
    expect((await rejection(usage().checkReservable(other, running, month, busy))).code).toBe(
      'CONCURRENCY_LIMIT_EXCEEDED',
    );
    await usage().recordRender(other, month, 1, 1, 'job_run_a');
    await expect(usage().checkReservable(other, running, month, busy)).resolves.toBeUndefined();
  });

  it('refuses exactly past the quota under concurrent reservations', async () => {
    const account = newAccount();
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, n) => usage().reserveRender(account, plan, undefined, `job_${n}`)),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
  });
});

describe('idempotency claims', () => {
  const store = (leaseMs = 60_000) => createIdempotencyStore(table.db, table.name, clock, leaseMs);

  it('claims a key once, replays the finished answer, and refuses it for another body', async () => {
    const account = newAccount();
    expect(await store().claim(account, 'k1', 'hash-a')).toEqual({ kind: 'claimed' });
    await store().finish(account, 'k1', { job_id: 'job_1', error: null });
    expect(await store().claim(account, 'k1', 'hash-a')).toEqual({
      kind: 'replay',
      answer: { job_id: 'job_1', error: null },
    });
    expect((await rejection(store().claim(account, 'k1', 'hash-b'))).code).toBe('IDEMPOTENCY_KEY_REUSED');
    // Keys are per account.
    expect(await store().claim(newAccount(), 'k1', 'hash-b')).toEqual({ kind: 'claimed' });
  });

  it('lets a released claim be taken again, and a claim whose lease ran out be taken over', async () => {
    const account = newAccount();
    await store().claim(account, 'k2', 'h');
    await store().release(account, 'k2');
    expect(await store().claim(account, 'k2', 'h')).toEqual({ kind: 'claimed' });
    clock.advance(120_000); // past the 60 s lease: the first claimer is presumed dead
    expect(await store().claim(account, 'k2', 'h')).toEqual({ kind: 'claimed' });
  });
});

describe('a render in two steps', () => {
  const principal = (plan: string): Principal => ({
    accountId: newAccount(),
    email: undefined,
    credential: 'session',
    plan,
  });
  const limits = {
    renderBudgetMs: 5000,
    asyncRenderBudgetMs: INTEGER_SETTINGS.asyncRenderBudgetMs.default,
    jobLeaseSeconds: INTEGER_SETTINGS.jobLeaseSeconds.default,
    asyncQueueLeaseSeconds: INTEGER_SETTINGS.asyncQueueLeaseSeconds.default,
    maxRenderedHtmlBytes: 1000,
    maxPdfBytes: 1000,
    maxPdfPages: 10,
  };
  // The memory bucket (held to the storage contract with S3's, test/contract): what is rendered is stored.
  const bucket = createMemoryPdfStorage({ downloadUrlTtlSeconds: 900, uploadUrlTtlSeconds: 60, clock });
  afterAll(() => bucket.close());
  const pdfJobs = (renderer: Renderer, db: DynamoDBDocumentClient = table.db) => {
    const jobs = createJobStore(db, table.name, clock, RECORD_RETENTION);
    const usage = createUsageStore(db, table.name, clock);
    const templates = createTemplateStore(db, table.name, clock);
    const storage = bucket;
    const onFault = () => {};
    return createPdfJobs({
      jobs,
      usage,
      templates,
      idempotency: createIdempotencyStore(db, table.name, clock, 60_000),
      lifecycle: createJobLifecycle({ jobs, usage, clock, limits, onFault }),
      render: createRenderCall({ storage, renderer, limits, onFault }),
      present: createJobPresenter({ storage, clock, pdfRetentionDays: 30 }),
      resolver: createTemplateResolver({ templates, parser: templateParser, limits }),
      clock,
      plans: { free: { monthlyRenders: 1, rendersPerMinute: 10 } },
      defaultPlan: 'free',
      limits,
      onFault,
    });
  };
  const order = {
    source: { kind: 'inline' as const, html: '<p>{{ n }}</p>', headerHtml: null, footerHtml: null },
    variables: readTemplateDataText('{"n": 1}'),
    options: {
      pdf: {
        format: 'A4' as const,
        landscape: false,
        printBackground: true,
        margins: { top: 0.4, right: 0.4, bottom: 0.4, left: 0.4 },
      },
      pageLoad: { waitUntil: 'load' as const, timeoutMs: 5000, waitForSelector: null },
    },
  };
  const unreachable = {
    render: async (): Promise<never> => {
      throw new Error('the renderer is down');
    },
  };

  it('sends the independent calls of its bookkeeping side by side', async () => {
    /** Every call the stores send, with when it was sent and answered. */
    const calls: { input: Record<string, unknown>; sent: number; answered?: number }[] = [];
    const observed = {
      send: async (command: { input: Record<string, unknown> }) => {
        const call: (typeof calls)[number] = { input: command.input, sent: performance.now() };
        calls.push(call);
        try {
          return await table.db.send(command as never);
        } finally {
          call.answered = performance.now();
        }
      },
    } as unknown as DynamoDBDocumentClient;
    const jobsOf = pdfJobs(createMemoryRenderer(), observed);
    const sk = (call: (typeof calls)[number]) =>
      String((call.input.Key as Record<string, unknown>)?.SK ?? '');
    const sideBySide = (a: (typeof calls)[number], b: (typeof calls)[number]) =>
      a.sent < (b.answered ?? Number.POSITIVE_INFINITY) && b.sent < (a.answered ?? Number.POSITIVE_INFINITY);
    const command = {
      source: order.source,
      variables: order.variables,
      options: {},
      idempotency: null,
      mode: 'sync' as const,
      webhookId: null,
    };

    // The month's counters are read beside the rate limit's write, and not again before the job.
    const caller = principal('free');
    await jobsOf.countRequest(caller, command);
    const rate = calls.find((c) => sk(c).startsWith('RATE#'));
    const month = calls.find((c) => sk(c).startsWith('USAGE#') && c.input.UpdateExpression === undefined);
    expect(rate && month && sideBySide(rate, month)).toBe(true);
    calls.length = 0;
    await jobsOf.create(caller, command);
    const reads = calls.filter((c) => c.input.UpdateExpression === undefined && sk(c).startsWith('USAGE#'));
    expect(reads).toEqual([]);

    // With a key: its answer is written beside the month's totals.
    const keyed = principal('free');
    const withKey = { ...command, idempotency: { key: 'side-by-side', bodyHash: 'hash' } };
    await jobsOf.countRequest(keyed, withKey);
    calls.length = 0;
    const { job } = await jobsOf.create(keyed, withKey);
    expect(job.job.status).toBe('completed');
    const totals = calls.find((c) => String(c.input.UpdateExpression).includes('pdf_bytes'));
    const answer = calls.find(
      (c) => sk(c).startsWith('IDEMPOTENCY#') && c.input.UpdateExpression !== undefined,
    );
    expect(totals && answer && sideBySide(totals, answer)).toBe(true);
    // Counted once, with the stored PDF's size and the render's time; the answer replays the job.
    const stored = bucket.object(job.job.object_key)?.body;
    expect(stored && Buffer.from(stored).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const recorded = await createJobStore(table.db, table.name, clock, RECORD_RETENTION).get(
      keyed.accountId,
      job.job.id,
    );
    const usage = createUsageStore(table.db, table.name, clock);
    expect(await usage.readMonth(keyed.accountId, clock.now().toISOString().slice(0, 7))).toEqual({
      rendersUsed: 1,
      pdfBytes: stored?.byteLength,
      renderMs: recorded?.render_duration_ms,
    });
    const replayed = await jobsOf.create(keyed, withKey);
    expect(replayed).toMatchObject({ replayed: true, job: { job: { id: job.job.id } } });
  });

  it('accept parses the template, holds the unit and creates a pending job, without rendering', async () => {
    const caller = principal('free');
    const accepted = await pdfJobs(unreachable).accept(caller, order);
    expect(accepted.job).toMatchObject({ status: 'pending', account_id: caller.accountId });
    expect(accepted.month).toBe(clock.now().toISOString().slice(0, 7));
    // The plan's one unit is held: a second accept is refused, and creates no job.
    expect((await rejection(pdfJobs(unreachable).accept(caller, order))).code).toBe('PLAN_QUOTA_EXCEEDED');
    const listed = await createJobStore(table.db, table.name, clock, RECORD_RETENTION).list(
      caller.accountId,
      {
        limit: 10,
        offset: 0,
      },
    );
    expect(listed.map((j) => j.id)).toEqual([accepted.job.id]);
  });

  it('accept refuses a template that does not parse before holding anything', async () => {
    const caller = principal('free');
    const e = await rejection(
      pdfJobs(unreachable).accept(caller, { ...order, source: { ...order.source, html: '{% if %}' } }),
    );
    expect(e.code).toBe('INVALID_HTML_TEMPLATE');
    // The unit is still there.
    await expect(pdfJobs(unreachable).accept(caller, order)).resolves.toBeDefined();
  });

  it('execute fails the job and gives the unit back when the renderer cannot be reached', async () => {
    const caller = principal('free');
    const jobsOf = pdfJobs(unreachable);
    const accepted = await jobsOf.accept(caller, order);
    const e = await rejection(jobsOf.execute(accepted));
    expect(e).toMatchObject({ code: 'PDF_RENDERING_FAILED', jobId: accepted.job.id });
    const job = await createJobStore(table.db, table.name, clock, RECORD_RETENTION).get(
      caller.accountId,
      accepted.job.id,
    );
    expect(job).toMatchObject({ status: 'failed', error: { code: 'PDF_RENDERING_FAILED' } });
    await expect(jobsOf.accept(caller, order)).resolves.toBeDefined();
  });
});
