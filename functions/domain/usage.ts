/**
 * Rate limit and plan quota, both as conditional ADD counters so that concurrent requests can
 * never overspend them (contract: "Usage, plans and limits").
 *
 * - Rate limit: render requests per account in fixed 60-second windows aligned to the UTC minute.
 * - Quota: completed renders per calendar month (UTC). A render holds one unit while it runs and
 *   gives it back if it fails.
 *
 * The store is a port; the DynamoDB adapter is functions/adapters/dynamodb/usage.ts.
 */
import type { Plan } from '../settings.js';

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

export interface UsageStore {
  /** The current window of the rate limit as it stands, without counting a request. */
  readRateLimit(accountId: string, plan: Plan): Promise<RateLimitState>;
  /** The counters of `month` (`yyyy-mm`); zeros for a month without renders. */
  readMonth(accountId: string, month: string): Promise<MonthUsage>;
  /** Count one render request; 429 USAGE_LIMIT_EXCEEDED when the window is full. */
  hitRateLimit(accountId: string, plan: Plan): Promise<RateLimitState>;
  /**
   * Count one template write (POST or PATCH /v1/templates) in its own window, apart from renders;
   * 429 USAGE_LIMIT_EXCEEDED once the window holds `perMinute`.
   */
  hitTemplateWriteLimit(accountId: string, perMinute: number): Promise<RateLimitState>;
  /** Hold one unit of this month's quota; 429 PLAN_QUOTA_EXCEEDED when none is left. Returns the month. */
  reserveRender(accountId: string, plan: Plan): Promise<string>;
  /** Give back a unit held by a render that failed. */
  releaseRender(accountId: string, month: string): Promise<void>;
  /** Add a completed render's output to the month's totals. */
  recordRender(accountId: string, month: string, pdfBytes: number, renderMs: number): Promise<void>;
}
