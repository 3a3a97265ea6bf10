/**
 * What GET /v1/usage answers (contract: "Usage, plans and limits"): the account's plan, this
 * calendar month's quota and totals, and the rate limit's current window. Reading it counts
 * against nothing.
 */
import type { Plan } from '../../settings.js';

import { isoNow, monthOf } from '../common/clock.js';
import type { Clock } from '../common/ports.js';
import type { Principal } from '../common/principal.js';
import { monthPeriod, planAllowance, type UsageStore } from './usage.js';

/** The rate limit's windows are fixed clock minutes. */
export const RATE_WINDOW_SECONDS = 60;

export interface UsageReport {
  readonly plan: string;
  readonly period_start: string;
  readonly period_end: string;
  /** Units of the month's quota in use: completed renders, and any render still running. */
  readonly renders_used: number;
  readonly renders_limit: number;
  readonly renders_remaining: number;
  readonly rate_limit: {
    readonly limit: number;
    readonly window_seconds: number;
    readonly remaining: number;
  };
  /** Sizes of this month's completed PDFs. */
  readonly pdf_bytes: number;
  /** Render durations of this month's completed PDFs. */
  readonly render_ms: number;
}

export interface UsageReportDeps {
  readonly usage: UsageStore;
  readonly clock: Clock;
  readonly plans: Readonly<Record<string, Plan>>;
  /** The plan of accounts whose plan the deployment no longer has. */
  readonly defaultPlan: string;
}

export const createUsageReport =
  (deps: UsageReportDeps) =>
  async (principal: Principal): Promise<UsageReport> => {
    const now = deps.clock.now();
    // The plan that is enforced: an account on a plan the deployment dropped is held to the default.
    const planName = Object.hasOwn(deps.plans, principal.plan) ? principal.plan : deps.defaultPlan;
    const plan = planAllowance(deps.plans, planName, deps.defaultPlan);
    const { start, end } = monthPeriod(now);
    const [month, window] = await Promise.all([
      deps.usage.readMonth(principal.accountId, monthOf(now)),
      deps.usage.readRateLimit(principal.accountId, plan),
    ]);
    return {
      plan: planName,
      period_start: isoNow(start),
      period_end: isoNow(end),
      renders_used: month.rendersUsed,
      renders_limit: plan.monthlyRenders,
      renders_remaining: Math.max(0, plan.monthlyRenders - month.rendersUsed),
      rate_limit: { limit: window.limit, window_seconds: RATE_WINDOW_SECONDS, remaining: window.remaining },
      pdf_bytes: month.pdfBytes,
      render_ms: month.renderMs,
    };
  };
