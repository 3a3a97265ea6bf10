/** The usage store on the single table (functions/domain/accounts/usage.ts is its port). */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  type GetCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import {
  COUNTED_WINDOWS,
  type CountedWindow,
  type MonthUsage,
  type RateLimitState,
  type UnitCounters,
  type UnitHeld,
  type UsageStore,
  type WindowSubject,
} from '../../domain/accounts/usage.js';
import {
  queuedRefusal,
  rateLimitExceeded,
  reservationRefusal,
  secondsLeftInMinute,
  windowAt,
} from '../../domain/accounts/usage-limits.js';
import { epochSeconds, minuteOf, monthOf } from '../../domain/common/clock.js';
import type { Clock } from '../../domain/common/ports.js';
import { DEFAULT_CONCURRENT_RENDERS, DEFAULT_QUEUED_RENDERS, type Plan, unitCap } from '../../settings.js';
import { isConditionFailure, withinLimit } from './conditional.js';
import {
  countedWindowKey,
  ENTITY,
  rateWindowKey,
  TTL,
  templateWriteWindowKey,
  usageKey,
  webhookSendWindowKey,
} from './keys.js';

/**
 * The jobs holding a unit of the month right now (a string set on the month's item). Each unit
 * move names its job and is conditional on the set, so that a move the SDK sends twice (a timeout
 * after it had landed) happens once: a second reservation finds its job already in the set, a
 * second release or record finds it gone.
 */
export const HOLDERS = 'unit_holders';
/**
 * The queued jobs holding a unit (a batch's items: reserveQueued): apart from HOLDERS because their
 * unit is not a running render, so moving it leaves `in_flight` alone.
 */
export const QUEUED_HOLDERS = 'queued_unit_holders';

/**
 * Async renders of their own holding a unit (reserveAsync, issue 37): apart from HOLDERS (they do
 * not count in `in_flight`) and from QUEUED_HOLDERS (a batch's items), because the plan's queue
 * depth bounds this set's size.
 */
export const ASYNC_HOLDERS = 'async_unit_holders';

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
  hit: {
    accountId: string;
    now: Date;
    limit: number;
    window?: 'renders' | 'template_writes' | 'webhook_sends';
    /** For `webhook_sends`: one endpoint's window rather than the account's. */
    webhookId?: string;
  },
): UpdateCommandInput => {
  const count = withinLimit('#count', ':most', { adding: 1, limit: hit.limit });
  return {
    TableName: tableName,
    Key:
      hit.window === 'webhook_sends'
        ? webhookSendWindowKey(hit.accountId, minuteOf(hit.now), hit.webhookId)
        : (hit.window === 'template_writes' ? templateWriteWindowKey : rateWindowKey)(
            hit.accountId,
            minuteOf(hit.now),
          ),
    UpdateExpression: 'ADD #count :one SET #type = :type, #ttl = :expires',
    ConditionExpression: count.condition,
    ExpressionAttributeNames: { '#count': 'request_count', '#type': 'type', '#ttl': TTL },
    ExpressionAttributeValues: {
      ':one': 1,
      ':most': count.most,
      ':type': ENTITY.rateWindow,
      ':expires': epochSeconds(hit.now) + 180,
    },
    ReturnValues: 'UPDATED_NEW',
  };
};

/** Counts one request in a window counted apart (COUNTED_WINDOWS), refused once it holds `limit`; expires after three of its spans. */
export const hitCountedWindowParams = (
  tableName: string,
  hit: { subject: WindowSubject; window: CountedWindow; now: Date; limit: number },
): UpdateCommandInput => {
  const span = COUNTED_WINDOWS[hit.window];
  const { index, resetSeconds } = windowAt(span, hit.now);
  const count = withinLimit('#count', ':most', { adding: 1, limit: hit.limit });
  return {
    TableName: tableName,
    Key: countedWindowKey(hit.subject, hit.window, index),
    UpdateExpression: 'ADD #count :one SET #type = :type, #ttl = :expires',
    ConditionExpression: count.condition,
    ExpressionAttributeNames: { '#count': 'request_count', '#type': 'type', '#ttl': TTL },
    ExpressionAttributeValues: {
      ':one': 1,
      ':most': count.most,
      ':type': ENTITY.rateWindow,
      ':expires': epochSeconds(hit.now) + resetSeconds + 2 * (span === 'minute' ? 60 : 86_400),
    },
    ReturnValues: 'UPDATED_NEW',
  };
};

