/**
 * The UsageStore (domain/usage.ts) in memory, as the DynamoDB adapter (adapters/dynamodb/usage.ts)
 * behaves: rate windows per account and minute (renders, and template writes apart), counted and
 * refused in one step; a month's units held by named jobs, so that every unit move happens once
 * for its job however often it is sent; a running render counted in `inFlight` against the plan's
 * concurrency, a queued job (reserveQueued) against the quota only; and the counters set again
 * only from what was read (setUnits). Its months are those of the table it is handed (table.ts),
 * where a batch's writes hold their units. The usage contract (test/contract/usage.contract.ts) runs
 * the same cases against both.
 */

import {
  COUNTED_WINDOWS,
  type MonthUsage,
  type RateLimitState,
  type UnitCounters,
  type UsageStore,
} from '../../domain/accounts/usage.js';
import {
  queuedRefusal,
  rateLimitExceeded,
  reservationRefusal,
  secondsLeftInMinute,
  windowAt,
} from '../../domain/accounts/usage-limits.js';
import { minuteOf, monthOf } from '../../domain/common/clock.js';
import type { Clock } from '../../domain/common/ports.js';
import type { Plan } from '../../settings.js';
import { createMemoryTable, type MemoryTable, monthKey, type UsageMonth, usageMonth } from './table.js';

const count = (value: number | undefined): number => (value !== undefined && value > 0 ? value : 0);

