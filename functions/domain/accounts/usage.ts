/**
 * Rate limit and plan quota, both as conditional ADD counters so that concurrent requests can
 * never overspend them (contract: "Usage, plans and limits").
 *
 * - Rate limit: render requests per account in fixed 60-second windows aligned to the UTC minute.
 * - Quota: completed renders per calendar month (UTC). A render holds one unit while it runs and
 *   gives it back if it fails.
 * - Concurrency: renders running at once per account (`in_flight`, counted in the same write as
 *   the unit), refused past the plan's `concurrentRenders` with nothing held.
 *
 * After a crash the counters are worked out again from the month's jobs (`reconcileCounts`).
 *
 * The store is a port; the DynamoDB adapter is functions/adapters/dynamodb/usage.ts.
 */
import type { Plan } from '../../settings.js';

export interface RateLimitState {
  readonly limit: number;
  readonly remaining: number;
  /** Seconds left in the current window. */
  readonly resetSeconds: number;
}

/** The allowance of the plan named `name`; an account on a plan the deployment dropped gets the default. */
export const planAllowance = (plans: Readonly<Record<string, Plan>>, name: string, fallback: string): Plan =>
  plans[name] ?? (plans[fallback] as Plan);

/** Start (inclusive) and end (exclusive) of the calendar month (UTC) that `at` falls in. */
export const monthPeriod = (at: Date): { start: Date; end: Date } => ({
  start: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1)),
  end: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)),
});

/** The month's counters: units held (completed renders and those running) and completed output. */
export interface MonthUsage {
  readonly rendersUsed: number;
  readonly pdfBytes: number;
  readonly renderMs: number;
}

/**
 * Windows counted apart from renders' (issue 40), each per minute or per UTC day: previews (a
 * minute's and a day's), the editor's variable checks, and requests refused before any work (a
 * 401 or a 422 of a render route: they no longer spend the render window, but a flood of them is
 * bounded here, per account and per client address).
 */
export const COUNTED_WINDOWS = {
  previews: 'minute',
  previews_day: 'day',
  variable_checks: 'minute',
  refused: 'minute',
} as const satisfies Record<string, 'minute' | 'day'>;
export type CountedWindow = keyof typeof COUNTED_WINDOWS;

/** Whose window: an account's, or a client address's (API Gateway's source IP). */
export type WindowSubject = { readonly accountId: string } | { readonly ip: string };