/**
 * Holds one unit of `month`'s quota and one running render for job `jobId`, in one write: refused
 * once `limit` units are held or `concurrent` renders run, or when the job holds one already.
 */
export const reserveRenderParams = (
  tableName: string,
  reserve: { accountId: string; month: string; limit: number; concurrent: number; jobId: string },
): UpdateCommandInput => {
  const units = withinLimit('renders_used', ':most', { adding: 1, limit: reserve.limit });
  const running = withinLimit('in_flight', ':mostRunning', { adding: 1, limit: reserve.concurrent });
  return {
    TableName: tableName,
    Key: usageKey(reserve.accountId, reserve.month),
    UpdateExpression: 'ADD renders_used :one, in_flight :one, #holders :job SET #type = :type',
    ConditionExpression: `${units.condition} AND ${running.condition} AND NOT contains(#holders, :jobId)`,
    ExpressionAttributeNames: { '#type': 'type', '#holders': HOLDERS },
    ExpressionAttributeValues: {
      ':one': 1,
      ':most': units.most,
      ':mostRunning': running.most,
      ':type': ENTITY.usage,
      ':job': new Set([reserve.jobId]),
      ':jobId': reserve.jobId,
    },
  };
};

/**
 * Holds one unit of `month`'s quota for queued job `jobId` (not a running render: `in_flight` is
 * neither checked nor counted); refused once `limit` units are held or the job holds one already.
 */
export const reserveQueuedParams = (
  tableName: string,
  reserve: { accountId: string; month: string; limit: number; jobId: string },
): UpdateCommandInput => {
  const units = withinLimit('renders_used', ':most', { adding: 1, limit: reserve.limit });
  return {
    TableName: tableName,
    Key: usageKey(reserve.accountId, reserve.month),
    UpdateExpression: 'ADD renders_used :one, #queued :job SET #type = :type',
    ConditionExpression: `${units.condition} AND NOT contains(#queued, :jobId) AND NOT contains(#holders, :jobId)`,
    ExpressionAttributeNames: { '#type': 'type', '#holders': HOLDERS, '#queued': QUEUED_HOLDERS },
    ExpressionAttributeValues: {
      ':one': 1,
      ':most': units.most,
      ':type': ENTITY.usage,
      ':job': new Set([reserve.jobId]),
      ':jobId': reserve.jobId,
    },
  };
};

/**
 * Holds one unit of `month`'s quota for async render `jobId` (not counted in `in_flight`), while
 * the account's async renders holding one are fewer than `depth`; refused once `limit` units are
 * held, the queue is that deep, or the job holds one already.
 */
export const reserveAsyncParams = (
  tableName: string,
  reserve: { accountId: string; month: string; limit: number; depth: number; jobId: string },
): UpdateCommandInput => {
  const units = withinLimit('renders_used', ':most', { adding: 1, limit: reserve.limit });
  const queued = withinLimit('size(#async)', ':mostQueued', {
    adding: 1,
    limit: reserve.depth,
    attribute: '#async',
  });
  return {
    TableName: tableName,
    Key: usageKey(reserve.accountId, reserve.month),
    UpdateExpression: 'ADD renders_used :one, #async :job SET #type = :type',
    ConditionExpression: `${units.condition} AND ${queued.condition} AND NOT contains(#async, :jobId) AND NOT contains(#holders, :jobId)`,
    ExpressionAttributeNames: { '#type': 'type', '#holders': HOLDERS, '#async': ASYNC_HOLDERS },
    ExpressionAttributeValues: {
      ':one': 1,
      ':most': units.most,
      ':mostQueued': queued.most,
      ':type': ENTITY.usage,
      ':job': new Set([reserve.jobId]),
      ':jobId': reserve.jobId,
    },
  };
};

/**
 * Where a job's unit is held: `running` (HOLDERS, with a running render counted in `in_flight`),
 * `queued` (QUEUED_HOLDERS, reserveQueued: the unit only) or `async` (ASYNC_HOLDERS, reserveAsync).
 * The places a release or record tries, `held` first (each refused where the job holds nothing).
 */
const lookingFirstAt = (held: UnitHeld | undefined): readonly UnitHeld[] => {
  const order: UnitHeld[] = ['running', 'async', 'queued'];
  return held ? [held, ...order.filter((where) => where !== held)] : order;
};

