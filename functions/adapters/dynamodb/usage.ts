/** The usage store on the single table (functions/domain/usage.ts is its port). */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  type GetCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { epochSeconds, minuteOf, monthOf } from '../../domain/clock.js';
import { ServiceError } from '../../domain/errors.js';
import type { Clock } from '../../domain/ports.js';
import { type MonthUsage, monthPeriod, type RateLimitState, type UsageStore } from '../../domain/usage.js';
import type { Plan } from '../../settings.js';
import { ENTITY, rateWindowKey, TTL, templateWriteWindowKey, usageKey } from './keys.js';

const isConditionFailure = (e: unknown) => (e as Error).name === 'ConditionalCheckFailedException';

const secondsLeftInMinute = (now: Date, minute: number): number =>
  Math.max(1, Math.ceil(((minute + 1) * 60_000 - now.getTime()) / 1000));

const count = (value: unknown): number => (typeof value === 'number' && value > 0 ? value : 0);

export const getRateWindowParams = (
  tableName: string,
  accountId: string,
  minute: number,
): GetCommandInput => ({
  TableName: tableName,
  Key: rateWindowKey(accountId, minute),
  ConsistentRead: true,
});

export const getMonthUsageParams = (
  tableName: string,
  accountId: string,
  month: string,
): GetCommandInput => ({
  TableName: tableName,
  Key: usageKey(accountId, month),
  ConsistentRead: true,
});

/** Counts one request in the window of `now`, refused once the window holds `limit`; expires after 3 minutes. */
export const hitRateWindowParams = (
  tableName: string,
  hit: { accountId: string; now: Date; limit: number; window?: 'renders' | 'template_writes' },
): UpdateCommandInput => ({
  TableName: tableName,
  Key: (hit.window === 'template_writes' ? templateWriteWindowKey : rateWindowKey)(
    hit.accountId,
    minuteOf(hit.now),
  ),
  UpdateExpression: 'ADD #count :one SET #type = :type, #ttl = :expires',
  ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
  ExpressionAttributeNames: { '#count': 'request_count', '#type': 'type', '#ttl': TTL },
  ExpressionAttributeValues: {
    ':one': 1,
    ':limit': hit.limit,
    ':type': ENTITY.rateWindow,
    ':expires': epochSeconds(hit.now) + 180,
  },
  ReturnValues: 'UPDATED_NEW',
});

/** Holds one unit of `month`'s quota, refused once `limit` are held. */
export const reserveRenderParams = (
  tableName: string,
  reserve: { accountId: string; month: string; limit: number },
): UpdateCommandInput => ({
  TableName: tableName,
  Key: usageKey(reserve.accountId, reserve.month),
  UpdateExpression: 'ADD renders_used :one SET #type = :type',
  ConditionExpression: 'attribute_not_exists(renders_used) OR renders_used < :limit',
  ExpressionAttributeNames: { '#type': 'type' },
  ExpressionAttributeValues: { ':one': 1, ':limit': reserve.limit, ':type': ENTITY.usage },
});

export const releaseRenderParams = (
  tableName: string,
  accountId: string,
  month: string,
): UpdateCommandInput => ({
  TableName: tableName,
  Key: usageKey(accountId, month),
  UpdateExpression: 'ADD renders_used :minusOne',
  ExpressionAttributeValues: { ':minusOne': -1 },
});

export const recordRenderParams = (
  tableName: string,
  record: { accountId: string; month: string; pdfBytes: number; renderMs: number },
): UpdateCommandInput => ({
  TableName: tableName,
  Key: usageKey(record.accountId, record.month),
  UpdateExpression: 'ADD pdf_bytes :bytes, render_ms :ms',
  ExpressionAttributeValues: { ':bytes': record.pdfBytes, ':ms': record.renderMs },
});

export const createUsageStore = (
  db: DynamoDBDocumentClient,
  tableName: string,
  clock: Clock,
): UsageStore => ({
  async readRateLimit(accountId: string, plan: Plan): Promise<RateLimitState> {
    const now = clock.now();
    const minute = minuteOf(now);
    const out = await db.send(new GetCommand(getRateWindowParams(tableName, accountId, minute)));
    const limit = plan.rendersPerMinute;
    return {
      limit,
      remaining: Math.max(0, limit - count(out.Item?.request_count)),
      resetSeconds: secondsLeftInMinute(now, minute),
    };
  },

  async readMonth(accountId: string, month: string): Promise<MonthUsage> {
    const out = await db.send(new GetCommand(getMonthUsageParams(tableName, accountId, month)));
    return {
      rendersUsed: count(out.Item?.renders_used),
      pdfBytes: count(out.Item?.pdf_bytes),
      renderMs: count(out.Item?.render_ms),
    };
  },

  async hitRateLimit(accountId: string, plan: Plan): Promise<RateLimitState> {
    const now = clock.now();
    const resetSeconds = secondsLeftInMinute(now, minuteOf(now));
    const limit = plan.rendersPerMinute;
    try {
      const out = await db.send(new UpdateCommand(hitRateWindowParams(tableName, { accountId, now, limit })));
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

  async hitTemplateWriteLimit(accountId: string, perMinute: number): Promise<RateLimitState> {
    const now = clock.now();
    const resetSeconds = secondsLeftInMinute(now, minuteOf(now));
    try {
      const out = await db.send(
        new UpdateCommand(
          hitRateWindowParams(tableName, { accountId, now, limit: perMinute, window: 'template_writes' }),
        ),
      );
      const count = Number(out.Attributes?.request_count ?? 1);
      return { limit: perMinute, remaining: Math.max(0, perMinute - count), resetSeconds };
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      throw new ServiceError(
        'USAGE_LIMIT_EXCEEDED',
        `Rate limit of ${perMinute} template writes per minute exceeded; retry in ${resetSeconds} s`,
        { rateLimit: { limit: perMinute, remaining: 0, resetSeconds }, retryAfterSeconds: resetSeconds },
      );
    }
  },

  async reserveRender(accountId: string, plan: Plan): Promise<string> {
    const now = clock.now();
    const month = monthOf(now);
    try {
      await db.send(
        new UpdateCommand(reserveRenderParams(tableName, { accountId, month, limit: plan.monthlyRenders })),
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

  async releaseRender(accountId: string, month: string): Promise<void> {
    await db.send(new UpdateCommand(releaseRenderParams(tableName, accountId, month)));
  },

  async recordRender(accountId: string, month: string, pdfBytes: number, renderMs: number): Promise<void> {
    await db.send(new UpdateCommand(recordRenderParams(tableName, { accountId, month, pdfBytes, renderMs })));
  },
});
