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
  /** Units within the plan's monthly renders, and past them (overage: issue 39). */
  readonly included_units: number;
  readonly overage_units: number;
  readonly overage_limit: number;
  readonly estimated_charge: EstimatedCharge | null;
}

export interface EstimatedCharge {
  readonly currency: string;
  readonly monthly_price: number;
  readonly unit_price_overage: number;
  readonly overage_amount: number;
  readonly total: number;
}

/** Units of `used` within the plan's monthly renders, and past them. */
export const splitUnits = (plan: Plan, used: number): { included: number; overage: number } => ({
  included: Math.min(used, plan.monthlyRenders),
  overage: Math.max(0, used - plan.monthlyRenders),
});

/** Amounts kept to 6 decimals: sums of binary fractions (0.1 + 0.2) never show their noise. */
const money = (amount: number) => Math.round(amount * 1e6) / 1e6;

/** A month's charge on `plan` for `overageUnits`, when the plan carries a price; else null. */
export const estimatedCharge = (plan: Plan, overageUnits: number): EstimatedCharge | null => {
  if (plan.monthly_price === undefined && plan.unit_price_overage === undefined) return null;
  const monthly = plan.monthly_price ?? 0;
  const unit = plan.unit_price_overage ?? 0;
  const overage = money(overageUnits * unit);
  return {
    currency: plan.currency ?? 'USD',
    monthly_price: monthly,
    unit_price_overage: unit,
    overage_amount: overage,
    total: money(monthly + overage),
  };
};

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
    const units = splitUnits(plan, month.rendersUsed);
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
      included_units: units.included,
      overage_units: units.overage,
      overage_limit: plan.overage?.allowed ? plan.overage.max_units : 0,
      estimated_charge: estimatedCharge(plan, units.overage),
    };
  };
