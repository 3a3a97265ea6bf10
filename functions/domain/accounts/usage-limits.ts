/**
 * The refusals of the usage limits, as every usage store answers them (functions/adapters/
 * dynamodb/usage.ts and functions/adapters/memory/usage.ts): the monthly quota, the plan's
 * concurrency and the per-minute rate limits. Apart from usage.ts, which the errors module reads
 * the rate-limit state's type from.
 */
import { DEFAULT_CONCURRENT_RENDERS, DEFAULT_QUEUED_RENDERS, type Plan, unitCap } from '../../settings.js';
import { ServiceError } from '../common/errors.js';
import { monthPeriod } from './usage.js';

/**
 * A render of the account ends within seconds, so a refusal for concurrency is worth retrying soon
 * (a second or two, as the design asks; 2 s lets a typical render of a small page end).
 */
export const CONCURRENCY_RETRY_SECONDS = 2;

/**
 * Which limit refuses a reservation at `now`, from the month's counters (every store answers the
 * same): the quota wins (it does not clear by waiting a second). An `inFlight` of Infinity says
 * the write was refused and the quota was not the reason, so the concurrency was.
 */
export const reservationRefusal = (
  plan: Plan,
  used: number,
  inFlight: number,
  now: Date,
): ServiceError | undefined => {
  const concurrent = plan.concurrentRenders ?? DEFAULT_CONCURRENT_RENDERS;
  if (used >= unitCap(plan)) {
    const resetAt = monthPeriod(now).end;
    const overage = plan.overage?.allowed ? ` and its ${plan.overage.max_units} overage units` : '';
    return new ServiceError(
      'PLAN_QUOTA_EXCEEDED',
      `Monthly quota of ${plan.monthlyRenders} renders${overage} used up; it resets at ${resetAt.toISOString()}`,
      { retryAfterSeconds: Math.ceil((resetAt.getTime() - now.getTime()) / 1000) },
    );
  }
  if (inFlight >= concurrent) {
    return new ServiceError(
      'CONCURRENCY_LIMIT_EXCEEDED',
      `The plan runs at most ${concurrent} renders at once for an account; retry in ${CONCURRENCY_RETRY_SECONDS} s`,
      { retryAfterSeconds: CONCURRENCY_RETRY_SECONDS },
    );
  }
  return undefined;
};

/** A refused async render waits for a queued one to end: about a render of a page or two per slot. */
export const QUEUE_DEPTH_RETRY_SECONDS = 5;

/**
 * Which limit refuses a queued async render's reservation: the quota first (as for a running
 * render), then the plan's queue depth (`queued`: the account's async renders not yet ended).
 */
export const queuedRefusal = (
  plan: Plan,
  used: number,
  queued: number,
  now: Date,
): ServiceError | undefined => {
  const quota = reservationRefusal(plan, used, 0, now);
  if (quota) return quota;
  const depth = plan.queuedRenders ?? DEFAULT_QUEUED_RENDERS;
  if (queued < depth) return undefined;
  return new ServiceError(
    'QUEUE_DEPTH_EXCEEDED',
    `The plan queues at most ${depth} async renders at once for an account (queued or running); retry in ${QUEUE_DEPTH_RETRY_SECONDS} s, once some ended`,
    { retryAfterSeconds: QUEUE_DEPTH_RETRY_SECONDS },
  );
};

/** Seconds left at `now` in the rate window of `minute` (minuteOf), at least 1. */
export const secondsLeftInMinute = (now: Date, minute: number): number =>
  Math.max(1, Math.ceil(((minute + 1) * 60_000 - now.getTime()) / 1000));

/** The window of `span` that `now` falls in (epoch minutes, or epoch days), and the seconds left in it. */
export const windowAt = (span: 'minute' | 'day', now: Date): { index: number; resetSeconds: number } => {
  const length = span === 'minute' ? 60_000 : 86_400_000;
  const index = Math.floor(now.getTime() / length);
  return { index, resetSeconds: Math.max(1, Math.ceil(((index + 1) * length - now.getTime()) / 1000)) };
};

/** A request past a rate limit of `limit` `what` (e.g. "render requests") per minute (or per day). */
export const rateLimitExceeded = (
  limit: number,
  what: string,
  resetSeconds: number,
  per: 'minute' | 'day' = 'minute',
): ServiceError =>
  new ServiceError(
    'USAGE_LIMIT_EXCEEDED',
    `Rate limit of ${limit} ${what} per ${per} exceeded; retry in ${resetSeconds} s`,
    {
      rateLimit: { limit, remaining: 0, resetSeconds },
      retryAfterSeconds: resetSeconds,
    },
  );