const heldIn = (held: UnitHeld): { set: string; names: Record<string, string>; stopsRunning: string } =>
  held === 'running'
    ? { set: '#holders', names: { '#holders': HOLDERS }, stopsRunning: ', in_flight :minusOne' }
    : held === 'queued'
      ? { set: '#queued', names: { '#queued': QUEUED_HOLDERS }, stopsRunning: '' }
      : { set: '#async', names: { '#async': ASYNC_HOLDERS }, stopsRunning: '' };

/** Gives back the unit job `jobId` holds where `held` says (and its running render); refused if it holds none there. */
const releaseParams = (
  tableName: string,
  release: { accountId: string; month: string; jobId: string },
  held: UnitHeld,
): UpdateCommandInput => {
  const { set, names, stopsRunning } = heldIn(held);
  return {
    TableName: tableName,
    Key: usageKey(release.accountId, release.month),
    UpdateExpression: `ADD renders_used :minusOne${stopsRunning} DELETE ${set} :job`,
    ConditionExpression: `contains(${set}, :jobId)`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: { ':minusOne': -1, ':job': new Set([release.jobId]), ':jobId': release.jobId },
  };
};

/** Job `jobId` completed: its output joins the totals and it no longer runs; refused if it holds no unit where `held` says. */
const recordParams = (
  tableName: string,
  record: { accountId: string; month: string; pdfBytes: number; renderMs: number; jobId: string },
  held: UnitHeld,
): UpdateCommandInput => {
  const { set, names, stopsRunning } = heldIn(held);
  return {
    TableName: tableName,
    Key: usageKey(record.accountId, record.month),
    UpdateExpression: `ADD pdf_bytes :bytes, render_ms :ms${stopsRunning} DELETE ${set} :job`,
    ConditionExpression: `contains(${set}, :jobId)`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: {
      ':bytes': record.pdfBytes,
      ':ms': record.renderMs,
      ...(held === 'running' ? { ':minusOne': -1 } : {}),
      ':job': new Set([record.jobId]),
      ':jobId': record.jobId,
    },
  };
};

/** Gives back the unit an async render holds (reserveAsync); refused if it holds none. */
export const releaseAsyncParams = (tableName: string, accountId: string, month: string, jobId: string) =>
  releaseParams(tableName, { accountId, month, jobId }, 'async');

/** Async render `jobId` completed: its output joins the totals; refused if it holds no unit. */
export const recordAsyncParams = (
  tableName: string,
  record: { accountId: string; month: string; pdfBytes: number; renderMs: number; jobId: string },
) => recordParams(tableName, record, 'async');

/** Gives back the unit a queued job holds (reserveQueued); refused if it holds none. */
export const releaseQueuedParams = (tableName: string, accountId: string, month: string, jobId: string) =>
  releaseParams(tableName, { accountId, month, jobId }, 'queued');

/** Queued job `jobId` completed: its output joins the totals; refused if it holds no unit. */
export const recordQueuedParams = (
  tableName: string,
  record: { accountId: string; month: string; pdfBytes: number; renderMs: number; jobId: string },
) => recordParams(tableName, record, 'queued');

/** Gives back the unit (and the running render) that job `jobId` holds; refused if it holds none. */
export const releaseRenderParams = (tableName: string, accountId: string, month: string, jobId: string) =>
  releaseParams(tableName, { accountId, month, jobId }, 'running');

/** Job `jobId` completed: its output joins the totals and it no longer runs; refused if it holds no unit. */
export const recordRenderParams = (
  tableName: string,
  record: { accountId: string; month: string; pdfBytes: number; renderMs: number; jobId: string },
) => recordParams(tableName, record, 'running');

/**
 * Sets the unit counters to `next`, and the jobs holding a unit to `holders`, only while the
 * counters hold `seen` (absent: never written).
 */
