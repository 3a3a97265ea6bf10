/**
 * Rate limit and plan quota, both as conditional ADD counters so that concurrent requests can
 * never overspend them (contract: "Usage, plans and limits").
 *
 * - Rate limit: render requests per account in fixed 60-second windows aligned to the UTC minute.
 * - Quota: completed renders per calendar month (UTC). A render holds one unit while it runs and
 *   gives it back if it fails.
 */
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Plan } from '../settings.js';
import { epochSeconds } from './clock.js';
import { ServiceError } from './errors.js';
import { ENTITY, minuteOf, monthOf, rateWindowKey, TTL, usageKey } from './keys.js';
import type { Clock } from './ports.js';

export interface RateLimitState {
  readonly limit: number;
  readonly remaining: number;
  /** Seconds left in the current window. */
  readonly resetSeconds: number;
}

/** The allowance of the plan named `name`; an account on a plan the deployment dropped gets the default. */
export const planAllowance = (plans: Readonly<Record<string, Plan>>, name: string, fallback: string): Plan =>
  plans[name] ?? (plans[fallback] as Plan);

const isConditionFailure = (e: unknown) => (e as Error).name === 'ConditionalCheckFailedException';

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

const secondsLeftInMinute = (now: Date, minute: number): number =>
  Math.max(1, Math.ceil(((minute + 1) * 60_000 - now.getTime()) / 1000));

const count = (value: unknown): number => (typeof value === 'number' && value > 0 ? value : 0);

export const createUsageStore = (db: DynamoDBDocumentClient, tableName: string, clock: Clock) => ({
  /** The current window of the rate limit as it stands, without counting a request. */
  async readRateLimit(accountId: string, plan: Plan): Promise<RateLimitState> {
    const now = clock.now();
    const minute = minuteOf(now);
    const out = await db.send(
      new GetCommand({ TableName: tableName, Key: rateWindowKey(accountId, minute), ConsistentRead: true }),
    );
    const limit = plan.rendersPerMinute;
    return {
      limit,
      remaining: Math.max(0, limit - count(out.Item?.request_count)),
      resetSeconds: secondsLeftInMinute(now, minute),
    };
  },

  /** The counters of `month` (`yyyy-mm`); zeros for a month without renders. */
  async readMonth(accountId: string, month: string): Promise<MonthUsage> {
    const out = await db.send(
      new GetCommand({ TableName: tableName, Key: usageKey(accountId, month), ConsistentRead: true }),
    );
    return {
      rendersUsed: count(out.Item?.renders_used),
      pdfBytes: count(out.Item?.pdf_bytes),
      renderMs: count(out.Item?.render_ms),
    };
  },

  /** Count one render request; 429 USAGE_LIMIT_EXCEEDED when the window is full. */
  async hitRateLimit(accountId: string, plan: Plan): Promise<RateLimitState> {
    const now = clock.now();
    const minute = minuteOf(now);
    const resetSeconds = secondsLeftInMinute(now, minute);
    const limit = plan.rendersPerMinute;
    try {
      const out = await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: rateWindowKey(accountId, minute),
          UpdateExpression: 'ADD #count :one SET #type = :type, #ttl = :expires',
          ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
          ExpressionAttributeNames: { '#count': 'request_count', '#type': 'type', '#ttl': TTL },
          ExpressionAttributeValues: {
            ':one': 1,
            ':limit': limit,
            ':type': ENTITY.rateWindow,
            ':expires': epochSeconds(now) + 180,
          },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      const count = Number(out.Attributes?.request_count ?? 1);
      return { limit, remaining: Math.max(0, limit - count), resetSeconds };
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      throw new ServiceError(
        'USAGE_LIMIT_EXCEEDED',
        `Rate limit of ${limit} render requests per minute exceeded; retry in ${resetSeconds} s`,
        { rateLimit: { limit, remaining: 0, resetSeconds }, retryAfterSeconds: resetSeconds },
      );
    }
  },

  /** Hold one unit of this month's quota; 429 PLAN_QUOTA_EXCEEDED when none is left. Returns the month. */
  async reserveRender(accountId: string, plan: Plan): Promise<string> {
    const now = clock.now();
    const month = monthOf(now);
    try {
      await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: usageKey(accountId, month),
          UpdateExpression: 'ADD renders_used :one SET #type = :type',
          ConditionExpression: 'attribute_not_exists(renders_used) OR renders_used < :limit',
          ExpressionAttributeNames: { '#type': 'type' },
          ExpressionAttributeValues: { ':one': 1, ':limit': plan.monthlyRenders, ':type': ENTITY.usage },
        }),
      );
      return month;
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      const resetAt = monthPeriod(now).end;
      throw new ServiceError(
        'PLAN_QUOTA_EXCEEDED',
        `Monthly quota of ${plan.monthlyRenders} renders used up; it resets at ${resetAt.toISOString()}`,
        { retryAfterSeconds: Math.ceil((resetAt.getTime() - now.getTime()) / 1000) },
      );
    }
  },

  /** Give back a unit held by a render that failed. */
  async releaseRender(accountId: string, month: string): Promise<void> {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: usageKey(accountId, month),
        UpdateExpression: 'ADD renders_used :minusOne',
        ExpressionAttributeValues: { ':minusOne': -1 },
      }),
    );
  },

  /** Add a completed render's output to the month's totals. */
  async recordRender(accountId: string, month: string, pdfBytes: number, renderMs: number): Promise<void> {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: usageKey(accountId, month),
        UpdateExpression: 'ADD pdf_bytes :bytes, render_ms :ms',
        ExpressionAttributeValues: { ':bytes': pdfBytes, ':ms': renderMs },
      }),
    );
  },
});

export type UsageStore = ReturnType<typeof createUsageStore>;