export interface UsageStore {
  /** The current window of the rate limit as it stands, without counting a request. */
  readRateLimit(accountId: string, plan: Plan): Promise<RateLimitState>;
  /** The counters of `month` (`yyyy-mm`); zeros for a month without renders. */
  readMonth(accountId: string, month: string): Promise<MonthUsage>;
  /** Count one render request; 429 USAGE_LIMIT_EXCEEDED when the window is full. */
  hitRateLimit(accountId: string, plan: Plan): Promise<RateLimitState>;
  /**
   * Count one request in `subject`'s `window` (a minute's or a UTC day's, COUNTED_WINDOWS); 429
   * USAGE_LIMIT_EXCEEDED, naming `what`, once the window holds `limit`.
   */
  hitWindow(
    subject: WindowSubject,
    window: CountedWindow,
    limit: number,
    what: string,
  ): Promise<RateLimitState>;
  /**
   * Count one template write (POST or PATCH /v1/templates) in its own window, apart from renders;
   * 429 USAGE_LIMIT_EXCEEDED once the window holds `perMinute`.
   */
  hitTemplateWriteLimit(accountId: string, perMinute: number): Promise<RateLimitState>;
  /**
   * Count one webhook send on request (a test event or a redelivery) to endpoint `webhookId`, in a
   * window of the endpoint's and one of the account's; 429 USAGE_LIMIT_EXCEEDED with Retry-After
   * once either holds its limit (issue 38: an account cannot make the service send without bound).
   */
  hitWebhookSendLimit(
    accountId: string,
    webhookId: string,
    perMinute: { readonly endpoint: number; readonly account: number },
  ): Promise<void>;
  /**
   * Hold one unit of `month`'s quota (default: this month) and one of the account's concurrent
   * renders for job `jobId`; 429 PLAN_QUOTA_EXCEEDED when no unit is left, 429
   * CONCURRENCY_LIMIT_EXCEEDED when the plan's renders are all running. Returns the month. Every
   * unit move names its job and happens once for it, however often it is sent.
   */
  reserveRender(accountId: string, plan: Plan, month: string | undefined, jobId: string): Promise<string>;
  /**
   * Refuses (429, as reserveRender would) when the month's quota or the account's concurrent
   * renders are used up, from one read: a flood is refused before a job is written for it.
   * `seen`: the counters as read a moment earlier (readUnits, beside the rate limit's write),
   * trusted when they allow a reservation (the reservation decides anyway); a refusal they imply is
   * confirmed by a fresh read, so a unit given back since then is not refused.
   */
  checkReservable(
    accountId: string,
    plan: Plan,
    month: string,
    seen?: UnitCounters,
    /** false: a queued render's check (the quota only: the concurrency does not refuse it). @default true */
    running?: boolean,
  ): Promise<void>;
  /**
   * Hold one unit of `month`'s quota for job `jobId`, a job that waits in the render queue (a
   * batch's item): refused (429 PLAN_QUOTA_EXCEEDED) by the quota alone. A queued job is not a
   * running render, so the plan's concurrency neither refuses nor counts it (the queue runs an
   * account's jobs fairly among the others'). Released and recorded as reserveRender's units are.
   */
  reserveQueued(accountId: string, plan: Plan, month: string, jobId: string): Promise<string>;
  /**
   * Hold one unit of `month`'s quota for async render `jobId` (POST /v1/pdf, not a batch's item):
   * refused by the quota (429 PLAN_QUOTA_EXCEEDED) or, once the account has the plan's
   * `queuedRenders` async renders not yet ended, by its queue depth (429 QUEUE_DEPTH_EXCEEDED). The
   * plan's concurrency neither refuses nor counts it: it limits the renders a request waits for
   * (sync), while the render queue runs queued ones. Released and recorded as reserveRender's are.
   */
  reserveAsync(accountId: string, plan: Plan, month: string, jobId: string): Promise<string>;
  /**
   * Give back the unit job `jobId` holds (it failed), and its concurrent render; nothing if it holds
   * none. `held`: where the unit is most likely held (unitHeldBy), looked at first; a wrong or absent
   * guess only costs the store more conditional writes, never a second release.
   */
  releaseRender(accountId: string, month: string, jobId: string, held?: UnitHeld): Promise<void>;
  /**
   * Add job `jobId`'s output to the month's totals; it no longer runs (nothing if it holds no unit).
   * `held` as for releaseRender.
   */
  recordRender(
    accountId: string,
    month: string,
    pdfBytes: number,
    renderMs: number,
    jobId: string,
    held?: UnitHeld,
  ): Promise<void>;
  /** The month's two unit counters as stored (undefined: never written), read consistently. */
  readUnits(accountId: string, month: string): Promise<UnitCounters>;
  /**
   * Sets the counters to `next`, and the jobs holding a unit to `holders` (the running ones), only
   * if the counters still are `seen`; false if they moved meanwhile.
   */
  setUnits(
    accountId: string,
    month: string,
    seen: UnitCounters,
    next: Required<UnitCounters>,
    holders?: readonly string[],
    queuedHolders?: readonly string[],
    asyncHolders?: readonly string[],
  ): Promise<boolean>;
}

export interface UnitCounters {
  /** Units held: completed renders and running ones. */
  readonly rendersUsed?: number | undefined;
  /** Renders running. */
  readonly inFlight?: number | undefined;
}

/** How a job of the month counts when its counters are worked out again. */
export type JobCount = 'completed' | 'running' | 'ended' | 'expired' | 'unsure';