export const setUnitsParams = (
  tableName: string,
  accountId: string,
  month: string,
  seen: UnitCounters,
  next: Required<UnitCounters>,
  holders: readonly string[] = [],
  queuedHolders: readonly string[] = [],
  asyncHolders: readonly string[] = [],
): UpdateCommandInput => {
  const held = (name: string, value: number | undefined, as: string) =>
    value === undefined ? `attribute_not_exists(${name})` : `${name} = ${as}`;
  // A set cannot be empty in DynamoDB: no holders is no attribute.
  const sets = ['renders_used = :used', 'in_flight = :running', '#type = :type'];
  const removes: string[] = [];
  (holders.length > 0 ? sets : removes).push(holders.length > 0 ? '#holders = :holders' : '#holders');
  (queuedHolders.length > 0 ? sets : removes).push(
    queuedHolders.length > 0 ? '#queued = :queued' : '#queued',
  );
  (asyncHolders.length > 0 ? sets : removes).push(asyncHolders.length > 0 ? '#async = :async' : '#async');
  return {
    TableName: tableName,
    Key: usageKey(accountId, month),
    UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
    ConditionExpression: `${held('renders_used', seen.rendersUsed, ':seenUsed')} AND ${held('in_flight', seen.inFlight, ':seenRunning')}`,
    ExpressionAttributeNames: {
      '#type': 'type',
      '#holders': HOLDERS,
      '#queued': QUEUED_HOLDERS,
      '#async': ASYNC_HOLDERS,
    },
    ExpressionAttributeValues: {
      ':used': next.rendersUsed,
      ':running': next.inFlight,
      ':type': ENTITY.usage,
      ...(holders.length > 0 ? { ':holders': new Set(holders) } : {}),
      ...(queuedHolders.length > 0 ? { ':queued': new Set(queuedHolders) } : {}),
      ...(asyncHolders.length > 0 ? { ':async': new Set(asyncHolders) } : {}),
      ...(seen.rendersUsed !== undefined ? { ':seenUsed': seen.rendersUsed } : {}),
      ...(seen.inFlight !== undefined ? { ':seenRunning': seen.inFlight } : {}),
    },
  };
};