export const createMemoryUsageStore = (
  clock: Clock,
  table: MemoryTable = createMemoryTable(),
): UsageStore => {
  const { windows, months } = table;
  const monthOfAccount = (accountId: string, month: string): UsageMonth =>
    usageMonth(table, accountId, month);
  const peek = (accountId: string, month: string) => months.get(monthKey(accountId, month));

  const refusal = (plan: Plan, used: number, inFlight: number) =>
    reservationRefusal(plan, used, inFlight, clock.now());

  const hit = (accountId: string, window: string, limit: number, what: string): RateLimitState => {
    const now = clock.now();
    const minute = minuteOf(now);
    const resetSeconds = secondsLeftInMinute(now, minute);
    const key = JSON.stringify([accountId, window, minute]);
    const seen = windows.get(key) ?? 0;
    if (seen >= limit) {
      throw rateLimitExceeded(limit, what, resetSeconds);
    }
    windows.set(key, seen + 1);
    return { limit, remaining: Math.max(0, limit - seen - 1), resetSeconds };
  };

  /** Where job `jobId` holds a unit of the month, taken out of there; undefined when it holds none. */
  const take = (m: UsageMonth | undefined, jobId: string): 'running' | 'queued' | 'async' | undefined => {
    if (m?.holders.delete(jobId)) {
      m.inFlight = (m.inFlight ?? 0) - 1;
      return 'running';
    }
    if (m?.async.delete(jobId)) return 'async';
    return m?.queued.delete(jobId) ? 'queued' : undefined;
  };

  return {
    async readRateLimit(accountId, plan) {
      const now = clock.now();
      const minute = minuteOf(now);
      const seen = windows.get(JSON.stringify([accountId, 'renders', minute])) ?? 0;
      return {
        limit: plan.rendersPerMinute,
        remaining: Math.max(0, plan.rendersPerMinute - seen),
        resetSeconds: secondsLeftInMinute(now, minute),
      };
    },

    async readMonth(accountId, month): Promise<MonthUsage> {
      const m = peek(accountId, month);
      return {
        rendersUsed: count(m?.rendersUsed),
        pdfBytes: count(m?.pdfBytes),
        renderMs: count(m?.renderMs),
      };
    },

    async hitRateLimit(accountId, plan) {
      return hit(accountId, 'renders', plan.rendersPerMinute, 'render requests');
    },

    async hitWindow(subject, window, limit, what) {
      const span = COUNTED_WINDOWS[window];
      const { index, resetSeconds } = windowAt(span, clock.now());
      const key = JSON.stringify(['ip' in subject ? `ip:${subject.ip}` : subject.accountId, window, index]);
      const seen = windows.get(key) ?? 0;
      if (seen >= limit) throw rateLimitExceeded(limit, what, resetSeconds, span);
      windows.set(key, seen + 1);
      return { limit, remaining: Math.max(0, limit - seen - 1), resetSeconds };
    },

    async hitTemplateWriteLimit(accountId, perMinute) {
      return hit(accountId, 'template_writes', perMinute, 'template writes');
    },

    async hitWebhookSendLimit(accountId, webhookId, perMinute) {
      hit(accountId, `webhook_sends#${webhookId}`, perMinute.endpoint, 'webhook sends to this endpoint');
      hit(accountId, 'webhook_sends', perMinute.account, 'webhook sends');
    },

    async reserveRender(accountId, plan, month_, jobId) {
      const month = month_ ?? monthOf(clock.now());
      const m = monthOfAccount(accountId, month);
      if (m.holders.has(jobId)) return month;
      const refused = refusal(plan, count(m.rendersUsed), count(m.inFlight));
      if (refused) throw refused;
      m.rendersUsed = (m.rendersUsed ?? 0) + 1;
      m.inFlight = (m.inFlight ?? 0) + 1;
      m.holders.add(jobId);
      return month;
    },

    async checkReservable(accountId, plan, month, seen, running = true) {
      const inFlight = (n: number | undefined) => (running ? count(n) : 0);
      if (seen && !refusal(plan, count(seen.rendersUsed), inFlight(seen.inFlight))) return;
      const m = peek(accountId, month);
      const refused = refusal(plan, count(m?.rendersUsed), inFlight(m?.inFlight));
      if (refused) throw refused;
    },

    async reserveAsync(accountId, plan, month, jobId) {
      const m = monthOfAccount(accountId, month);
      if (m.async.has(jobId)) return month;
      const refused = queuedRefusal(plan, count(m.rendersUsed), m.async.size, clock.now());
      if (refused) throw refused;
      if (m.holders.has(jobId)) throw new Error(`job ${jobId} holds a running render's unit already`);
      m.rendersUsed = (m.rendersUsed ?? 0) + 1;
      m.async.add(jobId);
      return month;
    },

    async reserveQueued(accountId, plan, month, jobId) {
      const m = monthOfAccount(accountId, month);
      if (m.queued.has(jobId)) return month;
      const refused = refusal(plan, count(m.rendersUsed), 0);
      if (refused) throw refused;
      if (m.holders.has(jobId)) throw new Error(`job ${jobId} holds a running render's unit already`);
      m.rendersUsed = (m.rendersUsed ?? 0) + 1;
      m.queued.add(jobId);
      return month;
    },

    async releaseRender(accountId, month, jobId) {
      const m = peek(accountId, month);
      if (m && take(m, jobId)) m.rendersUsed = (m.rendersUsed ?? 0) - 1;
    },

    async recordRender(accountId, month, pdfBytes, renderMs, jobId) {
      const m = peek(accountId, month);
      if (!m || !take(m, jobId)) return;
      m.pdfBytes += pdfBytes;
      m.renderMs += renderMs;
    },

    async readUnits(accountId, month): Promise<UnitCounters> {
      const m = peek(accountId, month);
      return { rendersUsed: m?.rendersUsed, inFlight: m?.inFlight };
    },

    async setUnits(accountId, month, seen, next, holders = [], queuedHolders = [], asyncHolders = []) {
      const m = peek(accountId, month);
      // Absent counters (never written) are undefined on both sides.
      if (m?.rendersUsed !== seen.rendersUsed || m?.inFlight !== seen.inFlight) return false;
      const target = monthOfAccount(accountId, month);
      target.rendersUsed = next.rendersUsed;
      target.inFlight = next.inFlight;
      target.holders = new Set(holders);
      target.queued = new Set(queuedHolders);
      target.async = new Set(asyncHolders);
      return true;
    },
  };
};