export interface CountedJob {
  readonly id?: string;
  readonly status: 'pending' | 'rendering' | 'completed' | 'failed' | 'cancelled';
  readonly unit?: 'reserving' | 'held' | 'refunding' | undefined;
  readonly lease_until?: number | undefined;
  /** A batch's item: its unit was held by reserveQueued, so it is not counted as running. */
  readonly batch_id?: string | null | undefined;
  /** An async render (not a batch's item, not a merge): its unit was held by reserveAsync. */
  readonly mode?: 'sync' | 'async' | undefined;
  readonly kind?: 'render' | 'merge' | undefined;
}

/**
 * How one job counts at `now`:
 * - completed: its unit stays used;
 * - running: pending or rendering under a live lease, its unit held;
 * - ended: failed and settled (its unit came back);
 * - expired: its holder is gone (an open job past its lease, or a failed one whose refund was not
 *   confirmed in time): the sweeper fails it and it holds nothing;
 * - unsure: a live job whose unit may or may not be counted yet (reserving, or refunding within
 *   its grace): the month cannot be worked out now; the next sweep tries again.
 */
export const countJob = (job: CountedJob, now: number): JobCount => {
  if (job.status === 'completed') return 'completed';
  const live = job.lease_until !== undefined && job.lease_until >= now;
  // A cancelled job gives its unit back as a failed one does.
  if (job.status === 'failed' || job.status === 'cancelled') {
    if (job.unit !== 'refunding') return 'ended';
    return live ? 'unsure' : 'expired';
  }
  if (!live) return 'expired';
  return job.unit === 'held' ? 'running' : 'unsure';
};

/**
 * The counters a month should hold, from its jobs: units = completed + running, in flight =
 * running but for batch items (queued: they hold a unit, not a running render); undefined while
 * some job is unsure.
 */
export const reconcileCounts = (
  jobs: readonly CountedJob[],
  now: number,
):
  | {
      readonly counts: Required<UnitCounters>;
      readonly expired: number;
      readonly holders: readonly string[];
      readonly queuedHolders: readonly string[];
      readonly asyncHolders: readonly string[];
    }
  | undefined => {
  let completed = 0;
  let expired = 0;
  const holders: string[] = [];
  const queuedHolders: string[] = [];
  const asyncHolders: string[] = [];
  let running = 0;
  let queued = 0;
  for (const job of jobs) {
    const count = countJob(job, now);
    if (count === 'unsure') return undefined;
    if (count === 'completed') completed++;
    else if (count === 'running' && job.batch_id) {
      queued++;
      if (job.id !== undefined) queuedHolders.push(job.id);
    } else if (count === 'running' && isQueuedAsync(job)) {
      queued++;
      if (job.id !== undefined) asyncHolders.push(job.id);
    } else if (count === 'running') {
      running++;
      if (job.id !== undefined) holders.push(job.id);
    } else if (count === 'expired') expired++;
  }
  return {
    counts: { rendersUsed: completed + running + queued, inFlight: running },
    expired,
    holders,
    queuedHolders,
    asyncHolders,
  };
};

/** A job whose unit reserveAsync holds: an async render or merge of its own (not a batch's item). */
export const isQueuedAsync = (job: Pick<CountedJob, 'mode' | 'kind' | 'batch_id'>): boolean =>
  job.mode === 'async' && !job.batch_id;

/**
 * Where a job's unit is held: `running` (reserveRender: a sync render, with its running render),
 * `queued` (reserveQueued: a batch's item) or `async` (reserveAsync).
 */
export type UnitHeld = 'running' | 'queued' | 'async';

/**
 * Where job's unit is held, as its reservation put it (countUnits counts it the same way). A store
 * looks there first: a batch's item recorded by trying `running`, then `async`, then `queued` cost
 * two refused conditional writes of the month's usage item per invoice (issue 43).
 */
export const unitHeldBy = (job: Pick<CountedJob, 'mode' | 'kind' | 'batch_id'>): UnitHeld =>
  job.batch_id ? 'queued' : isQueuedAsync(job) ? 'async' : 'running';