export const createUsageStore = (db: DynamoDBDocumentClient, tableName: string, clock: Clock): UsageStore => {
  const refusal = (plan: Plan, used: number, inFlight: number) =>
    reservationRefusal(plan, used, inFlight, clock.now());

  /** Sends a conditional update: false when its condition refused it. */
  const applied = async (params: UpdateCommandInput): Promise<boolean> => {
    try {
      await db.send(new UpdateCommand(params));
      return true;
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      return false;
    }
  };

  /** Counts one request in its window (hitRateWindowParams); 429 once the window holds its limit. */
  const hitWindow = async (
    hit: Omit<Parameters<typeof hitRateWindowParams>[1], 'now'>,
    what: string,
  ): Promise<RateLimitState> => {
    const now = clock.now();
    const resetSeconds = secondsLeftInMinute(now, minuteOf(now));
    try {
      const out = await db.send(new UpdateCommand(hitRateWindowParams(tableName, { ...hit, now })));
      const count = Number(out.Attributes?.request_count ?? 1);
      return { limit: hit.limit, remaining: Math.max(0, hit.limit - count), resetSeconds };
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      throw rateLimitExceeded(hit.limit, what, resetSeconds);
    }
  };

  return {
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

    hitRateLimit: (accountId: string, plan: Plan): Promise<RateLimitState> =>
      hitWindow({ accountId, limit: plan.rendersPerMinute }, 'render requests'),

    async hitWindow(subject, window, limit, what) {
      const now = clock.now();
      const span = COUNTED_WINDOWS[window];
      const { resetSeconds } = windowAt(span, now);
      try {
        const out = await db.send(
          new UpdateCommand(hitCountedWindowParams(tableName, { subject, window, now, limit })),
        );
        const count = Number(out.Attributes?.request_count ?? 1);
        return { limit, remaining: Math.max(0, limit - count), resetSeconds };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        throw rateLimitExceeded(limit, what, resetSeconds, span);
      }
    },

    hitTemplateWriteLimit: (accountId: string, perMinute: number): Promise<RateLimitState> =>
      hitWindow({ accountId, limit: perMinute, window: 'template_writes' }, 'template writes'),

    async hitWebhookSendLimit(accountId, webhookId, perMinute) {
      // The endpoint's window first: a send it refuses is not counted in the account's.
      await hitWindow(
        { accountId, limit: perMinute.endpoint, window: 'webhook_sends', webhookId },
        'webhook sends to this endpoint',
      );
      await hitWindow({ accountId, limit: perMinute.account, window: 'webhook_sends' }, 'webhook sends');
    },

    async reserveRender(
      accountId: string,
      plan: Plan,
      month_: string | undefined,
      jobId: string,
    ): Promise<string> {
      const month = month_ ?? monthOf(clock.now());
      const concurrent = plan.concurrentRenders ?? DEFAULT_CONCURRENT_RENDERS;
      try {
        await db.send(
          new UpdateCommand(
            reserveRenderParams(tableName, {
              accountId,
              month,
              limit: unitCap(plan),
              concurrent,
              jobId,
            }),
          ),
        );
        return month;
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        const out = await db.send(new GetCommand(getMonthUsageParams(tableName, accountId, month)));
        // An attempt the SDK retried had landed: the job holds its unit.
        if ((out.Item?.[HOLDERS] as Set<string> | undefined)?.has(jobId)) return month;
        throw refusal(plan, count(out.Item?.renders_used), Number.POSITIVE_INFINITY);
      }
    },

    async checkReservable(
      accountId: string,
      plan: Plan,
      month: string,
      seen?: UnitCounters,
      running = true,
    ): Promise<void> {
      const inFlight = (n: unknown) => (running ? count(n) : 0);
      if (seen && !refusal(plan, count(seen.rendersUsed), inFlight(seen.inFlight))) return;
      const out = await db.send(new GetCommand(getMonthUsageParams(tableName, accountId, month)));
      const refused = refusal(plan, count(out.Item?.renders_used), inFlight(out.Item?.in_flight));
      if (refused) throw refused;
    },

    async reserveAsync(accountId: string, plan: Plan, month: string, jobId: string): Promise<string> {
      const depth = plan.queuedRenders ?? DEFAULT_QUEUED_RENDERS;
      const params = reserveAsyncParams(tableName, {
        accountId,
        month,
        limit: plan.monthlyRenders,
        depth,
        jobId,
      });
      if (await applied(params)) return month;
      const out = await db.send(new GetCommand(getMonthUsageParams(tableName, accountId, month)));
      const held = out.Item?.[ASYNC_HOLDERS] as Set<string> | undefined;
      // An attempt the SDK retried had landed: the job holds its unit.
      if (held?.has(jobId)) return month;
      const refused = queuedRefusal(plan, count(out.Item?.renders_used), held?.size ?? 0, clock.now());
      if (refused) throw refused;
      throw new Error(`job ${jobId} holds a running render's unit already`);
    },

    async reserveQueued(accountId: string, plan: Plan, month: string, jobId: string): Promise<string> {
      try {
        await db.send(
          new UpdateCommand(
            reserveQueuedParams(tableName, { accountId, month, limit: unitCap(plan), jobId }),
          ),
        );
        return month;
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        const out = await db.send(new GetCommand(getMonthUsageParams(tableName, accountId, month)));
        // An attempt the SDK retried had landed: the job holds its unit.
        if ((out.Item?.[QUEUED_HOLDERS] as Set<string> | undefined)?.has(jobId)) return month;
        const refused = refusal(plan, count(out.Item?.renders_used), 0);
        if (refused) throw refused;
        throw new Error(`job ${jobId} holds a running render's unit already`);
      }
    },

    async releaseRender(accountId: string, month: string, jobId: string, held?: UnitHeld): Promise<void> {
      // Where `held` says first, then the others: one of them holds it, if any (none: given back
      // already, a retried attempt had landed, or never held).
      for (const where of lookingFirstAt(held)) {
        if (await applied(releaseParams(tableName, { accountId, month, jobId }, where))) return;
      }
    },

    async recordRender(
      accountId: string,
      month: string,
      pdfBytes: number,
      renderMs: number,
      jobId: string,
      held?: UnitHeld,
    ): Promise<void> {
      const record = { accountId, month, pdfBytes, renderMs, jobId };
      // As releaseRender: none applied, recorded already (a retried attempt had landed) or never held.
      for (const where of lookingFirstAt(held)) {
        if (await applied(recordParams(tableName, record, where))) return;
      }
    },

    async readUnits(accountId: string, month: string): Promise<UnitCounters> {
      const out = await db.send(new GetCommand(getMonthUsageParams(tableName, accountId, month)));
      const raw = (v: unknown) => (typeof v === 'number' ? v : undefined);
      return { rendersUsed: raw(out.Item?.renders_used), inFlight: raw(out.Item?.in_flight) };
    },

    async setUnits(accountId, month, seen, next, holders, queuedHolders, asyncHolders): Promise<boolean> {
      try {
        await db.send(
          new UpdateCommand(
            setUnitsParams(tableName, accountId, month, seen, next, holders, queuedHolders, asyncHolders),
          ),
        );
        return true;
      } catch (e) {
        if (isConditionFailure(e)) return false;
        throw e;
      }
    },
  };
};
